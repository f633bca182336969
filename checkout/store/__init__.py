"""The checkout's own tables (SQLAlchemy Core), one engine per app.

Tables are declared on the shared ``metadata`` by the modules that use them (``tables`` imports
them all); their schema is made and changed by migrations only (``schema``, revisions in
``migrations/versions``). ``connect(url)`` creates the engine from ``CHECKOUT_DATABASE_URL`` and
brings the database to this code's revision. SQLite (the default) is set up for several threads:
WAL journal, a busy timeout, foreign keys on. PostgreSQL is tested.
"""
from __future__ import annotations

import os
import sqlite3
import time

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import ConnectionPoolEntry

metadata = MetaData()


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
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


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


def connect(url: str, *, upgrade: bool = True) -> Engine:
    """Create the engine and make sure its tables are at this code's revision.

    ``upgrade``: bring a database behind it up to date (under a lock, see
    :func:`checkout.store.schema.prepare`); else refuse it (``SchemaBehind``)."""
    from . import tables  # noqa: F401 - registers every table on ``metadata``
    from .schema import prepare

    engine = make_engine(url)
    try:
        prepare(engine, auto_upgrade=upgrade)
    except BaseException:
        engine.dispose()
        raise
    return engine
