"""``/api/offramp/*``: the channel-based family (spec 4.3) and the type-based variant (4.4, notes 5).

Both variants share ``/best-offer``, ``/limits``, ``/orders`` and ``/order/<id>``. A request that
carries the type-based parameters (``type`` or ``country``) is the type-based variant; otherwise it is
channel-based (``paymentChannel``, ``countryIsoCode``). ``/orders`` lists the orders of both variants;
``paymentType`` and ``offrampType`` narrow it to type-based orders.

The spec gives the channel-based family no create endpoint, so the sandbox adds none under ``/api``;
tests and demos create such orders with ``POST /sandbox/offramp/orders`` (see
:func:`create_channel_order`).
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from . import orders as flow
from . import payees, pricing, reference
from .api_onramp import check_offer_fields, outcome_param, priced
from .orders import OFFRAMP_STATUSES, Order, OrderStore, Quote, paginate
from .shapes import offramp_json
from .state import current
from .validation import (
    OFFRAMP_TYPES,
    ONRAMP_ASSETS,
    ONRAMP_NETWORKS,
    PAYMENT_CHANNELS,
    PAYMENT_TYPES,
    Body,
    InvalidRequest,
    Query,
    check_address,
    check_transaction_hash,
)

bp = Blueprint("sandbox_offramp", __name__, url_prefix="/api/offramp")

# Spec 2.1 lists `local` and a USD value (`usd`) for off-ramp amounts; `crypto` is not listed, so it
# is refused here, as an input the upstream does not document would be.
OFFRAMP_CURRENCIES = ("local", "usd")
VIRTUAL_WALLET_FUNDING_DELAY = 5    # sandbox seconds before a merchant's virtual wallet pays


def _typed(q: Query) -> bool:
    return q.text("type") is not None or q.text("country") is not None


def _check_pair(network: str, asset: str) -> None:
    if not reference.is_offramp_pair(network, asset):
        raise InvalidRequest(f"asset {asset} is not available for off-ramp on network {network}")


@bp.get("/best-offer")
def best_offer() -> ResponseReturnValue:
    """A single-use quote (channel-based) or offer (type-based) for an off-ramp order."""
    q = Query(request)
    typed = _typed(q)
    amount = q.number("amount", required=True)
    currency = q.choice("currency", OFFRAMP_CURRENCIES, required=True)
    country = q.country("country" if typed else "countryIsoCode", required=True)
    channel = q.choice("type" if typed else "paymentChannel",
                       OFFRAMP_TYPES if typed else PAYMENT_CHANNELS, required=True)
    network = q.choice("network", ONRAMP_NETWORKS, required=True)
    asset = q.choice("asset", ONRAMP_ASSETS, required=True)
    outcome = outcome_param(q)
    _check_pair(network, asset)
    quote_fn = pricing.offramp_typed_quote if typed else pricing.offramp_quote
    priced_quote = priced(quote_fn, network, asset, currency, q.text("amount"), country, channel)
    params = {"network": network, "asset": asset, "currency": currency, "amount": amount,
              "countryIsoCode": country, "channel": channel}
    quote = current().orders.add_quote("offramp_typed" if typed else "offramp", params,
                                       priced_quote["offer"], priced_quote["cashout"], outcome)
    if typed:
        return {"offer": {"_id": quote.id, **quote.offer}, "cashout": quote.cashout}
    return {"quoteId": quote.id, "offer": quote.offer, "cashout": quote.cashout}


@bp.get("/payment-channels")
def payment_channels() -> ResponseReturnValue:
    """Countries and their off-ramp payment channels (channel-based)."""
    return jsonify(reference.offramp_payment_channels_json())


@bp.get("/countries")
def countries() -> ResponseReturnValue:
    """Countries and their off-ramp types (type-based)."""
    return jsonify(reference.offramp_countries_json())


@bp.get("/assets")
def assets() -> ResponseReturnValue:
    """Network and asset pairs that can be sold (channel-based)."""
    return jsonify([pair.to_json() for pair in reference.OFFRAMP_ASSETS])


@bp.get("/wallets")
def wallets() -> ResponseReturnValue:
    """Network and asset pairs that can be sold (type-based)."""
    return jsonify([pair.to_json() for pair in reference.OFFRAMP_ASSETS])


@bp.get("/limits")
def limits() -> ResponseReturnValue:
    """Limits with fees applied, of a channel (channel-based) or a type (type-based)."""
    q = Query(request)
    if _typed(q):
        offramp_type = q.choice("type", OFFRAMP_TYPES, required=True)
        country = q.country("country", required=True)
        return priced(pricing.offramp_typed_limits, offramp_type, country)
    channel = q.choice("paymentChannel", PAYMENT_CHANNELS, required=True)
    country = q.country("countryIsoCode", required=True)
    network = q.choice("network", ONRAMP_NETWORKS, required=True)
    asset = q.choice("asset", ONRAMP_ASSETS, required=True)
    _check_pair(network, asset)
    return priced(pricing.offramp_limits, network, asset, country, channel)


@bp.get("/order/<order_id>")
def get_order(order_id: str) -> ResponseReturnValue:
    """One off-ramp order of either variant."""
    store = current().orders
    with store.lock:
        return offramp_json(store.get(order_id, "offramp"))


@bp.get("/orders")
def list_orders() -> ResponseReturnValue:
    """A page of off-ramp orders, newest first, with optional filters."""
    q = Query(request)
    limit = q.limit()
    cursor = q.text("cursor")
    wanted: dict[str, str] = {}
    for param, key in (("fromAddress", "fromAddress"), ("userPhoneNumber", "userPhoneNumber"),
                       ("userEmail", "userEmail"), ("hash", "hash"), ("orderParams", "orderParams")):
        value = q.text(param)
        if value is not None:
            wanted[key] = value
    for param, key, allowed in (("network", "network", ONRAMP_NETWORKS),
                                ("asset", "asset", ONRAMP_ASSETS),
                                ("paymentChannel", "paymentChannel", PAYMENT_CHANNELS),
                                ("paymentType", "paymentType", PAYMENT_TYPES),
                                ("offrampType", "offrampType", OFFRAMP_TYPES)):
        value = q.choice(param, allowed)
        if value is not None:
            wanted[key] = value
    country = q.country("countryIsoCode")
    if country is not None:
        wanted["countryIsoCode"] = country
    status = q.choice("status", OFFRAMP_STATUSES)
    # Addresses, hashes and emails compare without case: 0xAB.. and 0xab.. are the same account.
    folded = {"fromAddress", "hash", "userEmail"}

    def matches(order: Order) -> bool:
        if status is not None and order.status != status:
            return False
        for key, value in wanted.items():
            have = order.data.get(key)
            if have is None:
                return False
            if key in folded:
                if have.lower() != value.lower():
                    return False
            elif have != value:
                return False
        return True

    store = current().orders
    with store.lock:
        page, next_cursor = paginate(store.find("offramp", matches), cursor, limit)
        return {"list": [offramp_json(o, listed=True) for o in page], "nextCursor": next_cursor}


def _deposit_address(order_seed: str) -> str:
    """The sandbox's receiving wallet for one order (EVM: every off-ramp network is EVM)."""
    return "0x" + hashlib.sha256(f"deposit:{order_seed}".encode()).hexdigest()[:40]


