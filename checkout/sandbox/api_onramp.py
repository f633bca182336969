"""``/api/onramp/*`` (spec 4.1, upstream-notes 3): quotes, orders, OTP, confirm and push retry."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import re2
from flask import Blueprint, Response, current_app, jsonify, request, url_for
from flask.typing import ResponseReturnValue

from . import orders as flow
from . import pricing, reference, transfer
from .orders import OUTCOMES, Order, paginate
from .shapes import legacy_status, onramp_json
from .state import PUBLIC_BASE_ENVIRON, SANDBOX_MERCHANT_ID, current
from .validation import (
    BUY_SWAP_STATUSES,
    ONRAMP_ASSETS,
    ONRAMP_NETWORKS,
    PAYMENT_CHANNELS,
    WITHDRAWAL_STATUSES,
    Body,
    InvalidRequest,
    OrderNotAvailable,
    Query,
    check_address,
    check_memo,
)

bp = Blueprint("sandbox_onramp", __name__, url_prefix="/api/onramp")

ONRAMP_CHANNELS = ("bank", "mobile_money", "airtime")
_PHONE = re.compile(r"\+?[0-9]{7,15}")

P = ParamSpec("P")
R = TypeVar("R")


def priced(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Call a pricing function; its refusals (unknown corridor, outside limits) are 400s."""
    try:
        return fn(*args, **kwargs)
    except pricing.PricingError as exc:
        raise InvalidRequest(str(exc)) from None


def check_pair(network: str, asset: str) -> None:
    if not reference.is_onramp_pair(network, asset):
        raise InvalidRequest(f"asset {asset} is not available on network {network}")


def outcome_param(query: Query) -> str | None:
    """``sandboxOutcome``: the sandbox-only forced outcome a quote carries into its order."""
    return query.choice("sandboxOutcome", OUTCOMES)


