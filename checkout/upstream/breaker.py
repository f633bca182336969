"""A circuit breaker per upstream and process: when the upstream keeps failing, stop waiting on it.

After ``failures`` calls in a row that got no usable answer (a timeout, a refused connection, a
5xx, a body that is not JSON), the breaker *opens*: calls are refused at once, without being sent,
and pages answer straight away with "our payment partner is not answering" instead of holding a
worker for a timeout each. After ``reset_after`` seconds one call is let through as a trial
(*half-open*); its success closes the breaker, its failure opens it again for another period. An
answer the upstream gave on purpose (a 4xx, a 429) is a working upstream: it counts as a success.

Written here rather than taken from a library, after trying the two that fit: pybreaker runs the
guarded call while holding its lock, so every upstream call of a threaded worker would wait for the
one before it; circuitbreaker lets every waiting call through at once when the open period ends (a
stampede on an upstream that is just coming back), keeps its counts without a lock, and tells
nobody when it opens or closes. What is needed is small: the state below, under one lock, and a
hook for the log and the metrics.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UpstreamCircuitOpen

log = logging.getLogger("checkout.upstream")

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"
STATES = (CLOSED, OPEN, HALF_OPEN)

# (old state, new state): told once per change, outside the lock.
StateListener = Callable[[str, str], None]


@dataclass(frozen=True)
class BreakerState:
    state: str
    failures: int                  # calls in a row without a usable answer
    retry_in: float | None         # seconds until the next trial, while open


class Breaker:
    """Thread-safe; one per upstream client (so per app and process)."""

    def __init__(self, *, failures: int = 2, reset_after: float = 5.0,
                 clock: Callable[[], float] = time.monotonic,
                 on_change: StateListener | None = None) -> None:
        if failures < 1 or reset_after <= 0:
            raise ValueError("failures must be at least 1 and reset_after above 0")
        self.failures_to_open = failures
        self.reset_after = reset_after
        self._clock = clock
        self._on_change = on_change
        self._lock = threading.Lock()
        self._state = CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._trial_since: float | None = None
        # What the listener was last told, and one telling at a time: it hears the state as it
        # is, in order, never a change that a later one overtook.
        self._telling = threading.Lock()
        self._told = CLOSED

    def allow(self) -> bool:
        """Whether a call may be sent now. Once the open period is over, one caller gets True
        (the trial) and the others False until it has told how it went; a trial that never
        tells (its thread died) is replaced after another period."""
        changed = None
        with self._lock:
            now = self._clock()
            if self._state == CLOSED:
                return True
            if self._state == OPEN:
                if now - self._opened_at < self.reset_after:
                    return False
                changed = (OPEN, HALF_OPEN)
                self._state, self._trial_since = HALF_OPEN, now
                allowed = True
            elif self._trial_since is not None and now - self._trial_since < self.reset_after:
                allowed = False
            else:
                self._trial_since = now
                allowed = True
        if changed:
            self._tell(*changed)
        return allowed

    def record(self, ok: bool) -> None:
        """How a call that was sent went: ``ok`` when the upstream gave a usable answer."""
        changed = None
        with self._lock:
            if ok:
                self._failures = 0
                if self._state != CLOSED:
                    changed = (self._state, CLOSED)
                    self._state, self._trial_since = CLOSED, None
            else:
                self._failures += 1
                if self._state == HALF_OPEN or (
                        self._state == CLOSED and self._failures >= self.failures_to_open):
                    changed = (self._state, OPEN)
                    self._state, self._opened_at, self._trial_since = OPEN, self._clock(), None
        if changed:
            self._tell(*changed)

    def release_trial(self) -> None:
        """The call let through as the trial was not sent after all (no time, no place): the
        next caller may be the trial, rather than every caller waiting another period."""
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
            retry_in = None
            if self._state == OPEN:
                retry_in = max(0.0, self.reset_after - (self._clock() - self._opened_at))
            return BreakerState(self._state, self._failures, retry_in)

    def _tell(self, _old: str, _new: str) -> None:
        if self._on_change is None:
            return
        with self._telling:
            now = self.snapshot().state
            if now != self._told:
                old, self._told = self._told, now
                self._on_change(old, now)


def breaker_told(gauge: Callable[[str], None]) -> StateListener:
    """What a change of the breaker's state does: one log line, and ``gauge(new state)`` (the
    metrics')."""
    def told(old: str, new: str) -> None:
        if new == OPEN:
            log.warning("upstream breaker opened (%s before): the upstream keeps failing, so its "
                        "calls are refused at once and pages say the payment partner is not "
                        "answering", old)
        elif new == CLOSED:
            log.info("upstream breaker closed: the upstream answers again")
        else:
            log.info("upstream breaker half-open: one trial call is let through")
        gauge(new)

    return told
