"""Circuit breakers of the upstream, one per family of endpoints and, for prices and limits, per
corridor (:mod:`.families`): when one part of the upstream keeps failing, stop waiting on that part.

Each breaker counts the requests sent through it in a sliding window of ``window`` seconds, each
request once, its retries included (a request retried three times is one failure, or one success).
Once the window holds at least ``min_calls`` requests and at least ``failure_ratio`` of them got no
usable answer (a timeout, a refused connection, a 5xx, a body that is not JSON), the breaker
*opens*: that family's (that corridor's) calls are refused at once, without being sent, and pages
answer straight away with "our payment partner is not answering" instead of holding a worker for
a timeout each. After ``open_for`` seconds one call is let through as a trial (*half-open*), sent
once, with no retries; its success closes the breaker, its failure opens it again for another
period. An answer the upstream gave on purpose (a 4xx, a 429) is a working upstream: a success.
The defaults (3 requests, half of them failing, within 30 s; open 5 s) are the usual shape of a
ratio breaker (resilience4j's, Polly's), sized for a process that sees a few requests per corridor
a minute: a lone failure amid answers never opens one.

An outage is told once when it starts (the breaker opens) and once when it ends (it closes), to the
listener (the log line, the metrics): a failed trial that opens it again is the same outage.

Written here rather than taken from a library, after trying the two that fit: pybreaker runs the
guarded call while holding its lock, so every upstream call of a threaded worker would wait for the
one before it; circuitbreaker lets every waiting call through at once when the open period ends (a
stampede on an upstream that is just coming back), keeps its counts without a lock, and tells
nobody when it opens or closes. What is needed is small: the state below, under one lock.
"""
from __future__ import annotations

import enum
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..errors import UpstreamCircuitOpen
from .families import corridor_of, family_of

log = logging.getLogger("checkout.upstream")

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"
STATES = (CLOSED, OPEN, HALF_OPEN)
# Breakers kept per client: families times the corridors asked. Past it, the least recently used
# closed ones go (a corridor asked once a day needs no memory of its last calls).
MOST_BREAKERS = 512
# Requests remembered per breaker's window: plenty to tell a ratio, and a bound on memory.
MOST_IN_WINDOW = 1000


@dataclass(frozen=True)
class BreakerSettings:
    """When a breaker opens (``min_calls`` requests in ``window`` seconds, ``failure_ratio`` of
    them failed) and for how long (``open_for`` seconds before one trial)."""

    min_calls: int = 3
    failure_ratio: float = 0.5
    window: float = 30.0
    open_for: float = 5.0

    def __post_init__(self) -> None:
        if self.min_calls < 1 or not 0 < self.failure_ratio <= 1 or self.window <= 0 \
                or self.open_for <= 0:
            raise ValueError("min_calls must be at least 1, failure_ratio in (0, 1], window and "
                             "open_for above 0")


class Admission(enum.Enum):
    """What :meth:`Breaker.allow` says of a call: refused, sent as usual, or sent as the one trial
    (once, without retries)."""

    REFUSED = "refused"
    CALL = "call"
    TRIAL = "trial"

    def __bool__(self) -> bool:
        return self is not Admission.REFUSED


@dataclass(frozen=True)
class BreakerState:
    state: str
    calls: int                     # requests in the window (while closed)
    failures: int                  # of which without a usable answer
    retry_in: float | None         # seconds until the next trial, while open


# (the breaker, old state, new state): told once per change, outside the lock.
StateListener = Callable[["Breaker", str, str], None]


