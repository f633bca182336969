"""Storing deliveries (inside the request) and processing them (after the acknowledgement).

Store first (:func:`record_delivery`): the raw bytes and the headers that matter are committed,
one transaction per delivery, before the upstream gets its 2xx. A repeated body is recorded
against the first (``duplicates``, and a ``webhook_received`` outbox row) and changes nothing
else.

Then, on the dispatcher (:func:`process_stored_events`), each stored event is locked
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL) and claimed by a conditional UPDATE, so with several
workers each event is processed once. For ``order-status-change`` one transaction

1. moves ``checkout_orders`` by one upsert that applies only when the stored
   ``status_updated_at`` is older than the delivery's ``updatedAt`` (canceled and expired are not
   final; statuses may be skipped; only time orders them, never a rank of statuses),
2. inserts (order_id, status) into ``checkout_signal_log`` (UNIQUE; ON CONFLICT DO NOTHING): a row
   inserted means ``order_status_changed`` is owed, exactly once per order and status,
3. marks the event processed.

Signals are sent after commit by :mod:`checkout.webhooks.dispatch`.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Flask
from sqlalchemy import update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

from ..desk import index as desk_index
from ..errors import WebhookPayloadError
from ..inputs import storable
from ..kyc import memory as kyc_memory
from . import statements
from .events import EVENT_AUTH, EVENT_KYC, EVENT_ORDER_STATUS, ParsedEvent, parse_event
from .store import (
    FAILED,
    INVALID,
    PENDING,
    STORED,
    events_table,
    outbox_table,
    utcnow,
    write_transaction,
)

log = logging.getLogger(__name__)

# The request headers worth keeping with a delivery. x-signature is not a secret (it is derived
# from the body); the webhook secret itself is never stored.
KEPT_HEADERS = ("content-type", "user-agent", "x-signature", "content-length")

FETCHED_FLOWS = ("onramp", "offramp")   # the flows whose full order the upstream serves

BATCH = 25      # events per transaction: short enough not to hold SQLite's writer for long


@dataclass(frozen=True)
class Settings:
    """What processing needs of the app's configuration, read once per call."""

    fetch_orders: bool
    # The key of the digests KYC levels are remembered under (checkout.kyc.memory), and that the
    # desk's own keys derive from (checkout.desk.digests): the launch secret.
    person_secret: str

    @classmethod
    def of(cls, app: Flask) -> Settings:
        return cls(fetch_orders=bool(app.config.get("CHECKOUT_WEBHOOK_FETCH_ORDERS", True)),
                   person_secret=str(app.config.get("CHECKOUT_LAUNCH_SECRET") or ""))


@dataclass(frozen=True)
class Receipt:
    """What the receiver answers: the stored event's id and whether the body was seen before."""

    event_id: int
    duplicate: bool
    state: str


def record_delivery(engine: Engine, body: bytes, headers: Mapping[str, str],
                    parsed: ParsedEvent | None, error: str | None = None, *,
                    signed: bytes | None = None) -> Receipt:
    """Store one verified delivery (or count it as a duplicate) and commit, in one transaction.
    Raises on a database failure (the receiver answers 503; the sender retries).

    ``signed`` is what the signature covers (see ``verify_delivery``), the dedupe key; by default
    the body. In ``data`` signature mode two bodies that differ only outside the signed data
    (whitespace, key order) are one delivery.
    """
    digest = hashlib.sha256(body if signed is None else signed).hexdigest()
    now = utcnow()
    values: dict[str, Any] = {
        "body_sha256": digest, "body": body, "received_at": now, "last_seen_at": now,
        # Kept for inspection; a header no database can store is left out, never a reason to fail.
        "headers": {name: headers[name] for name in KEPT_HEADERS
                    if headers.get(name) is not None and storable(headers[name])},
        "duplicates": 0, "attempts": 0, "received_owed": 0,
        "state": STORED if parsed is not None else INVALID,
        "error": error, "event_type": None, "order_id": None, "status": None, "updated_at": None,
    }
    if parsed is not None:
        values.update(event_type=parsed.type, order_id=parsed.order_id, status=parsed.status,
                      updated_at=parsed.updated_at)
    with write_transaction(engine) as conn:
        # The UNIQUE body digest decides, whatever another process stores at the same moment.
        row = conn.execute(statements.insert_event(conn.dialect.name), values).first()
        if row is not None:
            return Receipt(event_id=row.id, duplicate=False, state=row.state)
        stored = conn.execute(statements.COUNT_DUPLICATE, {"digest": digest, "now": now}).one()
        if parsed is not None:
            # A copy that is an event owes its own webhook_received (the first delivery's is
            # owed when it is processed); a signed body that is not an event owes none.
            conn.execute(outbox_table.insert().values(
                signal="webhook_received", event_id=stored.id, duplicate=1, created_at=now,
                state=PENDING, attempts=0))
    return Receipt(event_id=stored.id, duplicate=True, state=stored.state)


