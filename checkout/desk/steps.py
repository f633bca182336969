"""Step events: each step of a flow a session reached, once, in the database.

A count kept in a process's memory would start again at each restart and differ between workers,
and one kept in the session would go with it after seven days. The UNIQUE (session, step) key of
``checkout_step_events`` makes "the first time" one insert that either happens or does not,
whichever worker serves the page (the metrics' ``checkout_funnel_sessions_total`` counts it then),
and keeps when (the order's timeline). The same transaction appends the step to the session's row
of ``checkout_step_sessions`` (when it opened, the steps it reached in order): the funnel
(:mod:`.funnel`) reads a month of sessions there in one short scan, where grouping a month of
step events by session took most of a second at 100,000 orders. A session is named by a keyed
digest of its id (:func:`.digests.session_key`); nothing else of the session or its user is kept.

Besides the flows' own steps, two events frame a session: :data:`OPENED` when it is opened and
:data:`ORDERED` when its order is created.
"""
from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.engine import Engine

from ..store.tables import step_events_table, step_sessions_table
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


@cache
def _append(dialect: str) -> Any:
    """The session's row: made by its first step, each later one appended (one statement, so
    two workers recording two steps at once both land)."""
    table = step_sessions_table.c
    insert = dialect_insert(dialect, step_sessions_table).values(
        session_key=bindparam("session_key"), flow=bindparam("flow"),
        opened_at=bindparam("reached_at"), steps=bindparam("step"))
    return insert.on_conflict_do_update(
        index_elements=[table.session_key],
        set_={"steps": table.steps + "," + insert.excluded.steps})


def record_step(engine: Engine, session_key: str, flow: str, step: str, at: datetime) -> bool:
    """Record that the session reached ``step``; True the first time only."""
    values = {"session_key": session_key, "step": step[:32], "flow": flow[:16], "reached_at": at}
    # Its first statement writes: on SQLite it waits in the busy handler, as a session's own
    # writes do, and no other writer can commit between its two statements.
    with engine.begin() as conn:
        first = conn.execute(_insert(conn.dialect.name), values).first() is not None
        if first:
            conn.execute(_append(conn.dialect.name), values)
    return first
