"""Whether the PostgreSQL database answers, as this process last saw it, and how much of a request's
time its database work may take.

A database that stops answering (its machine frozen, a process stopped, packets dropped) accepts
what is sent and answers nothing: each wait on it ends only at its bound (:mod:`.bounded`). Left so,
every checkout request would spend seconds there, a worker's threads would all end up waiting, and
the merchant's own pages, which never touch this database, would queue behind them. So:

- a checkout request has one time budget for all its waits on the database (:func:`budget`), not
  one per statement: a page whose statement timed out does not go on to wait for a new connection;
- at most ``most_waiting`` of a process's requests wait on the database at once (half of the
  threads of the shipped gunicorn settings); another one that finds no place within a moment fails
  (its page answers 503), leaving the rest of the threads to the shop. The dispatcher's and the
  CLI's threads are no request's, and no place is kept for them;
- once a wait has timed out (a refusal, which comes at once, costs nothing and says nothing of
  the kind) the database is *down* for this process: every wait fails at once,
  but one trial every ``trial_every`` seconds, until a wait is answered. The outage is logged once
  when it starts and once when it ends, never per request (:meth:`Availability.first_of_kind` tells
  the callers whether their own kind of failure was already told since the database last
  answered).

The dispatcher's and the CLI's work has no request budget: its waits keep the connection's own
bound (``checkout.store.DATABASE_WAIT``).
"""
from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

log = logging.getLogger("checkout.store")

# The start and the end (time.monotonic()) of the current request's time for the database, if it
# has one.
_budget: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "checkout_database_budget", default=None)


# Seconds a request waits for a place among those waiting on the database.
PLACE_WAIT = 0.25


class Unanswered(Exception):
    """A wait on the database refused before it began: no time left, no place, or the database
    known to be down. Nothing was sent."""


def begin(seconds: float) -> contextvars.Token[tuple[float, float] | None]:
    """From now on, the database work of this context (a request) may wait ``seconds`` in all;
    :func:`end` with the token given ends that."""
    now = time.monotonic()
    return _budget.set((now, now + seconds))


def end(token: contextvars.Token[tuple[float, float] | None]) -> None:
    _budget.reset(token)


@contextmanager
def budget(seconds: float) -> Iterator[None]:
    """The database work of the code inside may wait ``seconds`` in all."""
    token = begin(seconds)
    try:
        yield
    finally:
        end(token)


def remaining() -> float | None:
    """Seconds left of the current budget (None: no budget; at most 0 once it is spent)."""
    budget = _budget.get()
    return None if budget is None else max(0.0, budget[1] - time.monotonic())


class Availability:
    """One database as this process sees it (thread-safe)."""

    def __init__(self, *, most_waiting: int = 8, trial_every: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._places = threading.BoundedSemaphore(most_waiting)
        self._trial_every = trial_every
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._next_trial = 0.0
        self._trial_running = False
        self._told: dict[str, float] = {}       # kind -> when its failure was told
        self._back_at: float | None = None      # time.monotonic() the last outage ended

    @property
    def down(self) -> bool:
        return self._down_since is not None

    @contextmanager
    def waiting(self, bound: float | None) -> Iterator[float | None]:
        """Around one wait on the database: yields how long it may last (the smallest of
        ``bound``, the connection's own, and the request's time left), or raises
        :class:`Unanswered` without waiting."""
        left = remaining()
        if left is not None:
            if left <= 0:
                raise Unanswered("the request's time for the database is spent")
            bound = left if bound is None else min(bound, left)
        trial = self._admit()
        # A healthy database answers in milliseconds (a row lock in tens): a place frees within
        # a moment. When every place is held by a wait that goes on, this request is not one
        # more to hold a thread up.
        placed = left is None or self._places.acquire(timeout=min(PLACE_WAIT, left))
        if not placed:
            self._trial_done(trial)
            raise Unanswered("too many waits on the database at once")
        try:
            yield bound
        finally:
            if left is not None:
                self._places.release()
            self._trial_done(trial)

    def _admit(self) -> bool:
        """Whether this wait may go on (True: it is the down database's trial)."""
        with self._lock:
            if self._down_since is None:
                return False
            now = self._clock()
            if self._trial_running or now < self._next_trial:
                raise Unanswered("the database is not answering")
            self._trial_running = True
            self._next_trial = now + self._trial_every
            return True

    def _trial_done(self, trial: bool) -> None:
        if trial:
            with self._lock:
                self._trial_running = False

    def now(self) -> float:
        """This availability's clock: when a wait begins, for :meth:`answered`."""
        return self._clock()

    def answered(self, began: float) -> None:
        """A wait that began at ``began`` (:meth:`now`) was answered: the database is back, if
        it was down. A wait that began before a failure was told, and was answered only now,
        says nothing of the database since: that failure stays told (so the first moments of
        a freeze, a place refused and then an answer to a statement sent before it, tell the
        outage once, not twice)."""
        if not self.down and not self._told:       # the common case, without the lock
            return
        with self._lock:
            since, self._down_since = self._down_since, None
            self._told = {kind: told for kind, told in self._told.items() if told > began}
            if since is not None:
                self._back_at = time.monotonic()        # the budgets' clock
        if since is not None:
            log.warning("database answering again after %.0f s", self._clock() - since)

    def unanswered(self, why: str) -> None:
        """A wait ran out, or a connection was not made in time: the database is down."""
        with self._lock:
            if self._down_since is not None:
                return
            self._down_since = self._clock()
            self._next_trial = self._down_since + self._trial_every
        log.warning("database not answering (%s): checkout requests answer 503 at once, one "
                    "trial each %g s, until it does", why, self._trial_every)

    def first_of_kind(self, kind: str) -> bool:
        """Whether a failure of ``kind`` (a page, a webhook, a probe) is the first since the
        database last answered: its caller then logs it as a warning, and the rest at debug
        level. So an outage is told once per kind, from its first failures (a place refused
        while the first waits still run) to its end. A request's that began before that end
        (its time spent waiting on the trial that found the database back) is the outage's
        too, told already."""
        budget = _budget.get()
        with self._lock:
            if kind in self._told:
                return False
            if budget is not None and self._back_at is not None and budget[0] <= self._back_at:
                return False
            self._told[kind] = self._clock()
            return True
