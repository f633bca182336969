"""One order's story, as the desk shows it: what the customer saw and was charged, where the order
stands (in the customer's words and the upstream's), the customer's verification, and a timeline
of everything the checkout recorded about it.

The timeline, oldest first:

- the session opened, each step it reached, the order created (step events: :mod:`.steps`; for
  an order from before them, the session's own times or the index's);
- each status the order reached, when, and where it came from (a webhook, the reconciler, a
  status page's read, a check at the desk, the shop's own code): ``checkout_signal_log``;
- each signal sent to the shop's code for it, with its outcome (acknowledged, failed with the
  error, how many attempts): the same rows, and the outbox rows of its deliveries;
- each webhook delivery (verified, its duplicates, what processing made of it) and each refused
  one that named the order (:mod:`checkout.webhooks.refusals`: unverified);
- each action taken at the desk, by whom, and its outcome (:mod:`.actions`).

Nothing is asked of the upstream here: the order as last read is in the store, and "check with
the partner now" reads it again. Nothing secret is read into the story: contacts go out masked,
and no body of a delivery is shown.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from ..errors import UpstreamBadResponse
from ..journey.flow import Flow, PriceRow
from ..kyc.memory import e164_digits
from ..kyc.standing import contact, status_word
from ..sessions import CheckoutSession, find_by_order
from ..store.tables import (
    desk_actions_table,
    desk_orders_table,
    events_table,
    outbox_table,
    refusals_table,
    signal_log_table,
    step_events_table,
)
from ..webhooks.orders import StoredOrder, get
from ..webhooks.refunds import refund_summary
from ..webhooks.store import aware
from .masking import mask_email, mask_phone
from .steps import OPENED, ORDERED

__all__ = ["Entry", "Kyc", "Story", "order_story"]

ERROR_SHOWN = 300           # characters of a signal's or a delivery's error shown


@dataclass(frozen=True)
class Entry:
    """One moment of the timeline: ``kind`` says what happened (opened, step, ordered, status,
    signal, delivery, refused, action), ``facts`` the rest, as the template words it."""

    at: datetime
    kind: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    tone: str = ""          # ok, error: how the entry is marked beside its words


@dataclass(frozen=True)
class Kyc:
    """The customer's verification as the checkout last heard it: the level passed (``none``,
    ``basic``, ``advanced``), the latest submission's level and word (pending, approved,
    rejected), and the partner's own words for it. Nothing of the documents."""

    passed: str | None = None
    latest_level: str | None = None
    latest_status: str | None = None
    description: str | None = None

    @property
    def known(self) -> bool:
        return any((self.passed, self.latest_level, self.latest_status))


@dataclass
class Story:
    order_id: str
    flow: str | None
    indexed: Mapping[str, Any] | None
    stored: StoredOrder | None
    session_alive: bool
    customer_status: str | None         # the status in the customer's words (the flow's)
    upstream_status: str | None         # the upstream's own word, as last read
    price: tuple[PriceRow, ...]         # what they paid and received, as on their receipt
    price_source: str                   # receipt (the order as read), quote (as reviewed), none
    email: str | None                   # masked
    phone: str | None                   # masked
    wallets: tuple[str, ...]
    hashes: tuple[str, ...]
    kyc: Kyc
    timeline: list[Entry]
    current_signal: Mapping[str, Any] | None    # the signal of the current status, if owed

    @property
    def found(self) -> bool:
        return self.indexed is not None or self.stored is not None or bool(self.timeline)


