"""Storing new deliveries in batches (the receiver's group commit), on SQLite and PostgreSQL: copies
of one body in a batch are one delivery, and a row the database refuses fails alone."""
from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from psycopg.adapt import PyFormat
from psycopg.types.array import ListBinaryDumper
from sqlalchemy import select
from sqlalchemy.exc import DataError, OperationalError

from checkout import store as checkout_store
from checkout.webhooks import intake as intake_module
from checkout.webhooks import processing
from checkout.webhooks.intake import Intake, Receipt, insert_new, store_batch
from checkout.webhooks.processing import parse_or_reason, record_delivery
from checkout.webhooks.store import (
    WRITER_LOCK_SUFFIX,
    KeptConnection,
    events_table,
    outbox_table,
    sqlite_writer_turn,
)

from ..conftest import make_app
from ..forking import in_forked_child
from .helpers import history, order_payload


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def state(request, webhook_config):
    if request.param == "postgresql":
        webhook_config["CHECKOUT_DATABASE_URL"] = request.getfixturevalue("postgres_url")
    state = make_app(dict(webhook_config)).extensions["checkout"]
    yield state
    state.close()


@pytest.fixture
def engine(state):
    return state.engine


@pytest.fixture
def intake(state) -> Intake:
    """The app's own intake: its group commit, and the connection it keeps."""
    return state.intake


@pytest.fixture
def writer(engine):
    """A kept connection as the group commit's leader uses it, apart from the app's."""
    kept = KeptConnection(engine)
    yield kept
    kept.close()


def _values(body: bytes, **changes) -> dict:
    parsed, _ = parse_or_reason(body)
    assert parsed is not None
    now = processing.utcnow()
    return {"body_sha256": hashlib.sha256(body).hexdigest(), "body": body, "headers": {},
            "received_at": now, "last_seen_at": now, "duplicates": 0, "attempts": 0,
            "received_owed": 0,
            "state": "stored", "error": None, "event_type": parsed.type,
            "order_id": parsed.order_id, "status": parsed.status,
            "updated_at": parsed.updated_at} | changes


def test_copies_of_one_body_in_a_batch_are_one_new_delivery(engine, writer):
    first, second = (json.dumps(p).encode() for p in history("ord_1", ["deposit_awaiting",
                                                                       "deposit_validating"]))
    rows = insert_new(writer, [_values(first), _values(second), _values(first)])
    assert rows[0] is not None and rows[1] is not None and rows[2] is None
    assert rows[0].id != rows[1].id
    assert insert_new(writer, [_values(second)]) == [None]   # seen before
    with engine.connect() as conn:
        assert conn.execute(select(events_table.c.id).order_by(events_table.c.id)
                            ).scalars().all() == [rows[0].id, rows[1].id]


def test_the_intake_writes_every_batch_on_the_connection_it_keeps(engine, writer):
    """No pool round for each batch (its checkout, autocommit set and reset, and checkin cost
    more CPU than writing a small batch), until the connection is given back or fails."""
    def dbapi_connection():
        with writer.use() as conn:
            return conn.connection.dbapi_connection

    first = dbapi_connection()
    insert_new(writer, [_values(json.dumps(order_payload("ord_1")).encode())])
    assert dbapi_connection() is first
    assert engine.pool.checkedout() == 1        # kept between uses, not given back
    writer.close()
    assert engine.pool.checkedout() == 0
    failed = dbapi_connection()
    with pytest.raises(OperationalError):
        with writer.use():
            raise OperationalError("INSERT", {}, Exception("server closed the connection"))
    assert engine.pool.checkedout() == 0
    assert dbapi_connection() is not failed     # discarded, not given back to the pool
    again = insert_new(writer, [_values(json.dumps(order_payload("ord_2")).encode())])
    assert again[0] is not None


@pytest.mark.postgres
def test_a_delivery_the_database_refuses_fails_alone(postgres_engine):
    good, bad, other = (json.dumps(order_payload(f"ord_{n}")).encode() for n in range(3))
    # Longer than the column: PostgreSQL refuses the row (no delivery the parser accepts is).
    writer = KeptConnection(postgres_engine)
    rows = insert_new(writer, [_values(good), _values(bad, order_id="x" * 200), _values(other)])
    writer.close()
    assert isinstance(rows[1], DataError)
    # Logged by the receiver: the values (bodies, personal data) are not in it.
    assert "x" * 200 not in str(rows[1]) and "ord_1" not in str(rows[1])
    assert rows[0] is not None and rows[2] is not None
    with postgres_engine.connect() as conn:
        assert len(conn.execute(select(events_table.c.id)).all()) == 2