def _payee(quote: Quote, fields: dict[str, str]) -> str | None:
    """The account holder's name for the quote's corridor (None: not verifiable); 400: no account."""
    params = quote.params
    channel = reference.offramp_channel(params["countryIsoCode"], params["channel"])
    assert channel is not None          # the quote was priced for this corridor
    return payees.check_payee(channel.channel, fields, quote.offer.get("requiredFields") or {},
                              channel.name, params["countryIsoCode"])


def _checked_fields(quote: Quote, values: dict[str, str] | None) -> dict[str, str]:
    """An order's field values: valid for the offer, and naming an account that exists."""
    fields = check_offer_fields("requiredFields", values, quote.offer.get("requiredFields") or {})
    _payee(quote, fields)
    return fields


def _display_fields(descriptors: dict[str, dict[str, Any]], values: dict[str, str]
                    ) -> list[dict[str, str]]:
    shown = []
    for key, value in values.items():
        descriptor = descriptors[key]
        display = value
        for option in descriptor.get("options", []):
            if option["value"] == value:
                display = option["label"]
        shown.append({"label": descriptor.get("label", key), "type": descriptor.get("type", "string"),
                      "value": display})
    return shown


def _new_order(quote: Quote, *, address: str, fields: dict[str, str], email: str | None,
               order_params: str | None, webhook_url: str | None,
               typed: dict[str, Any] | None) -> Order:
    """Store an off-ramp order from a used-up quote (call under the store's lock)."""
    store = current().orders
    params, offer = quote.params, quote.offer
    descriptors = offer.get("requiredFields") or {}
    data: dict[str, Any] = {
        "network": params["network"], "asset": params["asset"],
        "exchangeRate": offer["exchangeRate"], "cashout": dict(quote.cashout),
        "fromAddress": address, "toAddress": _deposit_address(quote.id + os.urandom(8).hex()),
        "expiresAt": flow.iso(store.clock.due_at(flow.OFFRAMP_UNPAID_TTL)),
        "requiredFields": fields, "countryIsoCode": offer["countryIsoCode"],
        "currencyIsoCode": offer["currencyIsoCode"],
        "offerRequiredFields": _display_fields(descriptors, fields),
        "userPhoneNumber": fields.get("phoneNumber"), "userEmail": email,
        "orderParams": order_params,
        "userId": reference.stable_id("user", (email or address).lower()),
    }
    if typed is None:
        data["paymentChannel"] = params["channel"]
    else:
        data.update(typed, offrampType=params["channel"])
    order = store.new_order("offramp", "initiated", quote, webhook_url, data)
    flow.offramp_start(store, order)
    if data.get("paymentType") == "VIRTUAL_WALLET":
        # Paid from the merchant's balance: no user transfer to wait for.
        store.schedule(order, "funding", VIRTUAL_WALLET_FUNDING_DELAY,
                       lambda o: _virtual_wallet_pays(store, o))
    return order


