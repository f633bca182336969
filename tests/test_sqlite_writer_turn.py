"""SQLite's writers take turns (checkout.store.writing): in this process on a lock, across
processes on a lock of a file beside the database."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading

import pytest
from sqlalchemy.exc import OperationalError

from checkout import store as checkout_store
from checkout.store.writing import WRITER_LOCK_SUFFIX
from checkout.webhooks.processing import parse_or_reason, record_delivery

from .conftest import make_app
from .webhooks.helpers import order_payload


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
def engine(config):
    """A SQLite file's engine (whose writers' lock file start-up made)."""
    state = make_app(dict(config)).extensions["checkout"]
    assert state.engine.dialect.name == "sqlite"
    yield state.engine
    state.close()


def store_one(engine) -> None:
    body = json.dumps(order_payload("ord_1")).encode()
    record_delivery(engine, body, {}, parse_or_reason(body)[0])


def test_the_writers_of_other_processes_take_turns_on_a_file_lock(engine):
    """SQLite's own wait for its writer's lock sleeps in steps of up to 100 ms, long after the
    other writer is done: the checkout's writers of every process queue on a lock of a file
    beside the database instead, and the next one writes as soon as it is free, also when the
    process that held it ended without a word."""
    other = OtherProcessWriter(engine.url.database)
    stored, started = threading.Event(), threading.Event()
    thread = threading.Thread(target=lambda: (started.set(), store_one(engine), stored.set()))
    try:
        thread.start()
        assert started.wait(5)
        assert not stored.is_set()                  # its turn is the other process's
    finally:
        other.end()
    assert stored.wait(10)
    thread.join(10)


def test_a_turn_that_never_comes_fails_the_write_as_sqlite_would(engine, monkeypatch):
    """Not a wait for ever behind a stuck process: after SQLite's busy timeout the write fails
    as "database is locked" does (the receiver answers 503 and the sender retries)."""
    monkeypatch.setattr(checkout_store, "SQLITE_BUSY_SECONDS", 0.3)
    other = OtherProcessWriter(engine.url.database)
    try:
        with pytest.raises(OperationalError, match="writers' lock"):
            store_one(engine)
    finally:
        other.end()


def test_a_writers_lock_file_that_cannot_be_opened_stops_start_up_naming_it(config, tmp_path):
    """Said at start-up, with its path, not as a failed delivery at the first webhook."""
    from checkout.errors import ConfigurationError

    database = tmp_path / "shop.sqlite3"
    make_app({**config, "CHECKOUT_DATABASE_URL": f"sqlite:///{database}"}
             ).extensions["checkout"].close()
    gc.collect()            # that app's engine and its turn, gone (a new process, as it were)
    (tmp_path / f"shop.sqlite3{WRITER_LOCK_SUFFIX}").unlink()
    (tmp_path / f"shop.sqlite3{WRITER_LOCK_SUFFIX}").mkdir()      # not a file that opens
    with pytest.raises(ConfigurationError, match=f"shop.sqlite3{WRITER_LOCK_SUFFIX}"):
        make_app({**config, "CHECKOUT_DATABASE_URL": f"sqlite:///{database}"})


def test_a_process_ending_while_a_thread_is_in_its_turn_says_nothing_of_it(tmp_path):
    """The webhook dispatcher is a daemon thread: a worker can end while it is in its turn to
    write. The turn's file stays open until the process is gone, which releases its lock anyway:
    closing it first, at the interpreter's exit, had the thread unlock a closed descriptor and
    print "Bad file descriptor" into the worker's log at every restart."""
    script = """if True:
        import sys, threading, weakref
        from sqlalchemy import create_engine
        from checkout.store.writing import sqlite_writer_turn

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