def test_concurrent_copies_are_stored_once_and_counted(engine, intake):
    """Through record_delivery from many threads: each distinct body stored once, every copy
    counted as a duplicate with its own webhook_received owed."""
    bodies = [json.dumps(order_payload(f"ord_{n}")).encode() for n in range(20)]
    sends = bodies * 3

    def record(body: bytes):
        return record_delivery(intake, body, {"content-type": "application/json"},
                               parse_or_reason(body)[0])

    with ThreadPoolExecutor(12) as pool:
        receipts = list(pool.map(record, sends))
    assert sum(not r.duplicate for r in receipts) == len(bodies)
    assert len({r.event_id for r in receipts}) == len(bodies)
    with engine.connect() as conn:
        events = conn.execute(select(events_table.c.duplicates)).scalars().all()
        owed = conn.execute(select(outbox_table.c.duplicate)).scalars().all()
    assert sorted(events) == [2] * len(bodies)
    assert owed == [1] * (2 * len(bodies))


def _counted(engine) -> dict[str, tuple[int, int]]:
    """body sha256 -> (its row's duplicates, webhook_received rows owed for its copies)."""
    e, o = events_table.c, outbox_table.c
    with engine.connect() as conn:
        rows = conn.execute(select(e.body_sha256, e.id, e.duplicates)).all()
        owed = conn.execute(select(o.event_id).where(o.duplicate == 1)).scalars().all()
    return {digest: (duplicates, owed.count(event_id)) for digest, event_id, duplicates in rows}


def test_the_copies_of_a_batch_are_counted_in_one_transaction(engine, writer, monkeypatch):
    """Copies of bodies stored before and copies within the batch: every one answered as a
    duplicate of its row, counted, and owing its own webhook_received (an invalid body's copy
    owes none, like the body); all of them in one transaction beside the batch's INSERT."""
    old, new, other = (json.dumps(order_payload(f"ord_{n}")).encode() for n in range(3))
    raw = b"signed, but not an event"
    invalid = _values(other) | {"body": raw, "body_sha256": hashlib.sha256(raw).hexdigest(),
                                "state": "invalid", "event_type": None, "order_id": None,
                                "status": None, "updated_at": None}
    first = store_batch(writer, [_values(old), invalid])
    assert all(isinstance(r, Receipt) and not r.duplicate for r in first)

    transactions = []
    real = intake_module.write_transaction

    def counting(engine):
        transactions.append(engine)
        return real(engine)

    monkeypatch.setattr(intake_module, "write_transaction", counting)
    receipts = store_batch(writer, [_values(new), _values(old), _values(new), dict(invalid),
                                    _values(old)])
    assert len(transactions) == 1
    assert [(r.event_id, r.duplicate) for r in receipts] == [
        (receipts[0].event_id, False), (first[0].event_id, True), (receipts[0].event_id, True),
        (first[1].event_id, True), (first[0].event_id, True)]
    counted = _counted(engine)
    assert counted[_values(old)["body_sha256"]] == (2, 2)
    assert counted[_values(new)["body_sha256"]] == (1, 1)
    assert counted[invalid["body_sha256"]] == (1, 0)

    transactions.clear()
    assert all(not r.duplicate for r in store_batch(writer, [_values(other)]))
    assert transactions == []         # a batch without copies is the INSERT alone


def test_when_the_copies_cannot_be_counted_only_they_fail(engine, writer, monkeypatch):
    """The batch's new deliveries are committed by then: they are answered as stored, and only
    the copies get the error (503: their senders send them again)."""
    old, new = (json.dumps(order_payload(f"ord_{n}")).encode() for n in range(2))
    store_batch(writer, [_values(old)])
    refused = OperationalError("UPDATE", {}, Exception("database unavailable"))

    def unavailable(engine, copies):
        raise refused

    monkeypatch.setattr(intake_module, "count_copies", unavailable)
    receipts = store_batch(writer, [_values(new), _values(old), _values(new)])
    assert isinstance(receipts[0], Receipt) and not receipts[0].duplicate
    assert receipts[1] is refused and receipts[2] is refused
    assert _counted(engine)[_values(old)["body_sha256"]] == (0, 0)


