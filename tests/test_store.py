"""The checkout's tables are made (or upgraded) once, even when several workers boot together on an
empty database or on one of a previous release (gunicorn starts its workers at the same moment).
Real processes, real databases."""
from __future__ import annotations

import multiprocessing
from datetime import UTC, datetime

import pytest
from sqlalchemy import MetaData, Table, create_engine, insert, inspect, select
from sqlalchemy.schema import CreateTable

from checkout.sessions import SessionStore
from checkout.store import schema
from checkout.store.schema import connect
from checkout.store.tables import metadata
from checkout.webhooks.store import events_table

WORKERS = 4


def _boot(url: str, barrier, errors) -> None:
    """What a worker does at start-up: connect (upgrading the schema) and open the session store."""
    barrier.wait()
    try:
        engine = connect(url)
        SessionStore(engine)
        engine.dispose()
    except Exception as exc:  # reported to the test, which fails with it
        errors.put(f"{type(exc).__name__}: {str(exc)[:300]}")


def boot_together(url: str) -> list[str]:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(WORKERS)
    errors = context.Queue()
    workers = [context.Process(target=_boot, args=(url, barrier, errors)) for _ in range(WORKERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0] * WORKERS
    found = []
    while not errors.empty():
        found.append(errors.get())
    return found


def assert_all_tables(url: str) -> None:
    engine = connect(url)
    try:
        assert set(metadata.tables) <= set(inspect(engine).get_table_names())
        assert schema.status(engine).at_head
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_workers_booting_together_on_an_empty_postgres_database(postgres_cluster):
    from . import postgres

    # The race is narrow: a few empty databases make a lost one show (it did, before the fix).
    for _ in range(3):
        url = postgres.fresh_database(postgres_cluster)
        assert boot_together(url) == []
        assert_all_tables(url)


def test_workers_booting_together_on_an_empty_sqlite_file(tmp_path):
    for round_ in range(3):
        url = f"sqlite:///{tmp_path}/boot-{round_}.sqlite3"
        assert boot_together(url) == []
        assert_all_tables(url)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_workers_booting_together_on_a_previous_releases_database(dialect, tmp_path, request):
    """They all start, one of them upgrades it, and its rows are all there."""
    from .release_databases import OLDER, load, snapshot

    url = f"sqlite:///{tmp_path}/old.sqlite3" if dialect == "sqlite" \
        else request.getfixturevalue("postgres_url")
    load(OLDER, url)
    before = snapshot(url)
    assert boot_together(url) == []
    assert_all_tables(url)
    after = snapshot(url)
    for name, rows in before.items():
        # Each row as it was, in the columns it had (a revision may add a nullable one).
        kept = [{column: row[column] for column in rows[0]} for row in after[name]] if rows else []
        assert kept == rows, f"{name} changed in the upgrade"



@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/old.sqlite3"
    return request.getfixturevalue("postgres_url")


# Columns added after the first version of their table.
NEWER = {"checkout_webhook_events": "received_owed", "checkout_sessions": "creating_owner"}
# (Older than the dumps of tests/release_databases: revision 0001 adopts those databases too.)
# Tables made by later revisions, which no database of those versions has.
LATER_TABLES = {"checkout_kyc_levels", "checkout_desk_orders", "checkout_desk_keys",
                "checkout_step_events", "checkout_step_sessions", "checkout_desk_actions",
                "checkout_webhook_refusals"}
# Columns added by later revisions (each its own test), which no database of those versions has.
LATER_COLUMNS = {"checkout_signal_log": "source"}


def _as_first_made(table: Table) -> Table:
    """``table`` as the first version made it: without its newer column."""
    left_out = {NEWER.get(table.name), LATER_COLUMNS.get(table.name)}
    return Table(table.name, MetaData(),
                 *[column._copy() for column in table.columns if column.name not in left_out])


def test_columns_added_since_a_database_was_made_are_added_at_start_up(database_url):
    """A database from an earlier version lacks the newer columns; start-up adds them, so that
    webhooks are not refused (503) for a missing ``received_owed``."""
    old_events = _as_first_made(events_table)
    engine = create_engine(database_url)
    with engine.begin() as conn:
        for table in metadata.sorted_tables:
            if table.name not in LATER_TABLES:
                conn.execute(CreateTable(_as_first_made(table)))
        now = datetime.now(UTC)
        conn.execute(insert(old_events).values(
            body_sha256="0" * 64, body=b"{}", headers={}, received_at=now, last_seen_at=now,
            duplicates=0, state="processed", attempts=1))
    engine.dispose()

    engine = connect(database_url)                     # what Checkout(app) does at start-up
    for table, column in NEWER.items():
        assert column in {c["name"] for c in inspect(engine).get_columns(table)}
    with engine.connect() as conn:
        assert conn.execute(select(events_table.c.received_owed)).scalar_one() == 0
    engine.dispose()
    connect(database_url).dispose()                    # a second start changes nothing


def test_a_database_error_never_shows_the_values_it_was_given(tmp_path):
    """The checkout logs database errors (a webhook not stored, a session not saved); the values
    of the statement are delivery bodies and personal details, and stay out of the message."""
    engine = connect(f"sqlite:///{tmp_path}/store.sqlite3")
    try:
        now = datetime.now(UTC)
        row = {"body_sha256": "a" * 64, "body": b'{"userEmail": "ada@example.com"}',
               "headers": {}, "received_at": now, "last_seen_at": now, "duplicates": 0,
               "attempts": 0, "state": "stored"}
        with engine.begin() as conn:
            conn.execute(insert(events_table), row)
        with pytest.raises(Exception) as refused:       # the same body_sha256: UNIQUE
            with engine.begin() as conn:
                conn.execute(insert(events_table), row)
        assert "UNIQUE" in str(refused.value)
        assert "ada@example.com" not in str(refused.value) and "a" * 64 not in str(refused.value)
    finally:
        engine.dispose()


def _backend_pid(engine, found) -> None:
    with engine.connect() as conn:
        found.put(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar())


@pytest.mark.postgres
def test_a_forked_worker_opens_its_own_connections(postgres_url):
    """gunicorn --preload: the app is made in the master, whose pool keeps a connection open,
    then the workers are forked. Each must talk to the database on a connection of its own."""
    engine = connect(postgres_url)
    try:
        context = multiprocessing.get_context("fork")
        found = context.SimpleQueue()
        _backend_pid(engine, found)
        parents = found.get()
        workers = [context.Process(target=_backend_pid, args=(engine, found)) for _ in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
        assert [worker.exitcode for worker in workers] == [0, 0]
        children = {found.get(), found.get()}
        assert parents not in children and len(children) == 2
        # The parent's connection was neither closed nor disturbed by its children.
        _backend_pid(engine, found)
        assert found.get() == parents
    finally:
        engine.dispose()