def process_stored_events(app: Flask, engine: Engine, *, limit: int = 500) -> int:
    """Process stored events in receipt order; return how many this call processed.

    A batch shares one transaction (one commit, one turn of SQLite's single writer). If anything
    in it fails, the batch is rolled back and its events are processed one by one, so a broken
    event is marked failed alone and a deadlock between two workers costs one retry.
    """
    settings = Settings.of(app)
    done = 0
    while done < limit:
        with engine.connect() as conn:
            ids = list(conn.execute(statements.STORED_IDS, {"batch": BATCH}).scalars())
        if not ids:
            break
        try:
            with write_transaction(engine) as conn:
                _process(conn, ids, settings)
        except Exception:  # isolate the culprit below
            log.info("webhook batch of %d rolled back; processing its events one by one",
                     len(ids), exc_info=True)
            for event_id in ids:
                try:
                    process_event(app, engine, event_id)
                except OperationalError:
                    # The database is unwell: leave the rest stored; the next sweep retries.
                    log.warning("webhook event %s left for later: database unavailable",
                                event_id)
                    return done
        done += len(ids)
    return done


def process_event(app: Flask, engine: Engine, event_id: int) -> bool:
    """Claim and process one stored event alone. False if another worker has it (or had it)."""
    settings = Settings.of(app)
    try:
        with write_transaction(engine) as conn:
            return _process(conn, [event_id], settings) == 1
    except OperationalError:
        raise
    except Exception as exc:  # keep the failure on the event, for replay
        log.exception("webhook event %s failed to process", event_id)
        reason = f"{type(exc).__name__}: {exc}"[:2000]
        with write_transaction(engine) as conn:
            conn.execute(update(events_table)
                         .where(events_table.c.id == event_id, events_table.c.state == STORED)
                         .values(state=FAILED, error=reason, processed_at=utcnow(),
                                 attempts=events_table.c.attempts + 1))
        return True


def _process(conn: Connection, ids: list[int], settings: Settings) -> int:
    """Claim the stored events among ``ids`` and apply them in receipt order, in ``conn``'s
    transaction. Returns how many this worker claimed."""
    now = utcnow()
    locked = list(conn.execute(statements.LOCK_STORED, {"ids": ids}).scalars())
    if not locked:
        return 0
    claimed = sorted(conn.execute(statements.CLAIM_EVENTS, {"ids": locked, "now": now}).all())
    if not claimed:
        return 0
    owed = sorted(conn.execute(statements.OWE_RECEIVED,
                               {"ids": [event_id for event_id, _ in claimed]}).scalars())
    if owed:
        conn.execute(outbox_table.insert(), [
            {"signal": "webhook_received", "event_id": event_id, "duplicate": 0,
             "created_at": now, "state": PENDING, "attempts": 0} for event_id in owed])
    outcomes: dict[str, list[int]] = {}
    for event_id, body in claimed:
        event = parse_event(body)
        _learn_kyc_level(conn, event, settings, now)
        # The order's index row before its own, in the turn every writer of both keeps
        # (checkout.webhooks.orders): in opposite turns, two transactions wait for each other.
        _index_order(conn, event, settings, now)
        outcome = _apply(conn, event_id, event, now, fetch_orders=settings.fetch_orders)
        outcomes.setdefault(outcome, []).append(event_id)
    for outcome, event_ids in outcomes.items():
        conn.execute(statements.SET_OUTCOME, {"ids": event_ids, "outcome": outcome})
    return len(claimed)