def test_whatever_the_copies_transaction_meets_the_new_deliveries_are_answered(engine, writer,
                                                                              monkeypatch):
    """Not only a database error: a copy whose stored row the transaction did not find (rows are
    never deleted, so a bug) fails the copies alone, not the new deliveries committed beside."""
    old, new = (json.dumps(order_payload(f"ord_{n}")).encode() for n in range(2))
    store_batch(writer, [_values(old)])
    monkeypatch.setattr(intake_module.statements, "COUNT_DUPLICATES",
                        intake_module.statements.COUNT_DUPLICATES.where(
                            events_table.c.id < 0))
    receipts = store_batch(writer, [_values(new), _values(old)])
    assert isinstance(receipts[0], Receipt) and not receipts[0].duplicate
    assert isinstance(receipts[1], RuntimeError)
    assert _counted(engine)[_values(old)["body_sha256"]] == (0, 0)


def test_every_value_of_a_batch_comes_back_as_it_was_sent(engine, writer):
    # Values that a text array would have to quote or escape, beside plain ones and NULLs.
    awkward = 'a "quoted", {braced} \\ back\\slashed, NULL, ünïcödé ✓'
    raw = b"\x00\xff\xfe{not json} \\ \""                 # an invalid delivery is stored too
    plain = json.dumps(order_payload("ord_plain")).encode()
    moment = processing.utcnow().replace(microsecond=123456)
    invalid = _values(plain) | {
        "body": raw, "body_sha256": hashlib.sha256(raw).hexdigest(), "state": "invalid",
        "error": awkward, "headers": {"x-note": awkward}, "order_id": "ord_{1,2}",
        "received_at": moment, "last_seen_at": moment, "status": "NULL", "duplicates": 7}
    sent = [invalid, _values(plain, event_type=None, order_id=None, status=None,
                             updated_at=None)]
    rows = insert_new(writer, sent)
    assert all(row is not None for row in rows)
    with engine.connect() as conn:
        stored = conn.execute(select(events_table).order_by(events_table.c.id)).mappings().all()
    for values, row in zip(sent, stored, strict=True):
        for name, value in values.items():
            if isinstance(value, datetime):     # SQLite keeps no time zone: compare in UTC
                assert row[name].replace(tzinfo=UTC) == value.astimezone(UTC), name
            else:
                assert row[name] == value, name


@pytest.mark.postgres
def test_the_batch_arrays_go_to_postgresql_in_binary(postgres_engine):
    # The text format quotes every element in Python (see store._send_arrays_in_binary).
    with postgres_engine.connect() as conn:
        adapters = conn.connection.dbapi_connection.adapters
        assert adapters.get_dumper(list, PyFormat.AUTO) is ListBinaryDumper


def _store_one(intake) -> tuple[bool, bool]:
    """(stored as a copy, written on the parent's connection)."""
    from checkout.webhooks import store

    parents = intake._writer._conn
    body = json.dumps(order_payload("ord_child")).encode()
    duplicate = record_delivery(intake, body, {}, parse_or_reason(body)[0]).duplicate
    return duplicate, intake._writer._conn is parents or parents not in store._inherited


def test_a_process_forked_during_a_batch_stores_its_own(engine, intake, monkeypatch):
    """A fork while a thread of the parent is writing a batch (and holds SQLite's writer turn):
    the child must not wait for that thread's batch or lock for ever (the thread is not in the
    child), nor write on the connection the parent's intake keeps. It waits for the parent's
    turn to end, as for any other process's writer."""
    parent, writing, release = os.getpid(), threading.Event(), threading.Event()
    real_insert = intake_module.insert_new
    earlier = json.dumps(order_payload("ord_earlier")).encode()
    record_delivery(intake, earlier, {}, parse_or_reason(earlier)[0])   # a connection is kept

    def slow_in_parent(writer, batch):
        if os.getpid() == parent:
            with sqlite_writer_turn(writer.engine):    # held at the fork too
                writing.set()
                release.wait(30)
        return real_insert(writer, batch)

    monkeypatch.setattr(intake_module, "insert_new", slow_in_parent)
    body = json.dumps(order_payload("ord_parent")).encode()
    leader = threading.Thread(target=record_delivery,
                              args=(intake, body, {}, parse_or_reason(body)[0]))
    leader.start()
    try:
        assert writing.wait(10)
        threading.Timer(1.0, release.set).start()       # the parent's batch ends meanwhile
        # Stored, as new, on a connection of the child's own.
        assert in_forked_child(_store_one, intake) == (False, False)
    finally:
        release.set()
        leader.join(10)


