"""The intake: new deliveries into ``checkout_webhook_events``, committed before they are answered.

Concurrent deliveries of a process are written together (:mod:`.group_commit`): one INSERT that
commits on its own, ``ON CONFLICT (body_sha256) DO NOTHING``, answering each new row's id.

That INSERT runs on a connection the intake holds while deliveries keep coming, through the
driver's own cursor. The statement is still SQLAlchemy's (compiled once per dialect, and per batch
size on SQLite), and every value still goes through its column type's bind processor, so a row
is stored exactly as SQLAlchemy would store it. What is left out is SQLAlchemy's work around each
execution (a pool checkout and checkin, the isolation level set and reset, the compiled cache,
result rows), which cost about twice the database's own work at batches of 15 (measured on SQLite:
125 µs a delivery against 42), on the route that answers hundreds of deliveries a second.

The held connection goes back to the pool after :data:`~checkout.store.PING_AFTER_IDLE` seconds
without a delivery, so the next one starts from the pool, which pings an idle connection first
(a restarted database costs no delivery a 503). Errors are raised as SQLAlchemy's, without their
parameters (bodies carry personal data): a connection that broke is dropped, and the database
being unavailable fails the whole batch (each sender gets a 503 and retries); any other refusal
is one delivery's, which fails alone while the others are stored.
"""
from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Any, NamedTuple

from sqlalchemy.engine import Engine
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.pool import PoolProxiedConnection

from .. import store as database
from . import statements
from .group_commit import GroupCommit
from .store import events_table, sqlite_writer_turn

# At most this many deliveries in one INSERT: 50 rows of 14 values stay under the 999 bound
# parameters of older SQLite versions, and one statement commits them all at once.
MAX_BATCH = 50


class Stored(NamedTuple):
    """A new delivery's row: its id and processing state."""

    id: int
    state: str


Result = Stored | None | Exception      # the new row; None: stored before; or why it failed


