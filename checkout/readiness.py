"""Whether the checkout's dependencies other than its database answer: the upstream and the
rate-limit store, as last checked in the background.

A probe never waits on them: ``GET /healthz`` and ``/healthz/ready`` answer from the last check,
and when that check is older than ``CHECKOUT_HEALTH_CACHE_SECONDS`` they start one on a thread of
its own, one at a time per app and process. Each check is one upstream call made with the
merchant's key, so hammering the routes cannot be turned into a flood of upstream calls.

While the last check found either unwell, it is old after :data:`RECHECK_WHILE_UNWELL` seconds
instead: readiness follows the upstream's return within seconds, not at the next cache period.
And a breaker of the upstream opening (checkout.upstream.breaker) has a check made at once: an
outage shows without waiting for the cache period either. The upstream check is a probe
(``UpstreamClient.probe``): sent once, around the breakers, so that it tells of the upstream as it
is now, not of what a breaker remembers (and one corridor's open breaker is not the upstream down).

What the upstream check says:

- ``ok``: it answered;
- ``credentials_refused``: it answered 401: the client id or secret is wrong (a configuration to
  fix, not an outage to wait out);
- ``unavailable``: no usable answer (timeout, refused, 5xx, not JSON);
- ``unknown``: not checked yet (the first check is under way).

The rate-limit store: ``ok``, ``unavailable`` (the limits then count in each process's memory:
nobody is refused, see checkout.ratelimits), ``memory`` (the default store, in the process: it
cannot be down), or ``unknown``. A change of either is logged once, when it is seen.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .errors import UpstreamAuthError, UpstreamError

log = logging.getLogger("checkout.readiness")

OK, UNAVAILABLE, CREDENTIALS_REFUSED, UNKNOWN, MEMORY = (
    "ok", "unavailable", "credentials_refused", "unknown", "memory")
# Seconds after which a check that found the upstream or the store unwell is made again.
RECHECK_WHILE_UNWELL = 2.0
# Seconds a scrape waits for a process's first check, rather than report what it does not know.
FIRST_CHECK_WAIT = 3.0


@dataclass(frozen=True)
class Readiness:
    upstream: str
    ratelimit_store: str
    checked_seconds_ago: float | None

    @property
    def well(self) -> bool:
        return self.upstream == OK and self.ratelimit_store in (OK, MEMORY)


class ReadinessChecks:
    """The last answers of one app in this process, refreshed in the background.

    ``check_upstream`` raises the upstream's error or returns; ``check_store`` says whether the
    rate-limit store answers (None: it is the process's memory).
    """

    def __init__(self, check_upstream: Callable[[], None],
                 check_store: Callable[[], bool | None], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._check_upstream = check_upstream
        self._check_store = check_store
        self._clock = clock
        self._lock = threading.Lock()
        self._running = False
        self._upstream = UNKNOWN
        self._store = UNKNOWN
        self._checked_at: float | None = None
        self._due_now = False
        self._first = threading.Event()

    def current(self) -> Readiness:
        with self._lock:
            ago = None if self._checked_at is None else self._clock() - self._checked_at
            return Readiness(self._upstream, self._store, ago)

    @property
    def checking(self) -> bool:
        """Whether a check is under way."""
        with self._lock:
            return self._running

    def now(self, ttl: float) -> Readiness:
        """The last answers, a new check started when they are older than ``ttl`` seconds (what
        ``/healthz`` and the desk's overview show)."""
        self.refresh_if_stale(ttl)
        return self.current()

    def refresh_if_stale(self, ttl: float) -> None:
        """Start a check on a thread of its own when the last is older than ``ttl`` seconds
        (:data:`RECHECK_WHILE_UNWELL` when it found something unwell), or when one is due now
        (and none is running)."""
        with self._lock:
            if self._running or not self._stale(ttl):
                return
            self._running, self._due_now = True, False
        threading.Thread(target=self._check, name="checkout-readiness", daemon=True).start()

    def check_soon(self) -> None:
        """Check now, whatever the age of the last check (an outage may have started); with a
        check under way, the next probe starts another."""
        with self._lock:
            self._due_now = True
        self.refresh_if_stale(0)

    def for_scrape(self, ttl: float, wait: float = FIRST_CHECK_WAIT) -> Readiness:
        """What a metrics scrape reports: the last answers, as a probe would find them (refreshed
        when stale); in a process never checked yet, the first check's, waited for up to
        ``wait`` seconds (still unknown after that: ``unknown``)."""
        self.refresh_if_stale(ttl)
        self._first.wait(wait)
        return self.current()

    def _stale(self, ttl: float) -> bool:
        # Under self._lock.
        if self._checked_at is None or self._due_now:
            return True
        well = Readiness(self._upstream, self._store, None).well
        return self._clock() - self._checked_at >= (ttl if well else min(ttl, RECHECK_WHILE_UNWELL))

    def _check(self) -> None:
        try:
            upstream = _upstream_answer(self._check_upstream)
            store = _store_answer(self._check_store)
            with self._lock:
                # Told before it shows: whoever reads the new answer finds its log line written.
                _tell_changes((self._upstream, self._store), (upstream, store))
                self._upstream, self._store = upstream, store
                self._checked_at = self._clock()
            self._first.set()
        finally:
            with self._lock:
                self._running = False


def _upstream_answer(check: Callable[[], None]) -> str:
    try:
        check()
    except UpstreamAuthError:
        return CREDENTIALS_REFUSED
    except UpstreamError:
        return UNAVAILABLE
    return OK


def _store_answer(check: Callable[[], bool | None]) -> str:
    try:
        answer = check()
    except Exception:  # a store client that raises instead of answering False is as down
        return UNAVAILABLE
    if answer is None:
        return MEMORY
    return OK if answer else UNAVAILABLE


def _tell_changes(before: tuple[str, str], after: tuple[str, str]) -> None:
    (upstream_was, store_was), (upstream, store) = before, after
    if upstream != upstream_was:
        if upstream == CREDENTIALS_REFUSED:
            log.error("the upstream refuses the checkout's credentials (401): check "
                      "CHECKOUT_CLIENT_ID and CHECKOUT_CLIENT_SECRET")
        elif upstream == UNAVAILABLE:
            log.warning("the upstream does not answer the readiness check")
        elif upstream_was != UNKNOWN:
            log.info("the upstream answers the readiness check again")
    if store != store_was:
        if store == UNAVAILABLE:
            log.warning("the rate-limit store does not answer: each process counts the limits "
                        "in its own memory until it is back")
        elif store == OK and store_was != UNKNOWN:
            log.info("the rate-limit store answers again: the limits are shared again")