def check_offer_fields(name: str, values: dict[str, str] | None,
                       descriptors: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Values for an offer's ``requiredFields``: every required one present, nothing unknown."""
    values = dict(values or {})
    unknown = sorted(set(values) - set(descriptors))
    if unknown:
        raise InvalidRequest(f"{name} has unknown field(s): {', '.join(unknown)}")
    for key, descriptor in descriptors.items():
        value = values.get(key)
        if value is None or value.strip() == "":
            if descriptor.get("required", True):
                raise InvalidRequest(f"{name}.{key} is required ({descriptor.get('label', key)})")
            continue
        if descriptor.get("type") == "enum":
            allowed = [option["value"] for option in descriptor.get("options", [])]
            if value not in allowed:
                raise InvalidRequest(f"{name}.{key} must be one of: {', '.join(allowed)}")
        elif descriptor.get("type") == "phone" and not _PHONE.fullmatch(value):
            raise InvalidRequest(f"{name}.{key} must be a phone number with its country code")
        pattern = descriptor.get("regexp")
        if pattern and not _test(pattern, descriptor.get("regexpFlags"), value):
            shape = f" (format {descriptor['format']})" if descriptor.get("format") else ""
            raise InvalidRequest(f"{name}.{key} has the wrong format: "
                                 f"{descriptor.get('label', key)} must match {pattern}{shape}")
    return values


def _test(pattern: str, flags: str | None, value: str) -> bool:
    """JavaScript's ``new RegExp(pattern, flags).test(value)``, as the upstream checks a field.

    re2, not ``re``: there ``$`` ends the text as in JavaScript, where ``re`` also takes it before
    a final line break ("0123456789\\n" would pass ``^[0-9]{10}$``).
    """
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = "i" not in (flags or "")
    options.dot_nl = "s" in (flags or "")
    if "m" in (flags or ""):
        pattern = f"(?m){pattern}"
    return re2.search(pattern, value, options) is not None


@bp.get("/best-offer")
def best_offer() -> ResponseReturnValue:
    """A single-use quote for an on-ramp order."""
    q = Query(request)
    network = q.choice("network", ONRAMP_NETWORKS, required=True)
    asset = q.choice("asset", ONRAMP_ASSETS, required=True)
    currency = q.choice("currency", ("local", "crypto"), required=True)
    amount = q.number("amount", required=True)
    country = q.country("countryIsoCode", required=True)
    channel = q.choice("paymentChannel", ONRAMP_CHANNELS, required=True)
    carrier = q.text("carrierCode")
    outcome = outcome_param(q)
    check_pair(network, asset)
    # The text as sent, so pricing checks its decimal places exactly (a float would blur them).
    priced_quote = priced(pricing.onramp_quote, network, asset, currency, q.text("amount"), country,
                          channel, carrier_code=carrier)
    params = {"network": network, "asset": asset, "currency": currency, "amount": amount,
              "countryIsoCode": country, "paymentChannel": channel, "carrierCode": carrier}
    quote = current().orders.add_quote("onramp", params, priced_quote["offer"],
                                       priced_quote["cashout"], outcome)
    return {"quoteId": quote.id, "offer": quote.offer, "cashout": quote.cashout}


@bp.get("/payment-channels")
def payment_channels() -> ResponseReturnValue:
    """Countries and their on-ramp payment channels."""
    return jsonify(reference.onramp_payment_channels_json())


@bp.get("/limits")
def limits() -> ResponseReturnValue:
    """Order limits of one corridor (all zero when it cannot be priced now)."""
    q = Query(request)
    network = q.choice("network", ONRAMP_NETWORKS, required=True)
    asset = q.choice("asset", ONRAMP_ASSETS)
    country = q.country("countryIsoCode", required=True)
    channel = q.choice("paymentChannel", ONRAMP_CHANNELS, required=True)
    carrier = q.text("carrierCode")
    if asset is not None:
        check_pair(network, asset)
    return priced(pricing.onramp_limits, network, country, channel, asset=asset,
                  carrier_code=carrier)


@bp.get("/assets")
def assets() -> ResponseReturnValue:
    """Network and asset pairs that can be bought."""
    return jsonify([pair.to_json() for pair in reference.ONRAMP_ASSETS])


def find_order(order_id: str | None, order_params: str | None) -> Order:
    """By ``orderId``, else the newest order made with ``orderParams``."""
    store = current().orders
    if order_id is None and order_params is None:
        raise InvalidRequest("orderId or orderParams is required")
    with store.lock:
        if order_id is not None:
            order = store.get(order_id, "onramp")
            if order_params is not None and order.data.get("orderParams") != order_params:
                raise OrderNotAvailable()
            return order
        matches = store.find("onramp", lambda o: o.data.get("orderParams") == order_params)
        if not matches:
            raise OrderNotAvailable()
        return max(matches, key=lambda o: o.sort_key)


@bp.get("/order")
def get_order() -> ResponseReturnValue:
    """One on-ramp order, by ``orderId`` or ``orderParams``."""
    q = Query(request)
    order = find_order(q.text("orderId"), q.text("orderParams"))
    with current().orders.lock:
        return onramp_json(current().orders, order)


def onramp_filters(q: Query, *, legacy: bool) -> list[Any]:
    """Predicates for the on-ramp list endpoints (4.1 and, under legacy names, 4.2)."""
    checks: list[Any] = []

    def equal(key: str, value: str | None, fold: bool = False) -> None:
        if value is None:
            return
        wanted = value.lower() if fold else value
        checks.append(lambda o: ((o.data.get(key) or "").lower() if fold else o.data.get(key)) == wanted)

    equal("network", q.choice("walletType" if legacy else "network", ONRAMP_NETWORKS))
    address = q.text("walletAddress" if legacy else "address")
    equal("address", address, fold=bool(address and address.startswith("0x")))
    equal("phoneNumber", q.text("userPhoneNumber"))
    equal("email", q.text("userEmail"), fold=True)
    if legacy:
        equal("provider", q.choice("swapProvider", ("bank_transfer", "mobile_money",
                                                                    "mpesa", "carrier")))
    else:
        equal("paymentChannel", q.choice("paymentChannel", PAYMENT_CHANNELS))
    buy = q.choice("buySwapStatus", BUY_SWAP_STATUSES)
    if buy is not None:
        checks.append(lambda o: legacy_status(o)[0] == buy)
    withdrawal = q.choice("withdrawalStatus", WITHDRAWAL_STATUSES)
    if withdrawal is not None:
        checks.append(lambda o: legacy_status(o)[1] == withdrawal)
    return checks


@bp.get("/orders")
def list_orders() -> ResponseReturnValue:
    """A page of on-ramp orders, newest first, with optional filters."""
    q = Query(request)
    limit = q.limit()
    cursor = q.text("cursor")
    checks = onramp_filters(q, legacy=False)
    store = current().orders
    with store.lock:
        matches = store.find("onramp", lambda o: all(check(o) for check in checks))
        page, next_cursor = paginate(matches, cursor, limit)
        return {"nextCursor": next_cursor, "list": [onramp_json(store, o) for o in page]}


@bp.post("/order/create")
def create_order() -> ResponseReturnValue:
    """Create an on-ramp order from a quote; the quote is used up."""
    body = Body(request, ("quoteId", "network", "amount", "currency", "asset", "address", "memo",
                          "email", "orderParams", "userIp", "redirectUrl", "extraFields",
                          "webhookUrl"))
    quote_id = body.text("quoteId", required=True)
    network = body.choice("network", ONRAMP_NETWORKS, required=True)
    amount = body.number("amount", required=True)
    currency = body.choice("currency", ("local", "crypto"), required=True)
    asset = body.choice("asset", ONRAMP_ASSETS, required=True)
    email = body.email("email", required=True)
    user_ip = body.ipv4("userIp", required=True)
    address = body.text("address", max_length=128)
    memo = check_memo(network, body.text("memo", max_length=64))
    order_params = body.text("orderParams", max_length=256)
    redirect_url = body.url("redirectUrl")
    webhook_url = body.url("webhookUrl")
    extra = body.mapping("extraFields")
    if address is not None:
        check_address("address", network, address)
    sandbox = current()
    store = sandbox.orders
    with store.lock:
        quote = store.peek_quote(quote_id, "onramp")
        fields = check_offer_fields("extraFields", extra, quote.offer.get("requiredFields") or {})
        quote = store.take_quote(quote_id, "onramp", name="quoteId", network=network, asset=asset,
                                 currency=currency, amount=amount)
        order = _new_order(quote, email=email, user_ip=user_ip, address=address, memo=memo,
                           order_params=order_params, redirect_url=redirect_url,
                           webhook_url=webhook_url, fields=fields)
        return onramp_json(store, order)


def _new_order(quote: Any, *, email: str, user_ip: str, address: str | None, memo: str | None,
               order_params: str | None, redirect_url: str | None, webhook_url: str | None,
               fields: dict[str, str]) -> Order:
    store = current().orders
    params, offer, cashout = quote.params, quote.offer, quote.cashout
    country, channel = params["countryIsoCode"], params["paymentChannel"]
    channel_ref = reference.onramp_channel(country, channel)
    carrier = (channel_ref.carrier(params["carrierCode"])
               if channel_ref and params["carrierCode"] else None)
    data: dict[str, Any] = {
        "email": email, "userIp": user_ip, "phoneNumber": fields.get("phoneNumber"),
        "extraFields": fields, "userId": reference.stable_id("user", email.lower()),
        "localCurrencyAmount": cashout["localCurrencyAmount"],
        "currencyIsoCode": offer["currencyIsoCode"], "countryIsoCode": country,
        "paymentChannel": channel, "amount": cashout["totalAmountUsd"],
        "withdrawAmountUsd": cashout["withdrawAmountUsd"],
        "amountCrypto": cashout["withdrawAmountCrypto"],
        "totalAmountCrypto": cashout["totalAmountCrypto"],
        "exchangeRate": offer["exchangeRate"], "network": params["network"],
        "asset": params["asset"], "address": address, "memo": memo, "orderParams": order_params,
        "carrierId": carrier.id if carrier else None, "redirectUrl": redirect_url,
        "provider": reference.legacy_provider_name(country, channel),
        "merchantId": SANDBOX_MERCHANT_ID, "sellerPhone": "2348000000001",
        "expiresAt": flow.iso(store.clock.due_at(flow.ONRAMP_UNPAID_TTL)),
        "buySwapId": flow.new_id(), "withdrawalId": flow.new_id(),
    }
    for key in ("feePercent", "feePercentService", "feePercentPartner", "feeAmountUsd",
                "feeAmountLocalCurrency", "feeAmountUsdService", "feeAmountLocalCurrencyService",
                "feeAmountUsdPartner", "feeAmountLocalCurrencyPartner", "gasAmountUsd",
                "gasAmountLocalCurrency"):
        data[key] = cashout.get(key)
    transfer_type = channel_ref.transfer_type if channel_ref else "manual"
    order = store.new_order("onramp", "swap_initiated", quote, webhook_url, data)
    order.data["resumeUrl"] = public_url("sandbox_orders.resume", order_id=order.id)
    payment_url = (public_url("sandbox_orders.pay_page", order_id=order.id)
                   if transfer_type == "redirect" else None)
    transfer.start(store, order, transfer_type, payment_url)
    flow.onramp_start(store, order)
    return order


def public_url(endpoint: str, **values: Any) -> str:
    """An absolute URL of a sandbox page, at the address browsers use.

    ``SANDBOX_PUBLIC_URL`` when set; else, embedded in a checkout, where that checkout serves the
    sandbox's pages (it says so in the environ of each call, see ``PUBLIC_BASE_ENVIRON``); else
    this request's own host, right for a sandbox run on its own.
    """
    base: str | None = (current_app.config.get("SANDBOX_PUBLIC_URL")
                        or request.environ.get(PUBLIC_BASE_ENVIRON))
    if not base:
        return url_for(endpoint, _external=True, **values)
    return base.rstrip("/") + url_for(endpoint, **values)


def _order_id_body(extra: tuple[str, ...] = ()) -> tuple[Body, str]:
    body = Body(request, ("orderId", *extra))
    order_id = body.text("orderId", required=True)
    return body, order_id


@bp.post("/order/otp")
def submit_otp() -> ResponseReturnValue:
    """Check the code the user received; on success the payment push is sent. Returns the order."""
    body, order_id = _order_id_body(("otp",))
    otp = body.text("otp", required=True, max_length=12)
    store = current().orders
    order = transfer.submit_otp(store, order_id, otp)
    with store.lock:
        return onramp_json(store, order)


@bp.post("/order/confirm")
def confirm() -> ResponseReturnValue:
    """The user says the money has been sent: 200 with the JSON string ``"order confirmed"``."""
    _, order_id = _order_id_body()
    transfer.confirm(current().orders, order_id)
    return Response('"order confirmed"', status=200, mimetype="application/json")


@bp.post("/order/retry")
def retry_push() -> ResponseReturnValue:
    """Send the payment push to the phone again (stk_push, otp_stk_push). Returns the order."""
    _, order_id = _order_id_body()
    store = current().orders
    order = transfer.retry_push(store, order_id)
    with store.lock:
        return onramp_json(store, order)
