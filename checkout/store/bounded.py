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

import inspect
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.errors
from sqlalchemy import Engine, event

from .availability import Availability, Unanswered

log = logging.getLogger("checkout.store")


class BoundedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose waits last at most ``wait_bound`` seconds (None: no bound),
    and less when the request's time for the database runs out first; each wait asks the
    database's :class:`~.availability.Availability` first, and tells it how the wait ended."""

    wait_bound: float | None = None
    availability: Availability | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        if timeout is not None or self.availability is None:
            return self._bounded_wait(gen, interval, timeout if timeout is not None
                                      else self.wait_bound)
        began = self.availability.now()
        try:
            with self.availability.waiting(self.wait_bound) as bound:
                answer = self._bounded_wait(gen, interval, bound)
        except Unanswered as exc:
            # Nothing was sent. The connection is closed all the same: SQLAlchemy then drops it
            # as lost, where a live one would be rolled back on its way to the pool, a wait
            # refused again (and a traceback in the log). Connections are made anew once the
            # database answers.
            gen.close()
            self.pgconn.finish()
            raise psycopg.OperationalError(f"database wait refused: {exc}") from None
        except _TimedOut as exc:
            self.availability.unanswered(str(exc))
            raise psycopg.OperationalError(str(exc)) from None
        self.availability.answered(began)
        return answer

    def _bounded_wait(self, gen: Any, interval: float, bound: float | None) -> Any:
        try:
            return super().wait(gen, interval=interval, timeout=bound)
        except psycopg.OperationalError as exc:
            if not _is_wait_timeout(exc):
                raise
            self.pgconn.finish()            # what was half sent must never be read as an answer
            raise _TimedOut(f"the database did not answer within {bound:.1f} s; the "
                            "connection was closed") from None


class _TimedOut(psycopg.OperationalError):
    pass


def _is_wait_timeout(exc: BaseException) -> bool:
    # psycopg's own class for it is internal (errors._WaitTimeout): found by name, if present.
    kind = getattr(psycopg.errors, "_WaitTimeout", None)
    return kind is not None and isinstance(exc, kind)


def waits_can_be_bounded() -> bool:
    """Whether this psycopg's ``Connection.wait`` takes an ``interval`` and a ``timeout`` (3.3
    and later; pyproject.toml asks for it), and names its timeout error as this module expects."""
    parameters = inspect.signature(psycopg.Connection.wait).parameters
    return {"interval", "timeout"} <= set(parameters) and \
        getattr(psycopg.errors, "_WaitTimeout", None) is not None


def bounded_connections(engine: Engine, seconds: float, availability: Availability) -> None:
    """Make ``engine``'s connections :class:`BoundedConnection` ones, bounded to ``seconds`` and
    told by ``availability`` whether to wait at all.

    With a psycopg whose waits cannot be bounded, the connections are psycopg's own (a warning
    says so): better unbounded waits than statements that all fail."""
    if not waits_can_be_bounded():
        log.warning("psycopg %s cannot bound its waits: a database that stops answering will "
                    "hold requests (install psycopg 3.3 or later)", psycopg.__version__)
        return

    @event.listens_for(engine, "do_connect")
    def _connect(_dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
        # A connection is a wait too (libpq's connect_timeout bounds it: 2 s at the least): a
        # database known to be down is not connected to but by its trial.
        began = availability.now()
        try:
            with availability.waiting(None):
                connection = BoundedConnection.connect(*cargs, **cparams)
        except Unanswered as exc:
            raise psycopg.OperationalError(f"database connection refused: {exc}") from None
        except psycopg.errors.ConnectionTimeout:
            # A connection refused at once (the server stopped, restarting) costs nothing to
            # try again; one that took libpq's whole timeout is a database not answering.
            availability.unanswered("no connection within libpq's connect_timeout")
            raise
        availability.answered(began)
        connection.wait_bound = seconds
        connection.availability = availability
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
