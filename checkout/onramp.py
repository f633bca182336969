"""The on-ramp checkout's domain steps: quotes kept in the session, and creating the one order.

Creating is idempotent. ``SessionStore.claim_order_creation`` is an owned compare-and-set in the
database: a double click, a retried request, a second tab or a second device gets no second claim
while one creation runs, and none at all once an order is attached.

Before the create call is sent, the session records a *pending attempt* (what is sent, and when).
From then on no create is sent for the session, automatically or by the user, until the attempt is
settled: by the upstream's answer, by finding the order in a lookup, or by a lookup that still finds
nothing once ``CHECKOUT_CREATE_GRACE`` seconds have passed (the user then reviews a fresh quote and
may try again). Meanwhile the pages say the order is being confirmed and only look it up.

The create is sent with exactly what the review showed: the review form carries a digest
(``review_digest``) of that payload, recomputed from the session after the claim is taken; the
address and memo are validated again for the network being sent.

``orderParams`` is the merchant's own reference from the launch token when there is one, else a
random checkout reference per attempt kept in the session (never the session id: that id opens the
session).
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Callable

from flask import current_app, request, url_for
from flask_babel import gettext as _
from werkzeug.routing import BuildError

from .addresses import AddressError, network_has_memo, validate_address, validate_memo
from .errors import (OrderNotAvailable, QuoteExpired, UpstreamError, UpstreamRejected)
from .sessions import CheckoutSession
from .state import get_state
from .upstream.types import OnrampOrder, OnrampQuote, RequiredField, required_fields_from_json

log = logging.getLogger("checkout.onramp")

# Steps of the flow, in order; ``session.step`` holds the furthest one reached.
STEPS = ("choose", "wallet", "details", "review", "pay", "status")
QUOTE_KEYS = ("network", "asset", "currency", "amount", "countryIsoCode", "paymentChannel",
              "carrierCode")


def quote_max_age() -> float:
    """Seconds a shown price is trusted: the upstream's quotes live about ten minutes
    (upstream-notes 6), ours are renewed well before (``CHECKOUT_QUOTE_MAX_AGE``)."""
    return float(current_app.config["CHECKOUT_QUOTE_MAX_AGE"])


# -- session data ---------------------------------------------------------------------------------

def update_session(session_id: str, change: Callable[[CheckoutSession], Any]) -> CheckoutSession:
    """Apply ``change`` to the stored session (see :meth:`SessionStore.update`)."""
    return get_state().sessions.update(session_id, change)


def normalise_params(values: dict[str, Any]) -> dict[str, Any]:
    """Quote parameters in one spelling, so that 5000, "5000" and "5000.00" ask the same quote."""
    params = {key: values.get(key) or None for key in QUOTE_KEYS}
    if params["amount"] is not None:
        try:
            params["amount"] = format(Decimal(str(params["amount"])).normalize(), "f")
        except ArithmeticError:
            params["amount"] = None
    return params


def quote_params(session: CheckoutSession) -> dict[str, Any]:
    """What a quote for this session is asked with (the chosen corridor and amount)."""
    return normalise_params({key: session.value(key) for key in QUOTE_KEYS})


def request_quote(params: dict[str, Any]) -> OnrampQuote:
    """One upstream call: the best offer for ``params``."""
    return get_state().upstream.onramp_best_offer(
        network=params["network"], asset=params["asset"], currency=params["currency"],
        amount=Decimal(str(params["amount"])), country_iso_code=params["countryIsoCode"],
        payment_channel=params["paymentChannel"], carrier_code=params.get("carrierCode") or None)


def quote_record(quote: OnrampQuote, params: dict[str, Any]) -> dict[str, Any]:
    """The JSON kept in the session: enough to show the price again and to create the order."""
    return {
        "id": quote.quote_id,
        "fetched_at": time.time(),
        "params": normalise_params(params),
        "offer": {key: value for key, value in quote.offer.raw.items() if key != "requiredFields"},
        "requiredFields": quote.offer.raw.get("requiredFields") or {},
        "cashout": dict(quote.cashout.raw),
    }


def stored_quote(session: CheckoutSession) -> dict[str, Any] | None:
    return session.data.get("quote")


def quote_is_current(session: CheckoutSession) -> bool:
    """The stored quote was asked with today's choices and is young enough to be honoured."""
    quote = stored_quote(session)
    if not quote:
        return False
    young = time.time() - float(quote.get("fetched_at", 0)) < quote_max_age()
    return young and quote.get("params") == quote_params(session)


