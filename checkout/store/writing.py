"""How the checkout writes its tables: one writer's turn at a time on SQLite, and an INSERT that
knows ON CONFLICT for both databases.

SQLite has one writer per database, and a transaction that reads before it writes can be refused
at once ("database is locked", without waiting) when another writer commits in between; so the
checkout's writers take turns (:func:`write_transaction`), in this process and across processes.
"""
from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

from .. import store as database
from ..errors import ConfigurationError
from ..process_local import ProcessLocal


def dialect_insert(name: str, table: Table) -> Any:
    """An INSERT that knows ON CONFLICT, for the two databases the checkout supports."""
    if name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert(table)
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table)
    # A configuration error, caught by the first webhook.
    raise RuntimeError(  # pragma: no cover
        f"the webhook receiver supports SQLite and PostgreSQL, not {name}")


# SQLite has one writer per database. A writer that finds it locked sleeps in SQLite's busy
# handler (1, 2, 5 ... 100 ms steps), long after the other writer is done: at hundreds of
# deliveries a second, the acknowledgements then waited on sleeping writers. So the checkout's
# writers take turns instead: this process's threads on a lock, and the processes (gunicorn's
# workers) on a lock of a file beside the database, tried every 0.2 to 2 ms.
WRITER_LOCK_SUFFIX = "-writer.lock"


class WriterTurnTimeout(OperationalError):
    """No turn to write within SQLite's busy timeout: as SQLite's "database is locked" (the
    receiver answers 503, the dispatcher tries again later)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"waiting for the writers' lock {path}", None,
                         TimeoutError(f"no turn to write within {database.SQLITE_BUSY_SECONDS} s"))


class _WriterTurn:
    """The turn to write one SQLite file, for the threads of this process.

    The file lock is a POSIX record lock (``lockf``): a forked child does not inherit it, and it
    is released when its process ends however it ends. (A ``flock``, which the ``filelock``
    package takes, belongs to the open file: a child forked during a turn would hold it too.)
    POSIX locks belong to a process, and closing any descriptor of the file releases them: so one
    turn per file and process, shared by every engine on that file.
    """

    def __init__(self, path: str) -> None:
        self.lock = threading.Lock()
        self.path = path + WRITER_LOCK_SUFFIX
        self._fd = _open_like(self.path, path)
        # Closed when the turn is no longer used, but not at the interpreter's exit: the
        # dispatcher's daemon thread may be in a turn then, and would unlock a closed descriptor
        # (or one opened again for another file). The process's end closes it and its lock.
        weakref.finalize(self, os.close, self._fd).atexit = False

    @contextmanager
    def taken(self) -> Iterator[None]:
        deadline = time.monotonic() + database.SQLITE_BUSY_SECONDS
        if not self.lock.acquire(timeout=database.SQLITE_BUSY_SECONDS):
            raise WriterTurnTimeout(self.path)
        try:
            pause = 0.0002
            while True:
                try:
                    fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EACCES, errno.EAGAIN):
                        raise
                if time.monotonic() >= deadline:
                    raise WriterTurnTimeout(self.path)
                time.sleep(pause)
                pause = min(pause * 2, 0.002)
            try:
                yield
            finally:
                fcntl.lockf(self._fd, fcntl.LOCK_UN)
        finally:
            self.lock.release()


def _open_like(path: str, like: str) -> int:
    """Open (or make) ``path`` for the workers of the database file ``like``: with its mode, and
    its owner when made by root (a ``flask checkout`` command run by root must not leave a file
    that the server's user cannot open), as SQLite does for its ``-wal`` and ``-shm``."""
    model = os.stat(like)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, model.st_mode & 0o666)
    try:
        made = os.fstat(fd)
        if os.geteuid() == 0 and (made.st_uid, made.st_gid) != (model.st_uid, model.st_gid):
            os.fchown(fd, model.st_uid, model.st_gid)
        if made.st_uid == os.geteuid() and made.st_mode & 0o666 != model.st_mode & 0o666:
            os.fchmod(fd, model.st_mode & 0o666)        # the umask took some of it away
    except BaseException:
        os.close(fd)
        raise
    return fd


# Per process (a child makes its own). By file, while an engine on it lives.
_writer_turns: ProcessLocal[weakref.WeakValueDictionary[str, _WriterTurn]] = \
    ProcessLocal(weakref.WeakValueDictionary)
_engine_turns: ProcessLocal[weakref.WeakKeyDictionary[Engine, _WriterTurn]] = \
    ProcessLocal(weakref.WeakKeyDictionary)


def _turn_of(engine: Engine) -> _WriterTurn | None:
    path = database.sqlite_file(engine.url)
    if path is None:                # in memory: this process is the only writer
        return None
    with _engine_turns.lock:
        turn = _engine_turns.value.get(engine)
        if turn is None:
            real = os.path.realpath(path)
            turn = _writer_turns.value.get(real)
            if turn is None:
                try:
                    turn = _writer_turns.value[real] = _WriterTurn(real)
                except OSError as exc:
                    raise ConfigurationError(
                        f"cannot open {real}{WRITER_LOCK_SUFFIX}, where the checkout's writers "
                        f"of this SQLite database take turns: {exc.strerror}") from exc
            _engine_turns.value[engine] = turn
        return turn


def open_writer_turn(engine: Engine) -> None:
    """Open the file through which SQLite's writers take turns, at start-up: one that cannot be
    made or opened is a ConfigurationError then, not a failed delivery later."""
    if engine.dialect.name == "sqlite":
        _turn_of(engine)


_memory_locks: ProcessLocal[weakref.WeakKeyDictionary[Engine, threading.Lock]] = \
    ProcessLocal(weakref.WeakKeyDictionary)


@contextmanager
def sqlite_writer_turn(engine: Engine) -> Iterator[None]:
    """On SQLite, the checkout's turn to write (see above); on PostgreSQL, nothing to wait for."""
    if engine.dialect.name != "sqlite":
        yield
        return
    turn = _turn_of(engine)
    if turn is not None:
        with turn.taken():
            yield
        return
    with _memory_locks.lock:
        lock = _memory_locks.value.setdefault(engine, threading.Lock())
    with lock:
        yield


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """``engine.begin()``, with this process's SQLite writers taking turns."""
    with sqlite_writer_turn(engine), engine.begin() as conn:
        yield conn
