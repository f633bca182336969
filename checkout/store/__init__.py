"""The checkout's own tables (SQLAlchemy Core), one engine per app.

Tables are declared in the modules of this package on the shared ``metadata``; ``connect(app)``
creates the engine from ``CHECKOUT_DATABASE_URL`` and creates missing tables. SQLite (the default) is
set up for several threads: WAL journal, a busy timeout, foreign keys on. PostgreSQL is tested.

Several workers usually start at the same moment on a database that has no tables yet; creating
them must not fail in all but one of them (see ``create_tables``).
"""
from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable

from sqlalchemy import Connection, Engine, MetaData, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DisconnectionError, OperationalError
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.schema import CreateColumn

log = logging.getLogger(__name__)

metadata = MetaData()

# Any fixed number: the PostgreSQL advisory lock under which the tables are created.
SCHEMA_LOCK_KEY = 0x636B6F75  # "ckou"

# How many connections a PostgreSQL engine keeps open (more are opened, up to 20, and closed when
# given back to a full pool: each one a server process forked and ended).
POOL_SIZE = 10
# A pooled connection given back less than this many seconds ago is used without a ping.
PING_AFTER_IDLE = 1.0


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(parsed.database)), exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: sqlite3.Connection,
                            _record: ConnectionPoolEntry) -> None:  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            _enable_wal(cur)
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    engine = create_engine(url, pool_size=POOL_SIZE, max_overflow=20)
    _ping_idle_connections(engine)
    return engine


def _ping_idle_connections(engine: Engine) -> None:
    """Ping a pooled connection before use only when it has been idle for a while.

    ``pool_pre_ping`` pings at every checkout: a round trip before each statement's own, and the
    first cost of a webhook acknowledgement. A connection that was working a moment ago is
    still good; one left idle may not be (the database restarted, a firewall or
    ``idle_session_timeout`` closed it), so that one is pinged and replaced if it is dead. A
    connection that breaks in between fails its statement as it would have after a ping, and
    SQLAlchemy then discards the whole pool's connections of that age.
    """
    @event.listens_for(engine, "checkin")
    def _given_back(_dbapi_conn: object, record: ConnectionPoolEntry) -> None:
        record.info["checked_in_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _taken(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry,
               _proxy: object) -> None:
        # A new connection has no entry (``info`` goes with the DBAPI connection): just made.
        given_back = record.info.get("checked_in_at")
        if given_back is None or time.monotonic() - given_back < PING_AFTER_IDLE:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:
            # The pool replaces the connection and tries again with a new one.
            raise DisconnectionError("idle connection found closed") from exc


def _enable_wal(cursor: sqlite3.Cursor, timeout: float = 30.0) -> None:
    """Switch the database to WAL, waiting (like the busy timeout) while another process holds it.

    Changing the journal mode does not wait on the busy timeout: when several workers open a new
    database file at once, all but one may get "database is locked" straight away, and that worker
    would not start. The mode is kept in the file, so a later try finds it set or sets it.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def connect(url: str) -> Engine:
    """Create the engine and any missing table or column."""
    # Import the table modules so that they are registered on ``metadata``.
    from . import tables  # noqa: F401

    engine = make_engine(url)
    create_tables(engine)
    return engine


def create_tables(engine: Engine) -> None:
    """Create the missing tables, also when other processes do the same at the same moment.

    ``create_all`` looks, then creates: two workers booting together both find no table and one of
    them fails ("already exists"), so that worker never starts. On PostgreSQL the look and the
    creation happen in one transaction under an advisory lock, so the second worker waits and then
    finds the tables made. SQLite's driver does not put DDL in that kind of transaction: a worker that
    loses the race looks again. Each loss means another process created a table, so the number of
    tables bounds the number of tries.
    """
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
            metadata.create_all(conn)
            add_missing_columns(conn)
        return
    _retry_lost_races(lambda: metadata.create_all(engine), "already exists",
                      len(metadata.tables) + 1)
    columns = sum(len(table.columns) for table in metadata.tables.values())

    def add() -> None:
        with engine.begin() as conn:
            add_missing_columns(conn)

    _retry_lost_races(add, "duplicate column name", columns + 1)


def _retry_lost_races(step: Callable[[], None], lost: str, tries: int) -> None:
    """Run ``step``; when another process won a race (``lost`` in the error), run it again."""
    for attempt in range(tries):
        try:
            step()
            return
        except OperationalError as exc:
            if lost not in str(exc.orig) or attempt == tries - 1:
                raise


def add_missing_columns(conn: Connection) -> None:
    """Add the columns declared here but missing from tables made by an earlier version.

    ``create_all`` only makes whole tables, so a column added in a later version would be missing
    from every existing database, and each statement naming it would fail. A new column must be
    nullable or have a server default (existing rows need a value); anything else needs a real
    migration, and start-up says so rather than failing on the first request. Indexes of a new
    column are not made here.
    """
    inspector = inspect(conn)
    for table in metadata.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            if not column.nullable and column.server_default is None:
                raise RuntimeError(
                    f"the column {table.name}.{column.name} is missing from the database and "
                    "cannot be added to existing rows (it has no server default)")
            log.info("adding the column %s.%s", table.name, column.name)
            spec = CreateColumn(column).compile(dialect=conn.dialect)
            conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {spec}"))
