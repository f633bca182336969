"""What the webhook receiver's code shares about its tables (declared in
:mod:`checkout.store.tables`): the states of an event and of a signal, and time in UTC. How they
are written (SQLite's writers taking turns, the dialect's INSERT) is :mod:`checkout.store.writing`'s.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import overload

from ..store.tables import (
    events_table,
    orders_table,
    outbox_table,
    signal_log_table,
    watch_table,
)
from ..store.writing import dialect_insert, write_transaction

# Processing states of an event.
STORED, PROCESSED, FAILED, INVALID = "stored", "processed", "failed", "invalid"
# Dispatch states of a signal (log or outbox row).
PENDING, DISPATCHING, DISPATCHED, SIGNAL_FAILED = "pending", "dispatching", "dispatched", "failed"

# The webhook code's tables and how they are written, named here too for the package's modules.
__all__ = ["events_table", "orders_table", "outbox_table", "signal_log_table", "watch_table",
           "dialect_insert", "write_transaction"]


def utcnow() -> datetime:
    return datetime.now(UTC)


@overload
def aware(value: datetime) -> datetime: ...
@overload
def aware(value: datetime | None) -> datetime | None: ...
def aware(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes even for timezone-aware columns; they are UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value