class Breaker:
    """Thread-safe; one per family (and corridor) of one upstream client, so per app and process."""

    def __init__(self, settings: BreakerSettings | None = None, *, family: str = "upstream",
                 corridor: str | None = None, clock: Callable[[], float] = time.monotonic,
                 on_change: StateListener | None = None) -> None:
        self.settings = settings or BreakerSettings()
        self.family = family
        self.corridor = corridor
        self._clock = clock
        self._on_change = on_change
        self._lock = threading.Lock()
        self._state = CLOSED
        # (when, answered) of the requests of the last `window` seconds, while closed.
        self._window: deque[tuple[float, bool]] = deque(maxlen=MOST_IN_WINDOW)
        self._opened_at = 0.0
        self._trial_since: float | None = None
        # What the listener was last told, and one telling at a time: it hears the state as it
        # is, in order, never a change that a later one overtook.
        self._telling = threading.Lock()
        self._told = CLOSED

    @property
    def name(self) -> str:
        """The family, and the corridor when it has one: ``onramp_prices KE/mobile_money``."""
        return self.family if self.corridor is None else f"{self.family} {self.corridor}"

    def allow(self) -> Admission:
        """Whether a call may be sent now. Once the open period is over, one caller gets
        ``TRIAL`` and the others ``REFUSED`` until it has told how it went; a trial that never
        tells (its thread died) is replaced after another period."""
        changed = False
        with self._lock:
            now = self._clock()
            if self._state == CLOSED:
                return Admission.CALL
            if self._state == OPEN:
                if now - self._opened_at < self.settings.open_for:
                    return Admission.REFUSED
                changed = True
                self._state, self._trial_since = HALF_OPEN, now
                admission = Admission.TRIAL
            elif self._trial_since is not None \
                    and now - self._trial_since < self.settings.open_for:
                admission = Admission.REFUSED
            else:
                self._trial_since = now
                admission = Admission.TRIAL
        if changed:
            self._tell()
        return admission

    def record(self, ok: bool) -> None:
        """How a request that was sent went, retries included: ``ok`` when the upstream gave a
        usable answer."""
        changed = False
        with self._lock:
            now = self._clock()
            if ok and self._state != CLOSED:
                # The trial answered (or a call let through before the opening did): it is back.
                changed = True
                self._state, self._trial_since = CLOSED, None
                self._window.clear()
            elif not ok and self._state == HALF_OPEN:
                changed = True                   # the trial failed: open for another period
                self._state, self._opened_at, self._trial_since = OPEN, now, None
            elif self._state == CLOSED:
                self._window.append((now, ok))
                calls, failures = self._counts(now)
                # Weighed on a failure only: an answer just given never opens it.
                if not ok and calls >= self.settings.min_calls \
                        and failures >= self.settings.failure_ratio * calls:
                    changed = True
                    self._state, self._opened_at = OPEN, now
                    self._window.clear()
            # A failure told while open (a call let through before the opening) adds nothing.
        if changed:
            self._tell()

    def release_trial(self) -> None:
        """The call let through as the trial was not sent after all, or its answer says nothing
        of the upstream (no time, no place): the next caller may be the trial, rather than
        every caller waiting another period."""
        with self._lock:
            if self._state == HALF_OPEN:
                self._trial_since = None

    def refusal(self) -> UpstreamCircuitOpen | None:
        """The error of a call refused now (the breaker not closed), else None: for a caller
        about to wait on another's call, which may be the one trial."""
        state = self.snapshot()
        if state.state == CLOSED:
            return None
        return UpstreamCircuitOpen("the upstream failed too often lately: not waited for",
                                   retry_in=state.retry_in)

    def snapshot(self) -> BreakerState:
        with self._lock:
            now = self._clock()
            retry_in = None
            if self._state == OPEN:
                retry_in = max(0.0, self.settings.open_for - (now - self._opened_at))
            calls, failures = self._counts(now)
            return BreakerState(self._state, calls, failures, retry_in)

    def _counts(self, now: float) -> tuple[int, int]:
        # Under self._lock: forget what left the window, count what is in it.
        while self._window and self._window[0][0] <= now - self.settings.window:
            self._window.popleft()
        return len(self._window), sum(1 for _when, ok in self._window if not ok)

    def _tell(self) -> None:
        if self._on_change is None:
            return
        with self._telling:
            now = self.snapshot().state
            if now != self._told:
                old, self._told = self._told, now
                self._on_change(self, old, now)


