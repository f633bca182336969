"""Storing deliveries (inside the request) and processing them (after the acknowledgement).

Store first (:func:`record_delivery`): the raw bytes and the headers that matter are committed, with
a ``webhook_received`` outbox row, before the upstream gets its 2xx. A repeated body is recorded
against the first (``duplicates``) and changes nothing else.

Then, on the dispatcher (:func:`process_stored_events`), each stored event is claimed by a
conditional UPDATE (plus ``FOR UPDATE SKIP LOCKED`` on PostgreSQL), so with several workers each
event is processed once. For ``order-status-change`` one transaction

1. moves ``checkout_orders`` by one upsert that applies only when the stored ``status_updated_at`` is
   older than the delivery's ``updatedAt`` (canceled and expired are not final; statuses may be
   skipped; only time orders them, never a rank of statuses),
2. inserts (order_id, status) into ``checkout_signal_log`` (UNIQUE; ON CONFLICT DO NOTHING): a row
   inserted means ``order_status_changed`` is owed, exactly once per order and status,
3. marks the event processed.

Signals are sent after commit by :mod:`checkout.webhooks.dispatch`.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from flask import Flask
from sqlalchemy import case, func, or_, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

from ..errors import WebhookPayloadError
from .events import EVENT_AUTH, EVENT_KYC, EVENT_ORDER_STATUS, ParsedEvent, parse_event
from .store import (FAILED, INVALID, PENDING, PROCESSED, STORED, dialect_insert, events_table,
                    orders_table, outbox_table, signal_log_table, utcnow)

log = logging.getLogger(__name__)

# The request headers worth keeping with a delivery. x-signature is not a secret (it is derived
# from the body); the webhook secret itself is never stored.
KEPT_HEADERS = ("content-type", "user-agent", "x-signature", "content-length")

FETCHED_FLOWS = ("onramp", "offramp")   # the flows whose full order the upstream serves


@dataclass(frozen=True)
class Receipt:
    """What the receiver answers: the stored event's id and whether the body was seen before."""

    event_id: int
    duplicate: bool
    state: str


def record_delivery(engine: Engine, body: bytes, headers: Mapping[str, str],
                    parsed: ParsedEvent | None, error: str | None = None) -> Receipt:
    """Store one verified delivery (or count it as a duplicate) and commit. Raises on DB failure."""
    digest = hashlib.sha256(body).hexdigest()
    now = utcnow()
    kept = {name: headers[name] for name in KEPT_HEADERS if headers.get(name) is not None}
    values: dict[str, Any] = dict(
        body_sha256=digest, body=body, headers=kept, received_at=now, last_seen_at=now,
        duplicates=0, attempts=0,
        state=STORED if parsed is not None else INVALID,
        error=error,
    )
    if parsed is not None:
        values.update(event_type=parsed.type, order_id=parsed.order_id, status=parsed.status,
                      updated_at=parsed.updated_at)
    with engine.begin() as conn:
        inserted = conn.execute(
            dialect_insert(conn, events_table).values(**values)
            .on_conflict_do_nothing(index_elements=["body_sha256"])
            .returning(events_table.c.id, events_table.c.state)
        ).first()
        duplicate = inserted is None
        row = inserted
        if duplicate:
            row = conn.execute(
                update(events_table).where(events_table.c.body_sha256 == digest)
                .values(duplicates=events_table.c.duplicates + 1, last_seen_at=now)
                .returning(events_table.c.id, events_table.c.state)
            ).first()
        if parsed is not None:
            conn.execute(outbox_table.insert().values(
                signal="webhook_received", event_id=row.id, duplicate=int(duplicate),
                created_at=now, state=PENDING, attempts=0))
    return Receipt(event_id=row.id, duplicate=duplicate, state=row.state)


def process_stored_events(app: Flask, engine: Engine, *, limit: int = 200) -> int:
    """Process stored events in receipt order; return how many this call processed."""
    done = 0
    while done < limit:
        with engine.connect() as conn:
            ids = conn.execute(
                select(events_table.c.id).where(events_table.c.state == STORED)
                .order_by(events_table.c.id).limit(min(50, limit - done))
            ).scalars().all()
        if not ids:
            break
        for event_id in ids:
            try:
                if process_event(app, engine, event_id):
                    done += 1
            except OperationalError:
                # The database is unwell: leave the event stored; the next sweep retries it.
                log.warning("webhook event %s left for later: database unavailable", event_id)
                return done
    return done


