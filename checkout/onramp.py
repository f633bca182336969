"""The on-ramp checkout's domain steps: quotes kept in the session, and creating the one order.

Creating is idempotent. ``SessionStore.claim_order_creation`` is a compare-and-set in the database:
a double click, a retried request, a second tab or a second device gets no second claim while one
creation runs, and none at all once an order is attached. The create call itself is never retried
blindly: when its outcome is unknown (a timeout, a 5xx, an unreadable answer) the order is looked up
by its ``orderParams`` before another attempt may be made, because the upstream may have created it.

``orderParams`` is the merchant's own reference from the launch token when there is one, else a
random checkout reference kept in the session (never the session id: that id opens the session).
"""
from __future__ import annotations

import ipaddress
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Callable

from flask import current_app, request, url_for
from werkzeug.routing import BuildError

from .errors import (OrderNotAvailable, QuoteExpired, UpstreamError, UpstreamRejected)
from .sessions import CheckoutSession, SessionConflict
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
    """Apply ``change`` to a fresh copy of the session and save it, retrying on a concurrent save.

    ``change`` may return False to skip saving (nothing to do after all).
    """
    store = get_state().sessions
    for _attempt in range(5):
        session = store.get(session_id)
        if session is None:
            raise SessionConflict(session_id)
        if change(session) is False:
            return session
        try:
            store.save(session)
            return session
        except SessionConflict:
            continue
    raise SessionConflict(session_id)


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

@dataclass
class CreateResult:
    """What came of one attempt to create the session's order.

    ``kind`` is ``created`` (now or before), ``busy`` (another request holds the claim),
    ``requote`` (the quote expired: a new one is stored, the user must confirm the new price),
    ``rejected`` (the upstream said no; ``message`` says why) or ``unknown`` (the outcome could not
    be established; the claim stays until it lapses or a lookup settles it).
    """

    kind: str
    order_id: str | None = None
    message: str | None = None


def order_params(session: CheckoutSession) -> str:
    """The reference the order is created (and later found) with."""
    return str(session.claims.get("orderParams") or session.data.get("orderParams"))


def ensure_order_params(session_id: str) -> CheckoutSession:
    """Give the session its checkout reference before any create call can be made."""

    def change(session: CheckoutSession) -> bool:
        if session.claims.get("orderParams") or session.data.get("orderParams"):
            return False
        session.data["orderParams"] = "chk_" + secrets.token_hex(12)
        return True

    return update_session(session_id, change)


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


def _matches(order: OnrampOrder, session: CheckoutSession, since: datetime | None) -> bool:
    """Whether an order found by ``orderParams`` is this session's (a merchant may reuse its
    reference across tokens: an older order with the same reference must not be adopted)."""
    if order.network and order.network != session.value("network"):
        return False
    if order.address and session.value("address") and \
            order.address.lower() != str(session.value("address")).lower():
        return False
    if since is not None and order.date is not None and order.date < since - timedelta(minutes=5):
        return False
    return True


def find_created_order(session: CheckoutSession) -> OnrampOrder | None:
    """Look the order up by ``orderParams``; None when the upstream has none for this session."""
    attempted = session.data.get("create_attempted_at")
    since = datetime.fromtimestamp(attempted, tz=timezone.utc) if attempted else None
    try:
        order = get_state().upstream.onramp_order(order_params=order_params(session))
    except OrderNotAvailable:
        return None
    return order if _matches(order, session, since) else None


def _attach(session: CheckoutSession, order: OnrampOrder) -> CreateResult:
    get_state().sessions.attach_order(session.id, order.id, step="pay", data_update={
        "order": {"id": order.id, "resumeUrl": order.resume_url,
                  "transferType": order.transfer_instructions.type
                  if order.transfer_instructions else None},
    })
    log.info("on-ramp order created for a checkout session")
    return CreateResult("created", order_id=order.id)


def create_order(session: CheckoutSession) -> CreateResult:
    """Create the session's one order from its stored quote (see the module docstring)."""
    state = get_state()
    if session.order_id:
        return CreateResult("created", order_id=session.order_id)
    session = ensure_order_params(session.id)
    if not state.sessions.claim_order_creation(session.id):
        fresh = state.sessions.get(session.id)
        if fresh is not None and fresh.order_id:
            return CreateResult("created", order_id=fresh.order_id)
        return CreateResult("busy")
    claimed = state.sessions.get(session.id)     # the claim bumped the version: reload
    if claimed is None:
        state.sessions.release_order_creation(session.id)
        return CreateResult("busy")
    session = claimed
    try:
        if session.data.get("create_attempted_at"):
            # An earlier attempt ended without an answer: it may have created the order.
            found = find_created_order(session)
            if found is not None:
                return _attach(session, found)
        session = update_session(session.id, lambda s: s.data.__setitem__(
            "create_attempted_at", time.time()))
        order = _create(session)
    except QuoteExpired:
        state.sessions.release_order_creation(session.id)
        return CreateResult("requote")
    except UpstreamRejected as exc:
        state.sessions.release_order_creation(session.id)
        return CreateResult("rejected", message=exc.message)
    except UpstreamError as exc:
        log.warning("order creation outcome unknown: %r", exc)
        return _reconcile(session)
    return _attach(session, order)


def _create(session: CheckoutSession) -> OnrampOrder:
    quote = stored_quote(session) or {}
    params = quote.get("params") or {}
    extra = session.data.get("extraFields") or {}
    return get_state().upstream.onramp_create_order(
        quote_id=quote["id"], network=params["network"], asset=params["asset"],
        amount=Decimal(str(params["amount"])), currency=params["currency"],
        email=session.value("email"), user_ip=_user_ip(),
        address=session.value("address"), memo=session.value("memo") or None,
        order_params=order_params(session),
        redirect_url=url_for("checkout.payment_return", session_id=session.id, _external=True),
        extra_fields=extra or None, webhook_url=_webhook_url(),
    )


def _reconcile(session: CheckoutSession) -> CreateResult:
    """After a create with no answer: adopt the order if it exists, else free the claim."""
    state = get_state()
    try:
        found = find_created_order(session)
    except UpstreamError as exc:
        # Still no answer: keep the claim (it lapses after the lease) so nobody creates a second
        # order while the first may exist; the next attempt looks it up first.
        log.warning("order lookup after an unanswered create failed too: %r", exc)
        return CreateResult("unknown")
    if found is not None:
        return _attach(session, found)
    state.sessions.release_order_creation(session.id)
    return CreateResult("unknown")
