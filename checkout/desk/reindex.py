"""``flask checkout desk reindex``: put in the desk's index the orders the checkout kept before it
had one (an upgrade from a release without the desk), or whose keys a new ``CHECKOUT_LAUNCH_SECRET``
changed (:mod:`.digests`).

It reads what is still there: each stored order (its latest webhook's summary, the full order as
last read) and each session that made an order and is not purged yet (what the customer gave and
was shown). It only adds: a row's known facts stay, and keys already there are kept. It can run
while the checkout serves: the index is filled in the same way its writers fill it.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from ..sessions import SessionStore
from ..store.tables import orders_table, sessions_table
from ..store.writing import write_transaction
from . import index
from .journal import Journal

__all__ = ["reindex"]

BATCH = 500


def _batches(engine: Engine, query: Any) -> Iterator[Sequence[Any]]:
    """The rows of ``query`` (ordered by its key, the first column), a batch at a time."""
    key = list(query.selected_columns)[0]
    last = None
    while True:
        page = query if last is None else query.where(key > last)
        with engine.connect() as conn:
            rows = conn.execute(page.order_by(key).limit(BATCH)).all()
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def reindex(engine: Engine, journal: Journal, sessions: SessionStore) -> int:
    """Index every stored order and every live session's order; how many orders were read."""
    o, s = orders_table.c, sessions_table.c
    read = 0
    now = datetime.now(UTC)
    stored = select(o.order_id, o.flow, o.summary, o.full_order, o.order_params, o.hash)
    for rows in _batches(engine, stored):
        with write_transaction(engine) as conn:
            for row in rows:
                told = [index.facts_from_summary(row.summary, row.flow) if row.summary else None]
                if row.full_order and row.flow in ("onramp", "offramp"):
                    told.append(index.facts_from_order(row.order_id, row.flow, row.full_order))
                told.append(index.OrderFacts(
                    row.order_id, flow=row.flow, order_params=row.order_params,
                    hashes=(row.hash,) if row.hash else ()))
                for facts in told:
                    if facts is not None:
                        index.record(conn, facts, journal.launch_secret, now)
        read += len(rows)
    made_here = select(s.id).where(s.order_id.is_not(None))
    for rows in _batches(engine, made_here):
        found = [session for session in map(sessions.get, (row.id for row in rows))
                 if session is not None and session.order_id]
        with write_transaction(engine) as conn:
            for session in found:
                index.record(conn, journal.facts(session), journal.launch_secret, now)
        read += len(found)
    return read
