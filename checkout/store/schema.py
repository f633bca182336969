"""Schema migrations of the checkout's tables: Alembic, driven from code (no alembic.ini).

The revisions are in ``migrations/versions/`` beside this module and ship in the wheel. A
database records its revision in its own table, ``checkout_alembic_version``, so that a host site
that runs Alembic on the same database (``alembic_version``) is never confused with it.

At start-up (:func:`prepare`) a database at the code's head is used as it is; one behind it is
upgraded under a lock (``CHECKOUT_DATABASE_AUTO_UPGRADE``, the default) or refused with a message
naming ``flask checkout db upgrade``; one at a revision this code does not know (a newer release
upgraded it, then was rolled back) is always refused. Downgrades are not supported.

The lock: on PostgreSQL a transaction-scoped advisory lock, and the whole upgrade in that one
transaction (PostgreSQL's DDL is transactional: a failed upgrade leaves nothing half done). On a
SQLite file a ``BEGIN IMMEDIATE`` transaction, which holds the database's write lock: another
process waits for it (busy timeout), then finds the database upgraded. Several workers booting
together on an empty or an old database therefore all start, and the upgrade runs once.

Revision 0001 is the schema as released before migrations existed; it also adopts the databases
those releases made (see its docstring). The script directory is read once per process.
"""
from __future__ import annotations

import functools
import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from alembic.config import Config
from alembic.runtime.environment import EnvironmentContext
from alembic.runtime.migration import MigrationContext
from alembic.script import Script, ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.pool import ConnectionPoolEntry, NullPool

from ..errors import SchemaAhead, SchemaBehind, SchemaError
from . import ENGINE_OPTIONS, _enable_wal, make_engine
from .tables import metadata

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
VERSION_TABLE = "checkout_alembic_version"
# Where revisions are read from. A tuple, so that a test can add a folder of its own.
VERSION_LOCATIONS: tuple[str, ...] = (str(MIGRATIONS_DIR / "versions"),)
# Any fixed number: the PostgreSQL advisory lock under which the schema is changed.
SCHEMA_LOCK_KEY = 0x636B6F75  # "ckou"
# How long a process waits for another one's SQLite upgrade (its busy timeout), in milliseconds.
SQLITE_LOCK_WAIT_MS = 300_000
UPGRADE_COMMAND = "flask checkout db upgrade"

# Alembic's ``op`` and ``context`` are module-level proxies: one migration run at a time per process.
_run_lock = threading.Lock()


@functools.cache
def _script_directory(locations: tuple[str, ...]) -> ScriptDirectory:
    return ScriptDirectory(str(MIGRATIONS_DIR), version_locations=list(locations))


def scripts() -> ScriptDirectory:
    """The revisions this code knows (read from disk once per process)."""
    return _script_directory(VERSION_LOCATIONS)


def head() -> str:
    found = scripts().get_current_head()
    if found is None:  # pragma: no cover - the package ships revisions
        raise RuntimeError("no schema revision found in " + ", ".join(VERSION_LOCATIONS))
    return found


def history() -> list[Script]:
    """Every revision this code knows, newest first."""
    return list(scripts().walk_revisions())


def describe(revision: str | None) -> str:
    return revision if revision is not None else "none"


@dataclass(frozen=True)
class Status:
    """Where a database stands against this code: ``current`` is its recorded revision (None:
    nothing recorded, i.e. an empty database or one made before migrations existed)."""

    current: str | None
    head: str
    known: bool

    @property
    def at_head(self) -> bool:
        return self.current == self.head

    @property
    def ahead(self) -> bool:
        return not self.known

    @property
    def behind(self) -> bool:
        return self.known and not self.at_head


def _recorded(conn: Connection) -> list[str]:
    """The revisions recorded in the database (read directly: Alembic's context logs each time)."""
    if not inspect(conn).has_table(VERSION_TABLE):
        return []
    return sorted(conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars())


def _status_of(conn: Connection) -> Status:
    heads = _recorded(conn)
    # Only one line of history is ever made; a second head would be a revision of a newer
    # release on a branch this code does not have: unknown all the same.
    current = ",".join(heads) if heads else None
    known = current is None or (len(heads) == 1 and _knows(heads[0]))
    return Status(current=current, head=head(), known=known)


def _knows(revision: str) -> bool:
    try:
        return scripts().get_revision(revision) is not None
    except CommandError:
        return False


def status(engine: Engine) -> Status:
    with engine.connect() as conn:
        return _status_of(conn)


def where(engine: Engine) -> str:
    """The database's URL as messages name it: never with its password."""
    return engine.url.render_as_string(hide_password=True)


def ahead_error(engine: Engine, found: Status) -> SchemaAhead:
    return SchemaAhead(
        f"the checkout's database ({where(engine)}) is at revision {found.current}, which this "
        f"release does not know (its newest is {found.head}): a newer release upgraded it. Run that "
        "release again, or restore the database from before that upgrade; downgrades are not "
        "supported", current=found.current, head=found.head)


def behind_error(engine: Engine, found: Status) -> SchemaBehind:
    at = (f"is at revision {found.current}" if found.current is not None
          else "has no revision recorded (it is empty, or was made by a release before migrations)")
    return SchemaBehind(
        f"the checkout's database ({where(engine)}) {at}; this release needs {found.head}: run "
        f"`{UPGRADE_COMMAND}` (or set CHECKOUT_DATABASE_AUTO_UPGRADE = True)",
        current=found.current, head=found.head)


def connect(url: str, *, upgrade: bool = True) -> Engine:
    """Create the engine and make sure its tables are at this code's revision.

    ``upgrade``: bring a database behind it up to date (under a lock, see :func:`prepare`); else
    refuse it (``SchemaBehind``)."""
    engine = make_engine(url)
    try:
        prepare(engine, auto_upgrade=upgrade)
    except BaseException:
        engine.dispose()
        raise
    return engine


