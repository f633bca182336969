"""PostgreSQL connections whose every wait on the server has an end.

The server's ``statement_timeout`` ends a statement that runs too long, and libpq's
``connect_timeout`` a connection that is not made; neither helps when the server stops answering
altogether (its machine frozen, a network that drops packets, a process stopped): the kernel still
accepts what is sent, nothing comes back, and the thread that waits for it would wait for ever,
holding a worker and a pooled connection. psycopg waits for every answer in ``Connection.wait``,
which takes a timeout; here every wait gets one. When it runs out, the connection is closed (its
state is unknown: half a statement may be on its way) and the statement fails with an
``OperationalError``, which SQLAlchemy reads as a lost connection: the pool drops it, and the
caller answers as for a database that is down (a webhook: 503, and the sender retries).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.errors
from sqlalchemy import Engine, event


class BoundedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose waits last at most ``wait_bound`` seconds (None: no bound)."""

    wait_bound: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        bound = timeout if timeout is not None else self.wait_bound
        try:
            return super().wait(gen, interval=interval, timeout=bound)
        except psycopg.OperationalError as exc:
            if timeout is not None or not _is_wait_timeout(exc):
                raise
            self.pgconn.finish()            # what was half sent must never be read as an answer
            raise psycopg.OperationalError(
                f"the database did not answer within {bound:g} s; the connection was closed"
            ) from None


def _is_wait_timeout(exc: BaseException) -> bool:
    # psycopg's own class for it is internal (errors._WaitTimeout): found by name, if present.
    kind = getattr(psycopg.errors, "_WaitTimeout", None)
    return kind is not None and isinstance(exc, kind)


def bounded_connections(engine: Engine, seconds: float) -> None:
    """Make ``engine``'s connections :class:`BoundedConnection` ones, bounded to ``seconds``."""
    @event.listens_for(engine, "do_connect")
    def _connect(_dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
        connection = BoundedConnection.connect(*cargs, **cparams)
        connection.wait_bound = seconds
        return connection


@contextmanager
def unbounded(dbapi_connection: Any) -> Iterator[None]:
    """No bound on this connection's waits meanwhile (a schema upgrade: its statements may take
    long, and other processes wait for its lock)."""
    if not isinstance(dbapi_connection, BoundedConnection):
        yield
        return
    bound, dbapi_connection.wait_bound = dbapi_connection.wait_bound, None
    try:
        yield
    finally:
        dbapi_connection.wait_bound = bound
