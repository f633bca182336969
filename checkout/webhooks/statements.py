"""The receiver's hot statements, built once per dialect with bound parameters.

Building a SQLAlchemy statement costs far more than executing a cached one; at hundreds of
deliveries a second that CPU (spent while holding SQLite's one writer) is what stretched the
acknowledgement's tail. Each function returns the same statement object for a dialect, so
SQLAlchemy's compiled cache is hit every time.
"""
from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import bindparam, case, func, or_, select, update

from .store import PROCESSED, STORED, dialect_insert, events_table, orders_table, signal_log_table


@cache
def insert_event(dialect: str) -> Any:
    """INSERT a delivery unless its body was seen; RETURNING its id and state if inserted
    (nothing for one seen before)."""
    columns = ("body_sha256", "body", "headers", "received_at", "last_seen_at", "duplicates",
               "attempts", "state", "error", "event_type", "order_id", "status", "updated_at",
               "received_owed")
    return (dialect_insert(dialect, events_table)
            .values({name: bindparam(name) for name in columns})
            .on_conflict_do_nothing(index_elements=["body_sha256"])
            .returning(events_table.c.id, events_table.c.state))


COUNT_DUPLICATE = (
    update(events_table).where(events_table.c.body_sha256 == bindparam("digest"))
    .values(duplicates=events_table.c.duplicates + 1, last_seen_at=bindparam("now"))
    .returning(events_table.c.id, events_table.c.state))

STORED_IDS = (select(events_table.c.id).where(events_table.c.state == STORED)
              .order_by(events_table.c.id).limit(bindparam("batch")))

# Claiming stored events takes two statements. First lock those still stored (PostgreSQL skips
# rows another worker is claiming right now; SQLite ignores FOR UPDATE and has one writer):
LOCK_STORED = (
    select(events_table.c.id)
    .where(events_table.c.id.in_(bindparam("ids", expanding=True)),
           events_table.c.state == STORED)
    .with_for_update(skip_locked=True))

# ... then claim them; the state condition decides on SQLite, whose writer lock is taken here.
# One UPDATE with the locking SELECT as its subquery was planned, once the statistics said that
# almost no event is stored, as a loop running the subquery again for every stored event: with a
# backlog of thousands, each claim took a second.
CLAIM_EVENTS = (
    update(events_table)
    .where(events_table.c.id.in_(bindparam("ids", expanding=True)),
           events_table.c.state == STORED)
    .values(state=PROCESSED, processed_at=bindparam("now"), error=None,
            attempts=events_table.c.attempts + 1)
    .returning(events_table.c.id, events_table.c.body))

# The first delivery's webhook_received is owed once, even if the event is replayed.
OWE_RECEIVED = (
    update(events_table)
    .where(events_table.c.id.in_(bindparam("ids", expanding=True)),
           events_table.c.received_owed == 0)
    .values(received_owed=1)
    .returning(events_table.c.id))

SET_OUTCOME = (
    update(events_table).where(events_table.c.id.in_(bindparam("ids", expanding=True)))
    .values(outcome=func.coalesce(events_table.c.outcome, bindparam("outcome"))))

_ORDER_COLUMNS = ("order_id", "flow", "status", "status_updated_at", "order_params", "summary",
                  "hash", "refreshed_at", "fetch_due_at", "created_at")


@cache
def move_order(dialect: str) -> Any:
    """The newer-only status move: one upsert, applied only if ``updatedAt`` is strictly newer."""
    orders = orders_table.c
    insert = dialect_insert(dialect, orders_table).values(
        {name: bindparam(name) for name in _ORDER_COLUMNS}
        | {"previous_status": None, "status_source": "webhook", "version": 1, "fetch_seq": 1,
           "fetch_attempts": 0})
    new = insert.excluded
    return insert.on_conflict_do_update(
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
            # A fetch is asked for (fetch_due_at given) or the pending one is kept.
            "fetch_due_at": func.coalesce(new.fetch_due_at, orders.fetch_due_at),
            "fetch_seq": orders.fetch_seq + 1,
            "fetch_attempts": 0,
        },
        # The one rule of order: strictly newer updatedAt wins; equal or older changes nothing.
        where=or_(orders.status_updated_at.is_(None),
                  orders.status_updated_at < new.status_updated_at),
    ).returning(orders.status, orders.previous_status, orders.flow, orders.order_params)


_SIGNAL_COLUMNS = ("order_id", "status", "previous_status", "flow", "order_params", "event_id",
                   "created_at", "source")


@cache
def owe_signal(dialect: str) -> Any:
    """INSERT (order_id, status) into the signal log unless present; RETURNING id if inserted."""
    return (dialect_insert(dialect, signal_log_table)
            .values({name: bindparam(name) for name in _SIGNAL_COLUMNS}
                    | {"state": "pending", "attempts": 0})
            .on_conflict_do_nothing(index_elements=["order_id", "status"])
            .returning(signal_log_table.c.id))