def required_fields(session: CheckoutSession) -> list[RequiredField]:
    quote = stored_quote(session) or {}
    return required_fields_from_json(quote.get("requiredFields") or {})


@dataclass(frozen=True)
class Breakdown:
    """The price of a quote as the pages show it: what is paid, what is received, every fee."""

    currency: str
    asset: str
    pay_local: Decimal | None
    receive_crypto: Decimal | None
    exchange_rate: Decimal | None           # local currency per US dollar
    crypto_exchange_rate: Decimal | None    # local currency per unit of the asset
    fee_service: Decimal | None
    fee_partner: Decimal | None
    fee_total: Decimal | None
    gas: Decimal | None
    fee_percent: Decimal | None

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "Breakdown":
        cashout, offer = record.get("cashout") or {}, record.get("offer") or {}

        def number(source: dict[str, Any], key: str) -> Decimal | None:
            value = source.get(key)
            return None if value is None else Decimal(str(value))

        return cls(
            currency=offer.get("currencyIsoCode") or "",
            asset=(record.get("params") or {}).get("asset") or "",
            pay_local=number(cashout, "localCurrencyAmount"),
            receive_crypto=number(cashout, "withdrawAmountCrypto"),
            exchange_rate=number(offer, "exchangeRate"),
            crypto_exchange_rate=number(offer, "cryptoExchangeRate"),
            fee_service=number(cashout, "feeAmountLocalCurrencyService"),
            fee_partner=number(cashout, "feeAmountLocalCurrencyPartner"),
            fee_total=number(cashout, "feeAmountLocalCurrency"),
            gas=number(cashout, "gasAmountLocalCurrency"),
            fee_percent=number(cashout, "feePercent"),
        )


# -- creating the order ---------------------------------------------------------------------------

CREATED_SKEW = timedelta(seconds=5)  # an order's creation date may be this much before our clock's
LOOKUP_PAGE = 50                   # orders read from the list when the merchant's reference repeats


def create_grace() -> float:
    """Seconds after an unanswered create during which the order is only looked up, never created
    again: the upstream may still be processing it (``CHECKOUT_CREATE_GRACE``)."""
    return float(current_app.config["CHECKOUT_CREATE_GRACE"])


def creation_lease() -> timedelta:
    """How long a claim protects a create in flight: longer than any create call can last (the
    grace period, plus a margin), so a slow create is never overtaken by a second one."""
    return timedelta(seconds=create_grace()) + timedelta(minutes=1)


@dataclass
class CreateResult:
    """What came of one attempt to create the session's order.

    ``kind`` is ``created`` (now or before), ``busy`` (another request holds the claim),
    ``requote`` (the quote expired: a new one is stored, the user must confirm the new price),
    ``rejected`` (the upstream said no; ``message`` says why), ``changed`` (the details differ from
    the reviewed ones), ``invalid`` (the address or memo does not hold for the network; ``field``
    and ``message`` say which), ``confirming`` (a create may have reached the upstream: it is only
    looked up until settled) or ``retry`` (the grace period passed and no order was found: a fresh
    quote is stored, the user may confirm again).
    """

    kind: str
    order_id: str | None = None
    message: str | None = None
    field: str | None = None


def order_params(session: CheckoutSession) -> str:
    """The reference the order is created (and later found) with."""
    return str(session.claims.get("orderParams") or session.data.get("orderParams"))


def _new_reference() -> str:
    return "chk_" + secrets.token_hex(12)


def ensure_order_params(session_id: str) -> CheckoutSession:
    """Give the session its checkout reference before any create call can be made."""

    def change(session: CheckoutSession) -> bool:
        if session.claims.get("orderParams") or session.data.get("orderParams"):
            return False
        session.data["orderParams"] = _new_reference()
        return True

    return update_session(session_id, change)


