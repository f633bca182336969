"""The checkout's own tables (SQLAlchemy Core), one engine per app.

Every table is declared in ``tables`` on one ``metadata``; their schema is made and changed by
migrations only (``schema``, revisions in ``migrations/versions``). ``make_engine(url)`` creates
the engine from ``CHECKOUT_DATABASE_URL``; ``schema.prepare`` brings the database to this code's
revision (``schema.connect`` does both). SQLite (the default) is set up for several threads: WAL
journal, a busy timeout, foreign keys on. PostgreSQL is tested.
"""
from __future__ import annotations

import os
import sqlite3
import time
import weakref
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry

from .availability import Availability

# How many connections a PostgreSQL engine keeps open (more are opened, up to 20, and closed when
# given back to a full pool: each one a server process forked and ended).
POOL_SIZE = 10
# A pooled connection given back less than this many seconds ago is used without a ping.
PING_AFTER_IDLE = 1.0


# An error SQLAlchemy raises names the statement's parameters, and the checkout logs such errors
# (a webhook not stored, a session not saved): the parameters are delivery bodies, phone numbers,
# KYC fields. They are left out of every error of the checkout's engines.
ENGINE_OPTIONS = {"hide_parameters": True}


def database_failure(exc: BaseException) -> str:
    """A database error in one line for a log: the driver's error class and its first line (no
    statement, no parameter, no traceback)."""
    cause = getattr(exc, "orig", None) or exc
    first = (str(cause).strip().splitlines() or [""])[0][:200]
    return f"{type(cause).__name__}: {first}" if first else type(cause).__name__


def make_engine(url: str) -> Engine:
    engine = _make_engine(url)
    _engines.add(engine)
    return engine


# Every engine made in this process, for _after_fork. Weakly: an app thrown away frees its engine.
_engines: weakref.WeakSet[Engine] = weakref.WeakSet()
# The availability of each PostgreSQL engine's database (.availability): its waits are bounded.
_availabilities: weakref.WeakKeyDictionary[Engine, Availability] = weakref.WeakKeyDictionary()


def availability_of(engine: Engine) -> Availability:
    """How ``engine``'s database answers, as this process has seen it. A database whose waits
    are not bounded (SQLite: a file, which does not freeze) is never told down: a fresh
    Availability that only says each failure is news."""
    return _availabilities.get(engine) or Availability()


def _after_fork() -> None:
    """In a child process, leave the parent's pooled connections to the parent.

    Gunicorn's ``--preload`` makes the app, and with it an engine whose pool holds the connection
    that brought the schema up to date, in the master, then forks the workers. A worker using that
    inherited connection would share one socket (or one SQLite handle) with its siblings: their
    statements interleave on the wire and each reads the others' answers. The child drops the
    pool's connections without closing them (closing would end the parent's session) and opens
    its own.
    """
    for engine in list(_engines):
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_after_fork)


# How long a SQLite writer waits for its turn before the write fails (then a webhook is answered
# 503 and sent again): SQLite's busy timeout, and the checkout's own turn-taking (webhooks.store).
SQLITE_BUSY_SECONDS = 30.0


def sqlite_file(url: URL) -> str | None:
    """The path of a SQLite database file; None for an in-memory database or a ``file:`` URI
    (whose options the checkout does not read)."""
    database = url.database
    if url.get_backend_name() != "sqlite" or not database or database == ":memory:" or \
            database.startswith("file:"):
        return None
    return database


def _make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_file(parsed)
        if path is not None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False,
                                                  "timeout": SQLITE_BUSY_SECONDS},
                               **ENGINE_OPTIONS)

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
    engine = create_engine(url, pool_size=POOL_SIZE, max_overflow=20,
                           pool_timeout=DATABASE_WAIT, connect_args=_postgresql_bounds(parsed),
                           **ENGINE_OPTIONS)
    if engine.dialect.driver == "psycopg":
        from .bounded import bounded_connections

        availability = _availabilities[engine] = Availability()
        bounded_connections(engine, DATABASE_WAIT + 1.0, availability)
    _ping_idle_connections(engine)
    return engine


# Seconds a checkout request's waits on a PostgreSQL database may take in all (.availability):
# its page, a webhook's 503 or a probe's answer then comes within three seconds of a database
# that stopped answering. Ours take milliseconds.
REQUEST_DATABASE_TIME = 2.0

# Seconds any wait on a PostgreSQL database may take before it fails (a webhook then answered 503,
# a page our error page): connecting, a connection from the pool, a statement. Ours take
# milliseconds; a database that takes seconds is unwell, and a worker waiting on it is a worker
# the shop's own pages cannot use. Schema upgrades lift it (schema.upgrade).
DATABASE_WAIT = 5.0


def _postgresql_bounds(url: URL) -> dict[str, Any]:
    """libpq's connect timeout, and the server's statement and lock timeouts (a database that is
    slow, or a lock held too long); a server that stops answering altogether is bounded on our
    side (:mod:`.bounded`). Settings given in the URL's query stay as given."""
    given = set(url.query)
    args: dict[str, Any] = {}
    if "connect_timeout" not in given:
        # libpq's least (whole seconds, 2 or more): a connection is made in milliseconds, and a
        # request's whole time for the database is REQUEST_DATABASE_TIME.
        args["connect_timeout"] = 2
    if "options" not in given:
        wait_ms = int(DATABASE_WAIT * 1000)
        args["options"] = f"-c statement_timeout={wait_ms} -c lock_timeout={wait_ms}"
    return args


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
