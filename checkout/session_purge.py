"""Deleting expired checkout sessions: ``flask checkout sessions purge`` and a sweep once an hour.

An expired session can no longer be opened (its pages answer 404), but its row still holds what
the user typed (wallet address, phone number, email) and the order it created. Keeping it serves
no one, so expired rows are deleted: by the CLI (``--older-than-days`` keeps recent ones for
inspection), and opportunistically by each process's webhook dispatcher thread at most once per
``CHECKOUT_SESSION_PURGE_INTERVAL`` seconds. Both also delete the KYC levels the upstream has not
confirmed for ``CHECKOUT_KYC_REMEMBER_DAYS`` (:mod:`checkout.kyc.memory`).

Deleting cannot let a launch token open a second session: a session lives 7 days
(``checkout.sessions.SESSION_LIFETIME``) and a token at most 30 minutes, so by the time its session
is deleted the token has long been refused as expired.
"""
from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.engine import Engine

from .kyc import memory as kyc_memory
from .pacing import Schedule
from .store.tables import sessions_table

log = logging.getLogger(__name__)

def purge_expired_sessions(engine: Engine, *, older_than: timedelta = timedelta(0),
                           now: datetime | None = None) -> int:
    """Delete sessions that expired more than ``older_than`` ago; return how many."""
    if older_than < timedelta(0):
        raise ValueError("older_than must not be negative")
    cutoff = (now or datetime.now(UTC)) - older_than
    with engine.begin() as conn:
        result = conn.execute(delete(sessions_table).where(sessions_table.c.expires_at < cutoff))
    return int(result.rowcount or 0)


def maybe_purge(engine: Engine, schedule: Schedule, *, interval: float,
                remember_days: float) -> int | None:
    """Purge expired sessions (and KYC levels not confirmed for ``remember_days``) if this process
    has not done so in the last ``interval`` seconds (``schedule``: this process's clock of it).

    Returns the number deleted, or None when it was not this call's turn. A failure (database
    down) is logged and waits for the next interval: the sweep that calls this must go on.
    """
    if not schedule.due(interval):
        return None
    try:
        deleted = purge_expired_sessions(engine)
        forgotten = kyc_memory.forget_older_than(engine, remember_days)
    except Exception:  # the database may be down; try again next interval
        log.exception("purging expired checkout sessions failed")
        return None
    if deleted:
        log.info("purged %d expired checkout sessions", deleted)
    if forgotten:
        log.info("forgot %d KYC levels the upstream has not confirmed since %g days", forgotten,
                 remember_days)
    return deleted