def order_story(engine: Engine, order_id: str, flows: Mapping[str, Flow]) -> Story:
    """Everything the checkout recorded about ``order_id`` (``flows``: the app's, which word
    its statuses and read its receipt)."""
    with engine.connect() as conn:
        indexed = _one(conn, select(desk_orders_table)
                       .where(desk_orders_table.c.order_id == order_id))
        if indexed is not None:
            indexed["created_at"] = aware(indexed["created_at"])
        session = find_by_order(conn, order_id)
        if session is not None and session.expired:
            session = None
        signals = _all(conn, select(signal_log_table)
                       .where(signal_log_table.c.order_id == order_id)
                       .order_by(signal_log_table.c.id))
        columns = [c for c in events_table.c if c.name != "body"]
        deliveries = _all(conn, select(*columns).where(events_table.c.order_id == order_id)
                          .order_by(events_table.c.id))
        outbox = _all(conn, select(outbox_table).where(outbox_table.c.event_id.in_(
            [delivery["id"] for delivery in deliveries])).order_by(outbox_table.c.id)) \
            if deliveries else []
        refused = _all(conn, select(refusals_table).where(refusals_table.c.order_id == order_id))
        actions = _all(conn, select(desk_actions_table)
                       .where(desk_actions_table.c.order_id == order_id)
                       .order_by(desk_actions_table.c.id))
        key = (indexed or {}).get("session_key")
        steps = _all(conn, select(step_events_table)
                     .where(step_events_table.c.session_key == key)) if key else []
        latest_kyc = _latest_user_kyc(conn, order_id)
    stored = get(engine, order_id)
    flow_name = (indexed or {}).get("flow") or (stored.flow if stored else None) \
        or (session.flow if session else None)
    flow = flows.get(flow_name or "")
    price, price_source = _price(engine, flow, stored, session, order_id)
    full = (stored.full_order if stored else None) or {}
    summary = (stored.summary if stored else None) or {}
    status = stored.status if stored else None
    email, phone = _contact(session, full, summary)
    timeline = sorted(
        _beginning(steps, session, indexed) + _statuses(signals) + _deliveries(deliveries, outbox)
        + _refusals(refused) + _actions(actions), key=lambda entry: entry.at)
    current = next((row for row in signals if row["status"] == status), None)
    return Story(
        order_id=order_id, flow=flow_name, indexed=indexed, stored=stored,
        session_alive=session is not None,
        customer_status=flow.status_text(status, session) if flow and status else None,
        upstream_status=_text(full.get("status")) or _text(summary.get("status")),
        price=price, price_source=price_source, email=mask_email(email), phone=mask_phone(phone),
        wallets=_present(session.value("address") if session else None, full.get("address"),
                         full.get("fromAddress")),
        hashes=_present(stored.hash if stored else None, session.tx_hash if session else None,
                        full.get("hash")),
        kyc=_kyc(session, latest_kyc), timeline=timeline, current_signal=current)


# -- reading ----------------------------------------------------------------------------------------

def _one(conn: Connection, query: Any) -> dict[str, Any] | None:
    row = conn.execute(query).first()
    return dict(row._mapping) if row is not None else None


def _all(conn: Connection, query: Any) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in conn.execute(query)]


def _latest_user_kyc(conn: Connection, order_id: str) -> Mapping[str, Any]:
    """``data.userKyc`` of the order's latest delivery (spec 6.2: always there, its fields
    optional)."""
    e = events_table.c
    body = conn.execute(select(e.body).where(e.order_id == order_id)
                        .order_by(e.id.desc()).limit(1)).scalar()
    try:
        payload = json.loads(body) if body else {}
    except (ValueError, RecursionError):
        return {}
    data = payload.get("data") if isinstance(payload, dict) else None
    kyc = data.get("userKyc") if isinstance(data, dict) else None
    return kyc if isinstance(kyc, dict) else {}


def _price(engine: Engine, flow: Flow | None, stored: StoredOrder | None,
           session: CheckoutSession | None, order_id: str) -> tuple[tuple[PriceRow, ...], str]:
    """The price as the customer's receipt shows it (the order as last read), else as they
    reviewed it (the session's quote), else nothing."""
    if flow is not None and stored is not None and stored.full_order:
        try:
            receipt = flow.receipt(flow.parse_order(stored.full_order),
                                   refund_summary(engine, order_id))
        except UpstreamBadResponse:
            receipt = None
        if receipt is not None and receipt.price.rows:
            return receipt.price.rows, "receipt"
    if flow is not None and session is not None and session.quote:
        return flow.breakdown(session.quote).rows, "quote"
    return (), "none"


def _contact(session: CheckoutSession | None, full: Mapping[str, Any],
             summary: Mapping[str, Any]) -> tuple[str | None, str | None]:
    if session is not None:
        who = contact(session)
        if who.email or who.phone:
            return who.email, who.phone
    email = _text(full.get("email")) or _text(full.get("userEmail")) \
        or _text(summary.get("userEmail"))
    phone = full.get("phoneNumber") or full.get("userPhoneNumber")
    return email, e164_digits(phone, _text(full.get("countryIsoCode")))