def _virtual_wallet_pays(store: OrderStore, order: Order) -> None:
    if order.status == "initiated":
        flow.offramp_deposit_sent(store, order,
                                  flow.fake_transaction_hash(order.data["network"]))


@bp.post("/create-order")
def create_order() -> ResponseReturnValue:
    """Create a type-based off-ramp order from an offer; the offer is used up."""
    body = Body(request, ("offerId", "paymentType", "network", "asset", "address", "currency",
                          "amount", "ip", "orderParams", "requiredFields", "webhookUrl"))
    offer_id = body.text("offerId", required=True)
    payment_type = body.choice("paymentType", PAYMENT_TYPES, required=True)
    network = body.choice("network", ONRAMP_NETWORKS, required=True)
    asset = body.choice("asset", ONRAMP_ASSETS, required=True)
    address = body.text("address", required=True, max_length=128)
    currency = body.choice("currency", OFFRAMP_CURRENCIES, required=True)
    amount = body.number("amount", required=True)
    ip = body.ipv4("ip")
    order_params = body.text("orderParams", max_length=256)
    values = body.mapping("requiredFields")
    webhook_url = body.url("webhookUrl")
    check_address("address", network, address)
    store = current().orders
    with store.lock:
        quote = store.peek_quote(offer_id, "offramp_typed", name="offerId")
        fields = _checked_fields(quote, values)
        quote = store.take_quote(offer_id, "offramp_typed", name="offerId", network=network,
                                 asset=asset, currency=currency, amount=amount)
        order = _new_order(quote, address=address, fields=fields, email=None,
                           order_params=order_params, webhook_url=webhook_url,
                           typed={"offerId": offer_id, "paymentType": payment_type, "ip": ip})
        return offramp_json(order)


def create_channel_order() -> ResponseReturnValue:
    """``POST /sandbox/offramp/orders``: a channel-based order from a ``quoteId`` (sandbox only)."""
    body = Body(request, ("quoteId", "network", "asset", "address", "currency", "amount",
                          "requiredFields", "email", "orderParams", "webhookUrl"))
    quote_id = body.text("quoteId", required=True)
    network = body.choice("network", ONRAMP_NETWORKS, required=True)
    asset = body.choice("asset", ONRAMP_ASSETS, required=True)
    address = body.text("address", required=True, max_length=128)
    currency = body.choice("currency", OFFRAMP_CURRENCIES, required=True)
    amount = body.number("amount", required=True)
    values = body.mapping("requiredFields")
    email = body.email("email")
    order_params = body.text("orderParams", max_length=256)
    webhook_url = body.url("webhookUrl")
    check_address("address", network, address)
    store = current().orders
    with store.lock:
        quote = store.peek_quote(quote_id, "offramp")
        fields = _checked_fields(quote, values)
        quote = store.take_quote(quote_id, "offramp", name="quoteId", network=network, asset=asset,
                                 currency=currency, amount=amount)
        order = _new_order(quote, address=address, fields=fields, email=email,
                           order_params=order_params, webhook_url=webhook_url, typed=None)
        return offramp_json(order)


@bp.post("/confirm-order")
def confirm_order() -> ResponseReturnValue:
    """The user sent the crypto: record its hash (only while ``initiated``). Returns the order."""
    body = Body(request, ("orderId", "hash"))
    order_id = body.text("orderId", required=True)
    tx_hash = check_transaction_hash("hash", body.text("hash", required=True) or "")
    store = current().orders
    with store.lock:
        order = store.get(order_id, "offramp")
        if order.data.get("paymentType") == "VIRTUAL_WALLET":
            # The merchant's balance pays it: no transfer of the user's is waited for.
            raise InvalidRequest("the order is paid from the merchant's balance and takes no "
                                 "transaction hash")
        flow.offramp_deposit_sent(store, order, tx_hash)
        return offramp_json(order)


@bp.post("/validate-fields")
def validate_fields() -> ResponseReturnValue:
    """Check an offer's field values and show what they resolve to, with the holder when known.

    Three answers (see :mod:`.payees`): the fields plus an ``Account name`` detail; the fields
    alone (the holder cannot be checked); or 400 when the account does not exist.
    """
    body = Body(request, ("offerId", "requiredFields"))
    offer_id = body.text("offerId", required=True)
    values = body.mapping("requiredFields", required=True)
    store = current().orders
    with store.lock:
        quote = store.peek_quote(offer_id, "offramp_typed", name="offerId")
    descriptors = quote.offer.get("requiredFields") or {}
    fields = check_offer_fields("requiredFields", values, descriptors)
    holder = _payee(quote, fields)
    details = [{"label": shown["label"], "value": shown["value"]}
               for shown in _display_fields(descriptors, fields)]
    if holder is not None:
        details.append({"label": payees.HOLDER_LABEL, "value": holder})
    return {"details": details}