def process_event(app: Flask, engine: Engine, event_id: int) -> bool:
    """Claim and process one stored event. False if another worker has it (or had it)."""
    fetch_orders = bool(app.config.get("CHECKOUT_WEBHOOK_FETCH_ORDERS", True))
    try:
        with engine.begin() as conn:
            # PostgreSQL: skip an event another worker holds; SQLite ignores the clause and
            # serialises writers, and the conditional UPDATE below decides either way.
            locked = conn.execute(
                select(events_table.c.id, events_table.c.body)
                .where(events_table.c.id == event_id, events_table.c.state == STORED)
                .with_for_update(skip_locked=True)
            ).first()
            if locked is None:
                return False
            now = utcnow()
            claimed = conn.execute(
                update(events_table)
                .where(events_table.c.id == event_id, events_table.c.state == STORED)
                .values(state=PROCESSED, processed_at=now, error=None,
                        attempts=events_table.c.attempts + 1)
            ).rowcount
            if claimed != 1:
                return False
            outcome = _apply(conn, event_id, parse_event(locked.body), now,
                             fetch_orders=fetch_orders)
            conn.execute(update(events_table).where(events_table.c.id == event_id)
                         .values(outcome=func.coalesce(events_table.c.outcome, outcome)))
        return True
    except OperationalError:
        raise
    except Exception as exc:  # noqa: BLE001 - keep the failure on the event, for replay
        log.exception("webhook event %s failed to process", event_id)
        reason = f"{type(exc).__name__}: {exc}"[:2000]
        with engine.begin() as conn:
            conn.execute(update(events_table)
                         .where(events_table.c.id == event_id, events_table.c.state == STORED)
                         .values(state=FAILED, error=reason, processed_at=utcnow(),
                                 attempts=events_table.c.attempts + 1))
        return True


def _apply(conn: Connection, event_id: int, event: ParsedEvent, now: datetime, *,
           fetch_orders: bool) -> str:
    if event.type == EVENT_ORDER_STATUS:
        return move_order_status(conn, event, event_id, now, fetch_orders=fetch_orders)
    if event.type in (EVENT_KYC, EVENT_AUTH):
        conn.execute(outbox_table.insert().values(
            signal=f"{event.type}_event", event_id=event_id, duplicate=0, created_at=now,
            state=PENDING, attempts=0))
        return "signalled"
    return "ignored"


def move_order_status(conn: Connection, event: ParsedEvent, event_id: int, now: datetime, *,
                      fetch_orders: bool) -> str:
    """Apply a webhook to ``checkout_orders`` if it is newer; owe a signal for a new status.

    Returns ``applied`` (moved, and a signal is owed), ``unchanged`` (moved to a status this order
    already had: newer time, no signal) or ``stale`` (older than what is stored: nothing changed).
    """
    order = event.payload["data"]["order"]
    wants_fetch = fetch_orders and event.flow in FETCHED_FLOWS
    orders = orders_table.c
    insert = dialect_insert(conn, orders_table).values(
        order_id=event.order_id, flow=event.flow, status=event.status, previous_status=None,
        status_updated_at=event.updated_at, status_source="webhook",
        order_params=event.order_params, summary=order, hash=_transaction_hash(order),
        refreshed_at=now, version=1, fetch_due_at=now if wants_fetch else None, fetch_seq=1,
        fetch_attempts=0, created_at=now)
    new = insert.excluded
    moved = conn.execute(insert.on_conflict_do_update(
        index_elements=[orders.order_id],
        set_={
            "status": new.status,
            # A newer delivery of the same status keeps the status it came from.
            "previous_status": case((orders.status == new.status, orders.previous_status),
                                    else_=orders.status),
            "status_updated_at": new.status_updated_at,
            "status_source": "webhook",
            "flow": func.coalesce(new.flow, orders.flow),
            "order_params": func.coalesce(new.order_params, orders.order_params),
            "summary": new.summary,
            "hash": func.coalesce(new.hash, orders.hash),
            "refreshed_at": new.refreshed_at,
            "version": orders.version + 1,
            "fetch_due_at": new.fetch_due_at if wants_fetch else orders.fetch_due_at,
            "fetch_seq": orders.fetch_seq + 1,
            "fetch_attempts": 0,
        },
        # The one rule of order: strictly newer updatedAt wins; equal or older changes nothing.
        where=or_(orders.status_updated_at.is_(None),
                  orders.status_updated_at < new.status_updated_at),
    ).returning(orders.status, orders.previous_status, orders.flow, orders.order_params)).first()
    if moved is None:
        return "stale"
    owed = owe_status_signal(conn, order_id=event.order_id, status=moved.status,
                             previous_status=moved.previous_status, flow=moved.flow,
                             order_params=moved.order_params, event_id=event_id, now=now)
    return "applied" if owed else "unchanged"


def owe_status_signal(conn: Connection, *, order_id: str, status: str,
                      previous_status: str | None, flow: str | None, order_params: str | None,
                      event_id: int | None, now: datetime) -> bool:
    """Record that ``order_status_changed`` is owed for (order, status); False if it already was.

    The UNIQUE (order_id, status) constraint decides, so two workers (or a webhook and a status
    page's fetch) racing on the same status owe it once between them.
    """
    owed = conn.execute(
        dialect_insert(conn, signal_log_table).values(
            order_id=order_id, status=status, previous_status=previous_status, flow=flow,
            order_params=order_params, event_id=event_id, created_at=now, state=PENDING,
            attempts=0)
        .on_conflict_do_nothing(index_elements=["order_id", "status"])
        .returning(signal_log_table.c.id)
    ).first()
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