def _kyc(session: CheckoutSession | None, told: Mapping[str, Any]) -> Kyc:
    kept = session.kyc if session is not None else {}
    passed = _text(told.get("passedKycType")) or _text(kept.get("passed"))
    told_status = _text(told.get("latestKycStatus"))
    latest = status_word(told_status) if told_status else _text(kept.get("status"))
    return Kyc(passed=passed, latest_level=_text(told.get("latestKycType")),
               # "none": no submission yet, which "level reached" already says.
               latest_status=latest if latest != "none" else None,
               description=_text(kept.get("description")))


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _present(*values: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()))


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= ERROR_SHOWN:
        return text
    return text[:ERROR_SHOWN - 1] + "…"


# -- the timeline's entries -------------------------------------------------------------------------

def _beginning(steps: list[dict[str, Any]], session: CheckoutSession | None,
               indexed: Mapping[str, Any] | None) -> list[Entry]:
    """The session opened, its steps, the order created."""
    entries = []
    for row in steps:
        kind = {OPENED: "opened", ORDERED: "ordered"}.get(row["step"], "step")
        entries.append(Entry(aware(row["reached_at"]), kind,
                             {"step": row["step"], "flow": row["flow"]}))
    kinds = {entry.kind for entry in entries}
    if "opened" not in kinds and session is not None and session.created_at is not None:
        entries.append(Entry(session.created_at, "opened", {"flow": session.flow}))
    if "ordered" not in kinds and indexed is not None:
        entries.append(Entry(aware(indexed["created_at"]), "ordered", {}))
    return entries


def _statuses(signals: list[dict[str, Any]]) -> list[Entry]:
    """Each status reached, and the signal the shop's code was sent for it."""
    entries = []
    for row in signals:
        # A row of an earlier release has no source: a webhook's when it has an event.
        source = row["source"] or ("webhook" if row["event_id"] is not None else "upstream")
        created = aware(row["created_at"])
        entries.append(Entry(created, "status", {
            "status": row["status"], "previous": row["previous_status"], "source": source}))
        entries.append(Entry(aware(row["dispatched_at"]) or created, "signal", {
            "signal": "order_status_changed", "status": row["status"], "state": row["state"],
            "attempts": row["attempts"], "error": _cut(row["error"])},
            tone=_signal_tone(row["state"])))
    return entries


def _signal_tone(state: str) -> str:
    return {"dispatched": "ok", "failed": "error"}.get(state, "")


def _deliveries(deliveries: list[dict[str, Any]], outbox: list[dict[str, Any]]) -> list[Entry]:
    """Each verified delivery, its duplicates, and the signals it owed the shop's code."""
    signals_of: dict[int, list[dict[str, Any]]] = {}
    for row in outbox:
        signals_of.setdefault(row["event_id"], []).append(
            {"signal": row["signal"], "state": row["state"], "attempts": row["attempts"],
             "duplicate": bool(row["duplicate"]), "error": _cut(row["error"])})
    entries = []
    for row in deliveries:
        owed = signals_of.get(row["id"], [])
        failed = row["state"] == "failed" or any(s["state"] == "failed" for s in owed)
        entries.append(Entry(aware(row["received_at"]), "delivery", {
            "event_id": row["id"], "status": row["status"], "state": row["state"],
            "outcome": row["outcome"], "duplicates": row["duplicates"],
            "last_seen_at": aware(row["last_seen_at"]), "error": _cut(row["error"]),
            "signals": owed}, tone="error" if failed else "ok"))
    return entries


def _refusals(refused: list[dict[str, Any]]) -> list[Entry]:
    return [Entry(aware(row["received_at"]), "refused",
                  {"reason": row["reason"], "count": row["count"]}, tone="error")
            for row in refused]


def _actions(actions: list[dict[str, Any]]) -> list[Entry]:
    return [Entry(aware(row["at"]), "action", {
        "id": row["id"], "action": row["action"], "staff": row["staff"], "role": row["role"],
        "outcome": row["outcome"], "detail": _cut(row["detail"])},
        tone="error" if row["outcome"] == "failed" else "ok") for row in actions]