class Intake:
    """This process's intake into one engine's database (:func:`intake`)."""

    def __init__(self, engine: Engine) -> None:
        self.pid = os.getpid()
        self._engine = weakref.ref(engine)      # the intake must not keep its engine alive
        self._dialect = engine.dialect
        self._group: GroupCommit[dict[str, Any], Stored | None] = GroupCommit(self._write,
                                                                              MAX_BATCH)
        self._statements: dict[int, _Statement] = {}
        # Only the group commit's leader, one thread at a time, uses the connection.
        self._connection: PoolProxiedConnection | None = None
        self._last_used = 0.0

    def submit(self, values: dict[str, Any]) -> Stored | None:
        """Store one delivery (``values``: a row of the events table) with whatever else is being
        stored now; its row once committed, or None if its body was stored before."""
        return self._group.submit(values)

    def _write(self, batch: list[dict[str, Any]]) -> list[Result]:
        engine = self._engine()
        assert engine is not None       # a delivery is being stored into it
        with sqlite_writer_turn(engine):
            return self.insert(engine, batch)

    def insert(self, engine: Engine, batch: list[dict[str, Any]]) -> list[Result]:
        """INSERT the deliveries not seen before, in one statement; for each one its new row, or
        None if its body was stored before (also by an earlier copy in this batch)."""
        try:
            rows = self._execute(engine, batch)
        except OperationalError:
            raise                       # the database is unavailable: each delivery gets its 503
        except DBAPIError as exc:
            if len(batch) == 1:
                return [exc]
            # Whatever the database refused was in one delivery: the others are stored without it.
            return [result for values in batch for result in self.insert(engine, [values])]
        inserted = {digest: Stored(event_id, state) for digest, event_id, state in rows}
        return [inserted.pop(values["body_sha256"], None) for values in batch]

    def _execute(self, engine: Engine, batch: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        dbapi = self._dialect.loaded_dbapi
        statement = self._statement(len(batch))
        try:
            connection = self._connect(engine)
        except dbapi.Error as exc:      # the pool gives the driver's own error: no database
            raise DBAPIError.instance(None, None, exc, dbapi.Error, hide_parameters=True,
                                      connection_invalidated=True, dialect=self._dialect
                                      ) from exc
        driver_connection = connection.driver_connection
        assert driver_connection is not None
        cursor = driver_connection.cursor()
        try:
            cursor.execute(statement.sql, statement.parameters(batch))
            rows: list[tuple[Any, ...]] = cursor.fetchall()
        except dbapi.Error as exc:
            broken = self._dialect.is_disconnect(exc, driver_connection, cursor)
            if broken:
                self._drop(invalidate=True)
            # Without parameters: they are the deliveries' bodies.
            raise DBAPIError.instance(statement.sql, None, exc, dbapi.Error,
                                      hide_parameters=True, connection_invalidated=broken,
                                      dialect=self._dialect) from exc
        finally:
            cursor.close()
        self._last_used = time.monotonic()
        return rows

    def _statement(self, size: int) -> _Statement:
        if self._dialect.name == "postgresql":
            size = 0                    # one text for every batch size
        found = self._statements.get(size)
        if found is None:
            found = self._statements[size] = _Statement(self._dialect, size)
        return found

    def _connect(self, engine: Engine) -> PoolProxiedConnection:
        if self._connection is not None and \
                time.monotonic() - self._last_used >= database.PING_AFTER_IDLE:
            self._drop()                # back to the pool, which pings it when it is next taken
        if self._connection is None:
            connection = engine.raw_connection()
            try:
                self._autocommit(connection, True)
            except BaseException:
                connection.invalidate()
                raise
            self._connection = connection
        return self._connection

    def _drop(self, *, invalidate: bool = False) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if not invalidate:
            try:
                self._autocommit(connection, False)
            except Exception:           # not fit for the pool: it opens a new one instead
                invalidate = True
        if invalidate:
            connection.invalidate()
        else:
            connection.close()

    def _autocommit(self, connection: PoolProxiedConnection, on: bool) -> None:
        # Each INSERT commits on its own (no BEGIN and COMMIT around it: on PostgreSQL two round
        # trips more). Set back before the connection returns to the pool, where others expect
        # transactions.
        driver_connection = connection.dbapi_connection
        assert driver_connection is not None        # a live connection of the pool
        if on:
            self._dialect.set_isolation_level(driver_connection, "AUTOCOMMIT")
        else:
            self._dialect.reset_isolation_level(driver_connection)


class _Statement:
    """The INSERT of a batch as the driver takes it: SQLAlchemy's statement compiled for the
    dialect, and each value through its type's bind processor."""

    def __init__(self, dialect: Dialect, size: int) -> None:
        self.postgresql = dialect.name == "postgresql"
        if self.postgresql:
            compiled = statements.insert_events("postgresql").compile(dialect=dialect)
            # One array per column: each processor takes the column's list.
            self.processors = {name: compiled.binds[name].type.bind_processor(dialect)
                               for name in statements.EVENT_COLUMNS}
        else:
            compiled = statements.insert_event_rows(size).compile(dialect=dialect)
            self.processors = {name: events_table.c[name].type.bind_processor(dialect)
                               for name in statements.EVENT_COLUMNS}
            # Positional: which row and column each "?" is, as SQLAlchemy ordered them (a key
            # not listed here, such as a column default's, fails the first batch loudly).
            keys = {f"{name}_{row}": (row, name)
                    for row in range(size) for name in statements.EVENT_COLUMNS}
            self.positions = [keys[key] for key in compiled.positiontup or ()]
        self.sql = compiled.string

    def parameters(self, batch: list[dict[str, Any]]) -> Any:
        process = self.processors
        if self.postgresql:
            columns = {name: [values[name] for values in batch] for name in process}
            return {name: (p(columns[name]) if (p := process[name]) else columns[name])
                    for name in process}
        return [p(batch[row][name]) if (p := process[name]) else batch[row][name]
                for row, name in self.positions]


_intakes: weakref.WeakKeyDictionary[Engine, Intake] = weakref.WeakKeyDictionary()
_guard = threading.Lock()
# Intakes made before this process was forked: their connections are the parent's, never to be
# used or closed here (closing one would end the parent's session). Kept, untouched.
_inherited: list[Intake] = []


def intake(engine: Engine) -> Intake:
    """This process's intake into ``engine``'s database."""
    with _guard:
        found = _intakes.get(engine)
        if found is None or found.pid != os.getpid():
            if found is not None:
                _inherited.append(found)
            found = _intakes[engine] = Intake(engine)
        return found