class OtherProcessWriter:
    """Another process holding the SQLite writers' turn until it ends (its lock goes with it)."""

    def __init__(self, database: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
             "fcntl.lockf(fd, fcntl.LOCK_EX); print('turn taken', flush=True); "
             "sys.stdin.readline()", database + WRITER_LOCK_SUFFIX],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "turn taken\n"

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.communicate("\n", timeout=10)


@pytest.fixture
def sqlite_writer(webhook_config):
    """A kept connection to a SQLite file (whose writers' lock file start-up made)."""
    state = make_app(dict(webhook_config)).extensions["checkout"]
    assert state.engine.dialect.name == "sqlite"
    writer = KeptConnection(state.engine)
    yield writer
    writer.close()
    state.close()


def test_the_writers_of_other_processes_take_turns_on_a_file_lock(sqlite_writer):
    """SQLite's own wait for its writer's lock sleeps in steps of up to 100 ms, long after the
    other writer is done: the checkout's writers of every process queue on a lock of a file
    beside the database instead, and the next one writes as soon as it is free, also when the
    process that held it ended without a word."""
    other = OtherProcessWriter(sqlite_writer.engine.url.database)
    body = json.dumps(order_payload("ord_1")).encode()
    stored = threading.Event()
    thread = threading.Thread(target=lambda: (insert_new(sqlite_writer, [_values(body)]),
                                              stored.set()))
    try:
        thread.start()
        assert not stored.wait(0.5)                 # waits for its turn
    finally:
        other.end()
    assert stored.wait(5)
    thread.join(5)


def test_a_turn_that_never_comes_fails_the_write_as_sqlite_would(sqlite_writer, monkeypatch):
    """Not a wait for ever behind a stuck process: after SQLite's busy timeout the write fails
    as "database is locked" does (the receiver answers 503 and the sender retries)."""
    monkeypatch.setattr(checkout_store, "SQLITE_BUSY_SECONDS", 0.3)
    other = OtherProcessWriter(sqlite_writer.engine.url.database)
    try:
        with pytest.raises(OperationalError, match="writers' lock"):
            insert_new(sqlite_writer, [_values(json.dumps(order_payload("ord_1")).encode())])
    finally:
        other.end()


def test_a_writers_lock_file_that_cannot_be_opened_stops_start_up_naming_it(webhook_config,
                                                                            tmp_path):
    """Said at start-up, with its path, not as a failed delivery at the first webhook."""
    from checkout.errors import ConfigurationError

    database = tmp_path / "shop.sqlite3"
    make_app({**webhook_config, "CHECKOUT_DATABASE_URL": f"sqlite:///{database}"}
             ).extensions["checkout"].close()
    gc.collect()            # that app's engine and its turn, gone (a new process, as it were)
    (tmp_path / f"shop.sqlite3{WRITER_LOCK_SUFFIX}").unlink()
    (tmp_path / f"shop.sqlite3{WRITER_LOCK_SUFFIX}").mkdir()      # not a file that opens
    with pytest.raises(ConfigurationError, match=f"shop.sqlite3{WRITER_LOCK_SUFFIX}"):
        make_app({**webhook_config, "CHECKOUT_DATABASE_URL": f"sqlite:///{database}"})


def test_a_process_ending_while_a_thread_is_in_its_turn_says_nothing_of_it(tmp_path):
    """The webhook dispatcher is a daemon thread: a worker can end while it is in its turn to
    write. The turn's file stays open until the process is gone, which releases its lock anyway:
    closing it first, at the interpreter's exit, had the thread unlock a closed descriptor and
    print "Bad file descriptor" into the worker's log at every restart."""
    script = """if True:
        import sys, threading, weakref
        from sqlalchemy import create_engine
        from checkout.webhooks.store import sqlite_writer_turn

        engine = create_engine(f"sqlite:///{sys.argv[1]}")
        entered, carry_on = threading.Event(), threading.Event()

        def dispatcher():
            with sqlite_writer_turn(engine):
                entered.set()
                carry_on.wait()

        thread = threading.Thread(target=dispatcher, daemon=True)
        thread.start()
        assert entered.wait(10)
        # What the interpreter runs as it exits: the finalizers registered to run then.
        weakref.finalize._exitfunc()
        carry_on.set()
        thread.join(10)
        print("ended", flush=True)
    """
    database = tmp_path / "shop.sqlite3"
    database.touch()
    ended = subprocess.run([sys.executable, "-c", script, str(database)], capture_output=True,
                           text=True, timeout=60)
    assert ended.stdout == "ended\n" and ended.returncode == 0
    assert ended.stderr == "", ended.stderr
