"""The quote record a session keeps: the price the pages show and the order is created from.

A record is the upstream's answer to one best-offer call, with what it was asked: ``id`` (the
on-ramp's ``quoteId`` or the off-ramp's offer ``_id``), ``params`` (the session's answers in one
spelling), ``offer`` (without its field descriptors), ``required_fields`` (the descriptors, spec
2.2), ``cashout`` and ``fetched_at``. It is honoured while it was asked with today's answers and is
younger than ``CHECKOUT_QUOTE_MAX_AGE`` seconds of the upstream's time (:func:`max_age`): the
upstream's quotes live about ten minutes (upstream-notes 6), ours are renewed well before.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ..sessions import CheckoutSession, SessionStore
from ..upstream.types import RequiredField, required_fields_from_json
from . import clock
from .steps import update_before_order

if TYPE_CHECKING:
    from .flow import Flow
    from .quote_cache import QuoteCache


def max_age(flow: Flow) -> float:
    """Seconds a quote of ``flow`` is honoured: ``CHECKOUT_QUOTE_MAX_AGE``, in the upstream's
    time. The service's quotes live about ten minutes (upstream-notes 6); an embedded sandbox
    that runs five times as fast has them live two, and a price clock counting four minutes
    would still show time left when "Confirm" met an expired quote (checkout.composition)."""
    return flow.settings.quote_max_age


def normalise(keys: Iterable[str], values: Mapping[str, Any]) -> dict[str, Any]:
    """Quote parameters in one spelling, so that 5000, "5000" and "5000.00" ask the same quote."""
    params = {key: values.get(key) or None for key in keys}
    if params.get("amount") is not None:
        try:
            params["amount"] = format(Decimal(str(params["amount"])).normalize(), "f")
        except ArithmeticError:
            params["amount"] = None
    return params


def params_of(session: CheckoutSession, flow: Flow) -> dict[str, Any]:
    """What a quote for this session is asked with (its corridor and amount)."""
    return normalise(flow.quote_keys, {key: session.value(key) for key in flow.quote_keys})


def make_record(quote_id: str | None, offer: Mapping[str, Any], cashout: Mapping[str, Any],
                params: Mapping[str, Any], keys: Iterable[str], *,
                usd: Decimal | None) -> dict[str, Any]:
    """A quote as the session keeps it; ``usd``: its amount in US dollars as the flow reads it from
    its cashout (the unit of the country's KYC rules)."""
    return {
        "id": quote_id,
        "fetched_at": clock.now(),
        "params": normalise(keys, params),
        "offer": {key: value for key, value in offer.items() if key != "requiredFields"},
        "required_fields": dict(offer.get("requiredFields") or {}),
        "cashout": dict(cashout),
        "usd": None if usd is None else str(usd),
    }


# Where each flow's cashout gives the amount in US dollars, for a record kept by a release before
# records carried ``usd`` (a session opened before an upgrade). Not read otherwise.
_EARLIER_USD_KEYS = {"onramp": "totalAmountUsd", "offramp": "usdAmount"}


def usd_amount(record: Mapping[str, Any], flow_name: str) -> Decimal | None:
    """The quote's amount in US dollars (None when the upstream gave none)."""
    if "usd" in record:
        value = record["usd"]
    else:
        value = (record.get("cashout") or {}).get(_EARLIER_USD_KEYS.get(flow_name, ""))
    return None if value is None else Decimal(str(value))


def is_current(session: CheckoutSession, flow: Flow) -> bool:
    """The stored quote was asked with today's answers and is young enough to be honoured."""
    record = session.quote
    if not record:
        return False
    young = clock.now() - float(record.get("fetched_at", 0)) < max_age(flow)
    return young and record.get("params") == params_of(session, flow)


def holds_until(record: Mapping[str, Any], flow: Flow) -> datetime:
    """Until when the price of ``record`` is honoured: past it, "Confirm" asks for a new price
    and shows it before anything is created (:func:`max_age` from when it was had)."""
    return datetime.fromtimestamp(float(record.get("fetched_at", 0)) + max_age(flow), UTC)


def required_fields(session: CheckoutSession) -> list[RequiredField]:
    """The offer's field descriptors, in the upstream's order."""
    return required_fields_from_json((session.quote or {}).get("required_fields") or {})


def store(sessions: SessionStore, flow: Flow, session_id: str,
          record: dict[str, Any]) -> CheckoutSession:
    def change(session: CheckoutSession) -> None:
        session.quote = record

    return update_before_order(sessions, flow.settings, session_id, change)


def refresh(sessions: SessionStore, session: CheckoutSession,
            flow: Flow) -> tuple[CheckoutSession, bool]:
    """Renew the stored quote when it is too old; True when the price the user saw changed."""
    if is_current(session, flow):
        return session, False
    old = session.quote
    record = flow.request_quote(params_of(session, flow))
    session = store(sessions, flow, session.id, record)
    changed = old is None or flow.breakdown(old).key_amounts != flow.breakdown(record).key_amounts
    return session, changed


def shown_quote(cache: QuoteCache, flow: Flow, params: Mapping[str, Any]) -> dict[str, Any]:
    """A quote record to *show* a price with (the live price under the amount), never to create
    an order from: identical asks within ``CHECKOUT_QUOTE_CACHE_SECONDS`` share one upstream call
    (the app's ``cache``, :mod:`checkout.journey.quote_cache`)."""
    return cache.get(flow.name, params, lambda: flow.request_quote(params))


def requote(sessions: SessionStore, session: CheckoutSession, flow: Flow) -> CheckoutSession:
    """A new quote for the session's answers, whatever the age of the stored one."""
    return store(sessions, flow, session.id, flow.request_quote(params_of(session, flow)))