def _apply(conn: Connection, event_id: int, event: ParsedEvent, now: datetime, *,
           fetch_orders: bool) -> str:
    if event.type == EVENT_ORDER_STATUS:
        return move_order_status(conn, event, event_id, now, fetch_orders=fetch_orders)
    if event.type in (EVENT_KYC, EVENT_AUTH):
        conn.execute(outbox_table.insert(), {
            "signal": f"{event.type}_event", "event_id": event_id, "duplicate": 0,
            "created_at": now, "state": PENDING, "attempts": 0})
        return "signalled"
    return "ignored"


def _learn_kyc_level(conn: Connection, event: ParsedEvent, settings: Settings,
                     now: datetime) -> None:
    """Remember the level of verification a webhook tells of its user (``data.userKyc`` of an
    order, a ``kyc`` event): the next order of the same person is then not asked again for a
    check they passed (checkout.kyc.memory)."""
    kyc_memory.learn_from_event(conn, settings.person_secret, event.type, event.payload, now)


def _index_order(conn: Connection, event: ParsedEvent, settings: Settings,
                 now: datetime) -> None:
    """What an order webhook tells of its order, for the merchant's desk (checkout.desk.index):
    stale or not, it only fills in what the index lacks."""
    if event.type != EVENT_ORDER_STATUS:
        return
    facts = desk_index.facts_from_summary(event.payload["data"]["order"], event.flow)
    if facts is not None:
        desk_index.record(conn, facts, settings.person_secret, now)


def move_order_status(conn: Connection, event: ParsedEvent, event_id: int, now: datetime, *,
                      fetch_orders: bool) -> str:
    """Apply a webhook to ``checkout_orders`` if it is newer; owe a signal for a new status.

    Returns ``applied`` (moved, and a signal is owed), ``unchanged`` (moved to a status this order
    already had: newer time, no signal) or ``stale`` (older than what is stored: nothing changed).
    """
    order = event.payload["data"]["order"]
    assert event.order_id is not None       # parse_event requires it of order-status events
    wants_fetch = fetch_orders and event.flow in FETCHED_FLOWS
    moved = conn.execute(statements.move_order(conn.dialect.name), {
        "order_id": event.order_id, "flow": event.flow, "status": event.status,
        "status_updated_at": event.updated_at, "order_params": event.order_params,
        "summary": order, "hash": _transaction_hash(order), "refreshed_at": now,
        "fetch_due_at": now if wants_fetch else None, "created_at": now,
    }).first()
    if moved is None:
        return "stale"
    owed = owe_status_signal(conn, order_id=event.order_id, status=moved.status,
                             previous_status=moved.previous_status, flow=moved.flow,
                             order_params=moved.order_params, event_id=event_id, now=now,
                             source="webhook")
    return "applied" if owed else "unchanged"


def owe_status_signal(conn: Connection, *, order_id: str, status: str,
                      previous_status: str | None, flow: str | None, order_params: str | None,
                      event_id: int | None, now: datetime, source: str) -> bool:
    """Record that ``order_status_changed`` is owed for (order, status); False if it already was.
    ``source``: where the status came from (a name of ``checkout.webhooks.orders.SOURCES``),
    kept with it for the order's story (the merchant's desk).

    The UNIQUE (order_id, status) constraint decides, so two workers (or a webhook and a status
    page's fetch) racing on the same status owe it once between them.
    """
    owed = conn.execute(statements.owe_signal(conn.dialect.name), {
        "order_id": order_id, "status": status, "previous_status": previous_status,
        "flow": flow, "order_params": order_params, "event_id": event_id, "created_at": now,
        "source": source,
    }).first()
    return owed is not None


def _transaction_hash(order: Mapping[str, Any]) -> str | None:
    for leg in ("payout", "deposit", "refund"):
        transaction = _object(_object(order.get(leg)).get("transaction"))
        tx_hash = _object(transaction.get("meta")).get("transactionHash")
        if isinstance(tx_hash, str) and tx_hash:
            return tx_hash[:256]
    return None


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def parse_or_reason(body: bytes) -> tuple[ParsedEvent | None, str | None]:
    """The parsed event, or None and why the signed body is not one (kept for inspection)."""
    try:
        return parse_event(body), None
    except WebhookPayloadError as exc:
        return None, str(exc)
