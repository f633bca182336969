"""Step events: each step of a flow a session reached, once, in the database (``checkout_step_events``).

The funnel (:mod:`.funnel`, and the metrics' ``checkout_funnel_sessions_total``) is read from
them: a count kept in a process's memory would start again at each restart and differ between
workers, and one kept in the session would go with it after seven days. The UNIQUE (session, step)
key makes "the first time" one insert that either happens or does not, whichever worker serves
the page. A session is named by a keyed digest of its id (:func:`.digests.session_key`); nothing
else of the session or its user is kept here.

Besides the flows' own steps, two events frame a session: :data:`OPENED` when it is opened and
:data:`ORDERED` when its order is created.
"""
from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.engine import Engine

from ..store.tables import step_events_table
from ..store.writing import dialect_insert

__all__ = ["OPENED", "ORDERED", "record_step"]

OPENED, ORDERED = "opened", "ordered"


@cache
def _insert(dialect: str) -> Any:
    return (dialect_insert(dialect, step_events_table)
            .values({name: bindparam(name) for name in ("session_key", "step", "flow",
                                                         "reached_at")})
            .on_conflict_do_nothing(index_elements=["session_key", "step"])
            .returning(step_events_table.c.step))


def record_step(engine: Engine, session_key: str, flow: str, step: str, at: datetime) -> bool:
    """Record that the session reached ``step``; True the first time only. One statement: on
    SQLite it waits in the busy handler, as a session's own writes do."""
    with engine.begin() as conn:
        first = conn.execute(_insert(conn.dialect.name), {
            "session_key": session_key, "step": step[:32], "flow": flow[:16],
            "reached_at": at}).first()
    return first is not None