def short_id(session_id: str) -> str:
    """A session's name in logs: the id itself opens the session, so it is never logged."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:12]


# -- what the review showed -----------------------------------------------------------------------

def create_payload(session: CheckoutSession) -> dict[str, Any]:
    """Exactly what a create sends for the user's choices (the stored quote and the wallet)."""
    quote = stored_quote(session) or {}
    params = quote.get("params") or {}
    return {
        "quoteId": quote.get("id"), "network": params.get("network"), "asset": params.get("asset"),
        "amount": params.get("amount"), "currency": params.get("currency"),
        "countryIsoCode": params.get("countryIsoCode"),
        "paymentChannel": params.get("paymentChannel"), "carrierCode": params.get("carrierCode"),
        "address": session.value("address"), "memo": session.value("memo") or None,
        "email": session.value("email"), "extraFields": session.data.get("extraFields") or {},
    }


def _digest_key() -> bytes:
    # A key of its own, derived with a label, so a digest can never stand for a launch token.
    secret = current_app.config["CHECKOUT_LAUNCH_SECRET"]
    raw = secret.encode() if isinstance(secret, str) else bytes(secret)
    return hmac.new(raw, b"checkout review digest v1", hashlib.sha256).digest()


def review_digest(session: CheckoutSession) -> str:
    """HMAC-SHA256 of the canonical JSON of ``create_payload``: the review form carries it, and a
    create proceeds only when the session still gives the same one."""
    canonical = json.dumps(create_payload(session), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, default=str)
    return hmac.new(_digest_key(), canonical.encode(), hashlib.sha256).hexdigest()


def wallet_problem(session: CheckoutSession) -> tuple[str, str] | None:
    """(field, message) when the address or memo does not hold for the network a create would
    send, or were validated for another network; None when they may be sent."""
    network = (create_payload(session)["network"] or session.value("network") or "")
    checked_for = session.data.get("addressNetwork")
    if checked_for is None:
        return "address", _("Check the wallet address for %(network)s.", network=network.title())
    if checked_for != network:
        return "address", _("Your network changed. Enter the wallet address for %(network)s.",
                            network=network.title())
    address = session.value("address")
    try:
        if not address or validate_address(network, str(address)) != address:
            return "address", _("Check the wallet address for %(network)s.",
                                network=network.title())
    except AddressError as exc:
        return "address", str(exc)
    memo = session.value("memo") or None
    try:
        if memo is not None and validate_memo(network, str(memo)) != memo:
            return "memo", _("Check the memo.")
    except AddressError as exc:
        # A memo set by the shop for a network without memos must not be dropped silently: the
        # shop may rely on it to credit the user.
        return ("memo" if network_has_memo(network) else "address"), str(exc)
    return None


# -- finding an order whose create had no answer -------------------------------------------------

def _webhook_url() -> str | None:
    # Only the embedded sandbox is told where to deliver; a real merchant registers its webhook
    # URL in the upstream's dashboard (spec 6.1).
    if get_state().sandbox is None:
        return None
    try:
        return url_for("checkout.webhooks", _external=True)
    except BuildError:
        return None


def _user_ip() -> str:
    """The user's IPv4 address (the upstream takes IPv4 only).

    ``request.remote_addr`` is the client only when the host app sits behind a proxy it has told
    Flask about (werkzeug's ProxyFix): that is the host's deployment, documented in the README. An
    IPv6-only client is sent as ``0.0.0.0`` (unknown) rather than as someone else's address.
    """
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        return "0.0.0.0"
    if isinstance(address, ipaddress.IPv6Address):
        address = address.ipv4_mapped or ipaddress.IPv4Address(0)
    return str(address)