def prepare(engine: Engine, *, auto_upgrade: bool) -> None:
    """At start-up: nothing when the database is at head; else upgrade it (``auto_upgrade``) or
    refuse (:class:`SchemaBehind`); a revision this code does not know is always refused
    (:class:`SchemaAhead`)."""
    found = status(engine)
    if found.at_head:
        return
    if found.ahead:
        raise ahead_error(engine, found)
    if not auto_upgrade:
        raise behind_error(engine, found)
    upgrade(engine)


@dataclass(frozen=True)
class Upgrade:
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def upgrade(engine: Engine, revision: str = "heads") -> Upgrade:
    """Bring the database to ``revision`` (default: this code's head) under the schema lock.

    The revision is looked at again once the lock is held: a process that waited for another's
    upgrade finds it done and changes nothing. Raises :class:`SchemaAhead` for a database at a
    revision this code does not know, :class:`SchemaError` for a target that is not ahead of the
    database (a downgrade) or that does not exist."""
    target = _resolve(revision)
    with _schema_lock(engine) as conn:
        found = _status_of(conn)
        if found.ahead:
            raise ahead_error(engine, found)
        if target is not None and found.current is not None and target != found.current \
                and _is_ancestor(target, found.current):
            raise SchemaError(
                f"the checkout's database is at revision {found.current}, past {target}: "
                "downgrades are not supported", current=found.current, head=found.head)
        if found.current == (target or found.head):
            return Upgrade(found.current, found.current)
        _run(conn, target or "heads")
        after = _status_of(conn).current
    log.info("the checkout's database was upgraded from revision %s to %s",
             describe(found.current), describe(after))
    return Upgrade(found.current, after)


def _resolve(revision: str) -> str | None:
    """A revision's full id (a unique prefix is enough); None for ``head``/``heads``."""
    if revision in ("head", "heads"):
        return None
    try:
        found = scripts().get_revision(revision)
    except CommandError:        # unknown, or a prefix of several
        found = None
    if found is None:
        raise SchemaError(f"no revision {revision!r} (`flask checkout db history` lists them)",
                          current=None, head=head())
    return found.revision


def _is_ancestor(older: str, newer: str) -> bool:
    return any(script.revision == older
               for script in scripts().iterate_revisions(newer, "base"))


def _run(conn: Connection, target: str) -> None:
    script = scripts()

    def steps(rev: tuple[str, ...], _context: MigrationContext) -> list[object]:
        # The heads' tuple, as Alembic's own upgrade command passes it (annotated as a string).
        return list(script._upgrade_revs(target, rev))  # type: ignore[arg-type]

    with _run_lock, EnvironmentContext(Config(), script, fn=steps, destination_rev=target) as env:
        env.configure(connection=conn, target_metadata=metadata, version_table=VERSION_TABLE)
        with env.begin_transaction():
            env.run_migrations()


@contextmanager
def _schema_lock(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that no other process can be changing the schema in."""
    if engine.dialect.name == "postgresql":
        from .bounded import unbounded

        with engine.begin() as conn, unbounded(conn.connection.dbapi_connection):
            # An upgrade may take long, and the other processes wait for its lock: none of the
            # engine's time limits (checkout.store.DATABASE_WAIT) inside it.
            conn.execute(text("SET LOCAL statement_timeout = 0"))
            conn.execute(text("SET LOCAL lock_timeout = 0"))
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
            yield conn
        return
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        # A memory database belongs to one connection of this process; other dialects are not
        # supported (nor locked).
        with engine.begin() as conn:
            yield conn
        return
    locked = _sqlite_locking_engine(engine)
    try:
        with locked.begin() as conn:
            yield conn
            # Foreign keys are off while tables are rebuilt (SQLite's own advice for a schema
            # change); what the change did must still hold them.
            # The checkout's tables only: the host's own tables in the same file may hold rows
            # whose parent is gone (SQLite leaves foreign keys off by default), which is theirs
            # to mind and no reason to refuse our upgrade.
            broken = [row for table in _checkout_tables(conn) for row in conn.exec_driver_sql(
                f'PRAGMA foreign_key_check("{table}")').fetchall()]
            if broken:
                raise SchemaError(f"the upgrade broke foreign keys: {broken[:5]}",
                                  current=None, head=head())
    finally:
        locked.dispose()


def _checkout_tables(conn: Connection) -> list[str]:
    """The checkout's tables (those the code declares) present in the database."""
    present = set(inspect(conn).get_table_names())
    return [name for name in metadata.tables if name in present]


def _sqlite_locking_engine(engine: Engine) -> Engine:
    """An engine of the same SQLite file whose transactions are ``BEGIN IMMEDIATE``, DDL included.

    The driver's own transaction handling is off (it would commit before DDL in some versions and
    never begins one before it): the one transaction is ours, taken with the write lock."""

    locked = create_engine(engine.url, poolclass=NullPool,
                           connect_args={"check_same_thread": False,
                                         "timeout": SQLITE_LOCK_WAIT_MS / 1000},
                           **ENGINE_OPTIONS)

    @event.listens_for(locked, "connect")
    def _connect(dbapi_conn: sqlite3.Connection,
                 _record: ConnectionPoolEntry) -> None:  # pragma: no cover - trivial
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={SQLITE_LOCK_WAIT_MS}")
        _enable_wal(cur, SQLITE_LOCK_WAIT_MS / 1000)
        cur.execute("PRAGMA foreign_keys=OFF")
        cur.close()

    @event.listens_for(locked, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return locked
