"""The checkout's own tables (SQLAlchemy Core), one engine per app.

Tables are declared in the modules of this package on the shared ``metadata``; ``connect(app)``
creates the engine from ``CHECKOUT_DATABASE_URL`` and creates missing tables. SQLite (the default) is
set up for several threads: WAL journal, a busy timeout, foreign keys on. PostgreSQL is tested.
"""
from __future__ import annotations

import os

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.engine import make_url

metadata = MetaData()


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(parsed.database)), exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def connect(url: str) -> Engine:
    """Create the engine and any missing table."""
    # Import the table modules so that they are registered on ``metadata``.
    from . import tables  # noqa: F401

    engine = make_engine(url)
    metadata.create_all(engine)
    return engine
