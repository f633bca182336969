"""What operators see and do: recent events, one event in full, replaying one event, sending an
order's status signal again."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Flask
from sqlalchemy import select, update

from .dispatch import send_again
from .dispatcher import Round, process_pending
from .store import (
    FAILED,
    PENDING,
    PROCESSED,
    SIGNAL_FAILED,
    STORED,
    aware,
    events_table,
    orders_table,
    outbox_table,
    signal_log_table,
    write_transaction,
)


@dataclass(frozen=True)
class EventRecord:
    id: int
    received_at: datetime
    last_seen_at: datetime
    duplicates: int
    event_type: str | None
    order_id: str | None
    status: str | None
    updated_at: datetime | None
    state: str
    outcome: str | None
    error: str | None
    attempts: int
    headers: dict[str, str]
    body: bytes
    signals: list[dict[str, Any]]


def recent_events(app: Flask, limit: int = 50) -> list[EventRecord]:
    """The newest events first (bodies and signals left out)."""
    engine = app.extensions["checkout"].engine
    columns = [c for c in events_table.c if c.name != "body"]
    with engine.connect() as conn:
        rows = conn.execute(select(*columns).order_by(events_table.c.id.desc())
                            .limit(limit)).all()
    return [_record(row, body=b"", signals=[]) for row in rows]


def find_event(app: Flask, event_id: int) -> EventRecord | None:
    """One event with its body and every signal it owed."""
    engine = app.extensions["checkout"].engine
    with engine.connect() as conn:
        row = conn.execute(select(events_table).where(events_table.c.id == event_id)).first()
        if row is None:
            return None
        owed = [
            {"signal": "order_status_changed", "status": r.status, "state": r.state,
             "attempts": r.attempts, "error": r.error}
            for r in conn.execute(select(signal_log_table)
                                  .where(signal_log_table.c.event_id == event_id)
                                  .order_by(signal_log_table.c.id))
        ] + [
            {"signal": r.signal, "duplicate": bool(r.duplicate), "state": r.state,
             "attempts": r.attempts, "error": r.error}
            for r in conn.execute(select(outbox_table).where(outbox_table.c.event_id == event_id)
                                  .order_by(outbox_table.c.id))
        ]
    return _record(row, body=row.body, signals=owed)


def replay(app: Flask, event_id: int) -> Round:
    """Run one stored event through the same idempotent path again.

    A failed event is processed again; a processed one is too, and changes nothing that was
    applied already (newer-only moves, the (order, status) guard). Signals of this event whose
    receivers raised are sent again. Raises ``KeyError`` for an unknown id.
    """
    engine = app.extensions["checkout"].engine
    with write_transaction(engine) as conn:
        found = conn.execute(update(events_table)
                             .where(events_table.c.id == event_id,
                                    events_table.c.state.in_((FAILED, PROCESSED)))
                             .values(state=STORED)).rowcount
        exists = found or conn.execute(select(events_table.c.id)
                                       .where(events_table.c.id == event_id)).first()
        if not exists:
            raise KeyError(event_id)
        for table in (signal_log_table, outbox_table):
            conn.execute(update(table)
                         .where(table.c.event_id == event_id, table.c.state == SIGNAL_FAILED)
                         .values(state=PENDING, error=None))
    return process_pending(app)


def _record(row: Any, *, body: bytes, signals: list[dict[str, Any]]) -> EventRecord:
    m = row._mapping
    return EventRecord(
        id=m["id"], received_at=aware(m["received_at"]), last_seen_at=aware(m["last_seen_at"]),
        duplicates=m["duplicates"], event_type=m["event_type"], order_id=m["order_id"],
        status=m["status"], updated_at=aware(m["updated_at"]), state=m["state"],
        outcome=m["outcome"], error=m["error"], attempts=m["attempts"],
        headers=dict(m["headers"] or {}), body=body, signals=signals)


@dataclass(frozen=True)
class Resent:
    """What :func:`resend_status_signal` did: the status whose signal it sent (None: the order
    has no stored status) and how it went: ``acknowledged`` (every receiver returned),
    ``failed`` (``error``: what one raised), ``busy`` (another worker is sending it now),
    ``none`` (no signal was ever owed for that status)."""

    status: str | None
    outcome: str
    error: str | None = None


def resend_status_signal(app: Flask, order_id: str) -> Resent:
    """Run the shop's ``order_status_changed`` for the order's current status again, now (for
    a shop whose fulfilment failed): its receivers are called again with the same arguments,
    whether they failed the first time or not. Its row in the signal log says so (attempts)."""
    engine = app.extensions["checkout"].engine
    with engine.connect() as conn:
        status = conn.execute(select(orders_table.c.status)
                              .where(orders_table.c.order_id == order_id)).scalar()
        row_id = None if status is None else conn.execute(
            select(signal_log_table.c.id).where(signal_log_table.c.order_id == order_id,
                                                signal_log_table.c.status == status)).scalar()
    if row_id is None:
        return Resent(status, "none")
    sent, error = send_again(app, engine, signal_log_table, int(row_id))
    if not sent:
        return Resent(status, "busy")
    return Resent(status, "failed" if error else "acknowledged", error)