def _same_address(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    # EVM addresses differ only by their checksum's letter case; other networks' are exact.
    return a == b or (a.startswith("0x") and a.lower() == b.lower())


def _same_amount(value: Decimal | None, expected: Any) -> bool:
    try:
        return value is not None and value == Decimal(str(expected))
    except ArithmeticError:
        return False


def _matches(order: OnrampOrder, pending: dict[str, Any]) -> bool:
    """Whether ``order`` is the one our pending attempt sent. Merchants reuse their reference across
    users and attempts, so the reference alone proves nothing: every field sent must agree, and the
    order must be no older than the attempt."""
    sent = pending.get("sent") or {}
    if order.network != sent.get("network") or order.asset != sent.get("asset"):
        return False
    if not _same_address(order.address, sent.get("address")):
        return False
    if order.email and str(order.email).lower() != str(sent.get("email") or "").lower():
        return False
    amount = order.amount_crypto if sent.get("currency") == "crypto" else \
        order.local_currency_amount
    if not (_same_amount(amount, sent.get("amount"))
            or (pending.get("quoted") is not None and _same_amount(amount, pending["quoted"]))):
        return False
    created = order.created_at or order.date
    started = datetime.fromtimestamp(float(pending.get("at") or 0), tz=timezone.utc)
    return created is not None and created >= started - CREATED_SKEW


@dataclass
class Lookup:
    order: OnrampOrder | None = None
    ambiguous: bool = False


def find_created_order(session: CheckoutSession) -> Lookup:
    """Look for the order of the session's pending attempt: by its reference, and through the
    orders list when the reference is the merchant's (it may name many orders)."""
    pending = session.data.get("pending_create") or {}
    reference = pending.get("ref") or order_params(session)
    client = get_state().upstream
    found: dict[str, OnrampOrder] = {}
    try:
        order = client.onramp_order(order_params=reference)
        found[order.id] = order
    except OrderNotAvailable:
        pass
    if session.claims.get("orderParams"):
        sent = pending.get("sent") or {}
        page = client.onramp_orders(limit=LOOKUP_PAGE, network=sent.get("network"),
                                    address=sent.get("address"), user_email=sent.get("email"))
        for order in page:
            if order.order_params in (None, reference):
                found.setdefault(order.id, order)
    store = get_state().sessions
    candidates = []
    for order in found.values():
        if not _matches(order, pending):
            continue
        owner = store.get_by_order(order.id)
        if owner is not None and owner.id != session.id:
            continue        # another session's order, made with the same reference
        candidates.append(order)
    if len(candidates) > 1:
        log.warning("%d orders match the unanswered create of session %s: not adopting any (%s)",
                    len(candidates), short_id(session.id), ", ".join(o.id for o in candidates))
        return Lookup(ambiguous=True)
    return Lookup(order=candidates[0] if candidates else None)


def _attach(session: CheckoutSession, order: OnrampOrder) -> CreateResult:
    attached = get_state().sessions.attach_order(session.id, order.id, step="pay", data_update={
        "order": {"id": order.id, "resumeUrl": order.resume_url,
                  "transferType": order.transfer_instructions.type
                  if order.transfer_instructions else None},
        "pending_create": None,
    })
    if attached is None:
        log.error("orphaned on-ramp order %s: session %s no longer exists", order.id,
                  short_id(session.id))
        return CreateResult("busy")
    if attached != order.id:
        # Two orders upstream for one session: the first attached stays; the other needs a person.
        log.error("orphaned on-ramp order %s: session %s already has order %s",
                  order.id, short_id(session.id), attached)
        return CreateResult("created", order_id=attached)
    log.info("on-ramp order attached to a checkout session")
    return CreateResult("created", order_id=order.id)


# -- the create itself ----------------------------------------------------------------------------

def create_order(session: CheckoutSession, digest: str | None) -> CreateResult:
    """Create the session's one order from what the review showed (see the module docstring)."""
    state = get_state()
    if session.order_id:
        return CreateResult("created", order_id=session.order_id)
    session = ensure_order_params(session.id)
    owner = state.sessions.claim_order_creation(session.id, creation_lease())
    if owner is None:
        fresh = state.sessions.get(session.id)
        if fresh is not None and fresh.order_id:
            return CreateResult("created", order_id=fresh.order_id)
        return CreateResult("busy")
    try:
        return _create_claimed(session.id, digest)
    finally:
        # Whatever happened, the claim is given back (a no-op when the order was attached): the
        # pending attempt, not the claim, is what keeps a second create from being sent.
        state.sessions.release_order_creation(session.id, owner)


def _create_claimed(session_id: str, digest: str | None) -> CreateResult:
    session = get_state().sessions.get(session_id)   # the claim bumped the version: reload
    if session is None:
        return CreateResult("busy")
    if session.order_id:
        return CreateResult("created", order_id=session.order_id)
    if session.data.get("pending_create"):
        # An earlier create may have reached the upstream: only look it up.
        return settle_pending(session)
    if digest is None or not hmac.compare_digest(digest.encode(), review_digest(session).encode()):
        return CreateResult("changed")
    problem = wallet_problem(session)
    if problem is not None:
        return CreateResult("invalid", field=problem[0], message=problem[1])
    payload = create_payload(session)
    cashout = (stored_quote(session) or {}).get("cashout") or {}
    pending = {"at": time.time(), "ref": order_params(session),
               "sent": {key: payload[key] for key in
                        ("network", "asset", "address", "email", "amount", "currency")},
               # The same amount as the quote worked it out, in case the order repeats that.
               "quoted": cashout.get("withdrawAmountCrypto" if payload["currency"] == "crypto"
                                     else "localCurrencyAmount")}
    session = update_session(session.id, lambda s: s.data.__setitem__("pending_create", pending))
    try:
        order = _create(session, payload)
    except QuoteExpired:
        _forget_attempt(session.id)
        return CreateResult("requote")
    except UpstreamRejected as exc:
        _forget_attempt(session.id)
        return CreateResult("rejected", message=exc.message)
    except UpstreamError as exc:
        log.warning("order creation outcome unknown for session %s: %r",
                    short_id(session.id), exc)
        return settle_pending(session)
    return _attach(session, order)


def _forget_attempt(session_id: str) -> None:
    """The upstream answered no: nothing was created, the user may try again."""
    update_session(session_id, lambda s: s.data.__setitem__("pending_create", None))


def _create(session: CheckoutSession, payload: dict[str, Any]) -> OnrampOrder:
    return get_state().upstream.onramp_create_order(
        quote_id=payload["quoteId"], network=payload["network"], asset=payload["asset"],
        amount=Decimal(str(payload["amount"])), currency=payload["currency"],
        email=payload["email"], user_ip=_user_ip(), address=payload["address"],
        memo=payload["memo"], order_params=order_params(session),
        redirect_url=url_for("checkout.payment_return", session_id=session.id, _external=True),
        extra_fields=payload["extraFields"] or None, webhook_url=_webhook_url(),
    )


def pending_since(session: CheckoutSession) -> float | None:
    """When the session's unsettled create was sent (epoch seconds), if there is one."""
    pending = session.data.get("pending_create")
    return float(pending.get("at") or 0) if pending else None


def settle_pending(session: CheckoutSession) -> CreateResult:
    """Look up the order of an unanswered create; never sends a create.

    ``created`` when found, ``confirming`` while it may still appear, ``retry`` when the grace
    period is over and it was not found: the attempt is forgotten, the reference renewed (when it is
    ours) and the quote dropped, so the user reviews a fresh quote before any new create.
    """
    started = pending_since(session)
    if started is None:
        return CreateResult("created", order_id=session.order_id) if session.order_id \
            else CreateResult("retry")
    try:
        lookup = find_created_order(session)
    except UpstreamError as exc:
        log.warning("order lookup for session %s failed: %r", short_id(session.id), exc)
        return CreateResult("confirming")
    if lookup.order is not None:
        return _attach(session, lookup.order)
    if lookup.ambiguous or time.time() - started < create_grace():
        return CreateResult("confirming")

    def forget(fresh: CheckoutSession) -> bool:
        if fresh.order_id or pending_since(fresh) != started:
            return False        # settled (or restarted) meanwhile by another request
        fresh.data["pending_create"] = None
        fresh.data.pop("quote", None)
        if not fresh.claims.get("orderParams"):
            fresh.data["orderParams"] = _new_reference()
        return True

    session = update_session(session.id, forget)
    if session.order_id:
        return CreateResult("created", order_id=session.order_id)
    log.info("no order found for session %s after the grace period: it may be created again",
             short_id(session.id))
    return CreateResult("retry")
