"""The intake: new deliveries into ``checkout_webhook_events``, committed before they are answered.

Concurrent deliveries of a process are written together (:mod:`.group_commit`): one INSERT that
commits on its own, ``ON CONFLICT (body_sha256) DO NOTHING``, answering each new row's id. A
connection is taken from the pool for each batch, so the pool's ping of an idle connection covers
a restarted database. The database being unavailable fails the whole batch (each sender gets a
503 and retries); any other refusal is one delivery's, which fails alone while the others are
stored.
"""
from __future__ import annotations

import weakref
from typing import Any

from sqlalchemy.engine import Engine, Row
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from ..process_local import ProcessLocal
from . import statements
from .group_commit import GroupCommit
from .store import autocommit_connection

# At most this many deliveries in one INSERT: 50 rows of 14 values stay under the 999 bound
# parameters of older SQLite versions, and one statement commits them all at once.
MAX_BATCH = 50

Result = Row[Any] | None | Exception    # the new row; None: stored before; or why it failed


def insert_new(engine: Engine, batch: list[dict[str, Any]]) -> list[Result]:
    """INSERT the deliveries not seen before, in one statement; for each one its new row (id,
    state), or None if its body was stored before (also by an earlier copy in this batch)."""
    try:
        with autocommit_connection(engine) as conn:
            dialect = conn.dialect.name
            rows = conn.execute(statements.insert_events(dialect),
                                statements.insert_events_params(dialect, batch)).all()
    except OperationalError:
        raise                       # the database is unavailable: each delivery gets its 503
    except SQLAlchemyError as exc:
        if len(batch) == 1:
            return [exc]
        # Whatever the database refused was in one delivery: the others are stored without it.
        return [result for values in batch for result in insert_new(engine, [values])]
    inserted = {row.body_sha256: row for row in rows}
    return [inserted.pop(values["body_sha256"], None) for values in batch]


# A process forked while one of its threads was writing a batch must not inherit a committer that
# waits for that batch for ever (the thread is not in the child): each process has its own.
Intake = GroupCommit[dict[str, Any], Row[Any] | None]
_intakes: ProcessLocal[weakref.WeakKeyDictionary[Engine, Intake]] = \
    ProcessLocal(weakref.WeakKeyDictionary)


def intake(engine: Engine) -> Intake:
    """This process's group commit of new deliveries into ``engine``'s database:
    ``intake(engine).submit(values)`` stores one (``values``: a row of the events table) with
    whatever else is being stored now, and returns its row once committed (None: seen before)."""
    with _intakes.lock:
        found = _intakes.value.get(engine)
        if found is None:
            ref = weakref.ref(engine)       # the committer must not keep its engine alive

            def write(batch: list[dict[str, Any]]) -> list[Result]:
                engine = ref()
                assert engine is not None   # a delivery is being stored into it
                return insert_new(engine, batch)

            found = _intakes.value[engine] = GroupCommit(write, MAX_BATCH)
        return found
