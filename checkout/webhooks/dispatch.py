"""Sending the owed signals to merchant code, after commit and after the acknowledgement.

Every owed signal is a row (``checkout_signal_log`` for ``order_status_changed``,
``checkout_signal_outbox`` for the others), dispatched in creation order:

1. claim: a conditional UPDATE pending -> dispatching (a small batch at a time), committed before
   any merchant code runs, so two workers never both send it;
2. send each row with the Flask app as sender, inside an app context, one at a time;
3. as soon as its receivers return, mark that row dispatched (or failed with the receiver's
   error: logged; ``flask checkout webhooks replay`` sends it again), in a transaction of its own.

Trade-off: the decision to send is exactly-once (a UNIQUE constraint, in the same transaction as
the status move); a signal whose receivers have returned is never sent again, since it is marked
before the next is sent. If the process dies while a receiver runs, that row (the one in flight)
and the rows of its batch not yet sent are claimed again after ``CHECKOUT_SIGNAL_LEASE`` seconds:
a death repeats at most the one in flight, and loses none. Receivers that move money should
therefore be idempotent on (order_id, status).

The lease runs from the claim and is renewed by each mark, for the batch's rows still to send:
a batch of slow receivers keeps its rows while its process lives, each receiver having the whole
lease. A row another worker took meanwhile (its lease ran out: a receiver slower than the lease)
is left to that worker.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from blinker import NamedSignal
from flask import Flask
from sqlalchemy import Table, and_, bindparam, or_, select, tuple_, update
from sqlalchemy.engine import Engine

from .. import signals
from .store import (
    DISPATCHED,
    DISPATCHING,
    PENDING,
    SIGNAL_FAILED,
    events_table,
    outbox_table,
    signal_log_table,
    utcnow,
    write_transaction,
)

log = logging.getLogger(__name__)

CLAIM_BATCH = 20

OUTBOX_SIGNALS: dict[str, NamedSignal] = {
    "webhook_received": signals.webhook_received,
    "kyc_event": signals.kyc_event,
    "auth_event": signals.auth_event,
}


def dispatch_signals(app: Flask, engine: Engine, *, limit: int = 1000,
                     clock: Callable[[], datetime] = utcnow) -> int:
    """Send owed signals, oldest first; return how many were sent (failed ones included).
    ``clock`` times the claims and their leases."""
    lease = timedelta(seconds=float(app.config.get("CHECKOUT_SIGNAL_LEASE", 300)))
    sent = 0
    # webhook_received first: for one delivery it was owed before the status move was.
    for table in (outbox_table, signal_log_table):
        while sent < limit:
            claim = _claim_batch(engine, table, lease, clock)
            if not claim.rows:
                break
            bodies = _event_bodies(engine, {row.event_id for row in claim.rows})
            sent += _send_claimed(app, engine, table, claim, bodies, clock)
    return sent


def status_signal_states(engine: Engine, owed: Collection[tuple[str, str]], *,
                         since: datetime) -> list[str]:
    """The states of the ``order_status_changed`` rows of these (order, status) pairs owed since
    ``since``: whichever worker or thread sent one, its row says so."""
    if not owed:
        return []
    c = signal_log_table.c
    found: list[str] = []
    pairs = sorted(owed)
    with engine.connect() as conn:
        for start in range(0, len(pairs), 200):
            found += [str(state) for (state,) in conn.execute(
                select(c.state).where(tuple_(c.order_id, c.status).in_(pairs[start:start + 200]),
                                      c.created_at >= since))]
    return found


@cache
def _claim_statement(table: Table) -> Any:
    """Take up to CLAIM_BATCH due rows: pending, or claimed by a worker whose lease ran out."""
    due = or_(table.c.state == PENDING,
              and_(table.c.state == DISPATCHING, table.c.claimed_at < bindparam("stale")))
    oldest = (select(table.c.id).where(due).order_by(table.c.id).limit(CLAIM_BATCH)
              .with_for_update(skip_locked=True))
    return (update(table).where(table.c.id.in_(oldest.scalar_subquery()), due)
            .values(state=DISPATCHING, claimed_at=bindparam("now"),
                    attempts=table.c.attempts + 1)
            .returning(*table.c))


@dataclass(frozen=True)
class Claim:
    """Rows this worker claimed and has not sent yet, and the time they were claimed at (or
    their lease last renewed at): what tells them from rows another worker claimed since."""

    rows: list[Any]
    at: datetime


def _claim_batch(engine: Engine, table: Table, lease: timedelta,
                 clock: Callable[[], datetime]) -> Claim:
    """Take due rows, committed before any merchant code runs.

    Small batches: a row is claimed for the lease; each mark renews it (see the module's
    docstring). PostgreSQL skips rows another worker is claiming; SQLite has one writer.
    """
    now = clock()
    with write_transaction(engine) as conn:
        rows = conn.execute(_claim_statement(table), {"now": now, "stale": now - lease}).all()
    return Claim(sorted(rows, key=lambda row: row.id), now)


def _send_claimed(app: Flask, engine: Engine, table: Table, claim: Claim,
                  bodies: dict[int, bytes], clock: Callable[[], datetime]) -> int:
    """Send the claimed rows in order, each marked as soon as its receivers return (so a death
    repeats only the one in flight); return how many were sent."""
    sent = 0
    while claim.rows:
        row = claim.rows[0]
        error = _send(app, table, row, bodies.get(row.event_id))
        claim = _finish(engine, table, row.id, error, Claim(claim.rows[1:], claim.at), clock())
        sent += 1
    return sent


def send_again(app: Flask, engine: Engine, table: Table, row_id: int, *,
               clock: Callable[[], datetime] = utcnow) -> tuple[bool, str | None]:
    """Send one row's signal again now, in this thread, whatever became of it before (sent,
    failed, or waiting): the merchant's desk's "send the signal again". Claimed, sent and marked
    as the dispatcher does its rows, so no worker sends it at the same time. Returns (False,
    None) when another worker is sending it right now; else (True, the receiver's error)."""
    lease = timedelta(seconds=float(app.config.get("CHECKOUT_SIGNAL_LEASE", 300)))
    now = clock()
    with write_transaction(engine) as conn:
        row = conn.execute(
            update(table)
            .where(table.c.id == row_id,
                   or_(table.c.state != DISPATCHING, table.c.claimed_at < now - lease))
            .values(state=DISPATCHING, claimed_at=now, attempts=table.c.attempts + 1)
            .returning(*table.c)).first()
    if row is None:
        return False, None
    error = _send(app, table, row, _event_bodies(engine, {row.event_id}).get(row.event_id))
    _finish(engine, table, row.id, error, Claim([], now), clock())
    return True, error


def _event_bodies(engine: Engine, event_ids: set[int | None]) -> dict[int, bytes]:
    wanted = [event_id for event_id in event_ids if event_id is not None]
    if not wanted:
        return {}
    with engine.connect() as conn:
        return {row.id: row.body for row in conn.execute(
            select(events_table.c.id, events_table.c.body).where(events_table.c.id.in_(wanted)))}


def _send(app: Flask, table: Table, row: Any, body: bytes | None) -> str | None:
    """Call the receivers; return the error, if one raised."""
    event = json.loads(body) if body is not None else None
    try:
        with app.app_context():
            if table is signal_log_table:
                signals.order_status_changed.send(
                    app, order_id=row.order_id, status=row.status,
                    previous_status=row.previous_status, flow=row.flow,
                    order_params=row.order_params, event=event)
            else:
                OUTBOX_SIGNALS[row.signal].send(app, event=event)
    except Exception as exc:  # merchant code: record it, never lose the row
        log.exception("a receiver of %s failed (row %s)", _name(table, row), row.id)
        return f"{type(exc).__name__}: {exc}"[:2000]
    return None


def _finish(engine: Engine, table: Table, row_id: int, error: str | None, rest: Claim,
            now: datetime) -> Claim:
    """Mark one row sent (or failed with ``error``) and renew the lease of the ``rest`` of its
    batch, in one transaction; return the rest still this worker's."""
    with write_transaction(engine) as conn:
        if error is None:
            conn.execute(update(table).where(table.c.id == row_id)
                         .values(state=DISPATCHED, error=None, dispatched_at=now))
        else:
            conn.execute(update(table).where(table.c.id == row_id)
                         .values(state=SIGNAL_FAILED, error=error, dispatched_at=None))
        if not rest.rows:
            return rest
        # Still ours: claimed at the time we claimed (or last renewed) them. Another worker's
        # claim of a row whose lease ran out wrote its own time.
        kept = set(conn.execute(
            update(table).where(table.c.id.in_([row.id for row in rest.rows]),
                                table.c.state == DISPATCHING, table.c.claimed_at == rest.at)
            .values(claimed_at=now).returning(table.c.id)).scalars())
    return Claim([row for row in rest.rows if row.id in kept], now)


def _name(table: Table, row: Any) -> str:
    return "order_status_changed" if table is signal_log_table else row.signal