class Breakers:
    """The breakers of one upstream client, made on first use, by family and corridor."""

    def __init__(self, settings: BreakerSettings | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 on_change: StateListener | None = None) -> None:
        self.settings = settings or BreakerSettings()
        self._clock = clock
        self._listeners: list[StateListener] = [] if on_change is None else [on_change]
        self._lock = threading.Lock()
        self._breakers: OrderedDict[tuple[str, str | None], Breaker] = OrderedDict()

    def listen(self, listener: StateListener) -> None:
        """Tell ``listener`` too of every change of every breaker (set up at start-up)."""
        self._listeners.append(listener)

    def of(self, method: str, endpoint: str, params: Mapping[str, object] | None) -> Breaker:
        """The breaker of a call: ``endpoint`` is its route template, ``params`` its query."""
        family = family_of(method, endpoint)
        return self.get(family, corridor_of(family, params))

    def get(self, family: str, corridor: str | None = None) -> Breaker:
        key = (family, corridor)
        with self._lock:
            breaker = self._breakers.get(key)
            if breaker is None:
                self._forget_the_oldest_closed()
                breaker = Breaker(self.settings, family=family, corridor=corridor,
                                  clock=self._clock, on_change=self._told)
                self._breakers[key] = breaker
            self._breakers.move_to_end(key)
            return breaker

    def not_closed(self) -> list[tuple[Breaker, BreakerState]]:
        """The breakers open or half-open now, with their state: an outage's extent."""
        with self._lock:
            breakers = list(self._breakers.values())
        states = [(breaker, breaker.snapshot()) for breaker in breakers]
        return [(breaker, state) for breaker, state in states if state.state != CLOSED]

    def _forget_the_oldest_closed(self) -> None:
        # Under self._lock, before one more is made. An open one stays: it is an outage under
        # way, told and counted.
        if len(self._breakers) < MOST_BREAKERS:
            return
        for key, breaker in list(self._breakers.items()):
            if breaker.snapshot().state == CLOSED:
                del self._breakers[key]
                return

    def _told(self, breaker: Breaker, old: str, new: str) -> None:
        for listener in self._listeners:
            listener(breaker, old, new)


# The breakers a load of a cache has sent its calls through (checkout.reference.TTLCache): a
# caller that would wait for that load is refused instead while one of them is not closed.
_used: ContextVar[list[Breaker] | None] = ContextVar("checkout_breakers_used", default=None)


@contextmanager
def breakers_used() -> Iterator[list[Breaker]]:
    """The breakers of the calls made in this block (in this thread), as they are made."""
    used: list[Breaker] = []
    token = _used.set(used)
    try:
        yield used
    finally:
        _used.reset(token)


def note_used(breaker: Breaker) -> None:
    """A call goes through ``breaker`` (for :func:`breakers_used`)."""
    used = _used.get()
    if used is not None:
        used.append(breaker)


def breaker_told(count: Callable[[str, str, str], None]) -> StateListener:
    """What a change of a breaker's state does: one log line when an outage starts (the breaker
    leaves closed) and one when it ends (it closes again), never one per trial; and ``count(family,
    old, new)`` (the metrics')."""
    def told(breaker: Breaker, old: str, new: str) -> None:
        if old == CLOSED:
            log.warning("upstream breaker opened for %s: it keeps failing, so its calls are "
                        "refused at once (one trial every %g s) and pages say the payment "
                        "partner is not answering", breaker.name, breaker.settings.open_for)
        elif new == CLOSED:
            log.info("upstream breaker closed for %s: it answers again", breaker.name)
        else:
            log.debug("upstream breaker %s for %s", new, breaker.name)
        count(breaker.family, old, new)

    return told
