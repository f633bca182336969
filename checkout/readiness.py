"""Whether the checkout's dependencies other than its database answer: the upstream and the
rate-limit store, as last checked in the background.

A probe never waits on them: ``GET /healthz`` and ``/healthz/ready`` answer from the last check
(and from the upstream breaker's state, which every real call keeps current), and when that check
is older than ``CHECKOUT_HEALTH_CACHE_SECONDS`` they start one on a thread of its own, one at a
time per app and process. Each check is one upstream call made with the merchant's key, so
hammering the routes cannot be turned into a flood of upstream calls.

What the upstream check says:

- ``ok``: it answered;
- ``credentials_refused``: it answered 401: the client id or secret is wrong (a configuration to
  fix, not an outage to wait out);
- ``unavailable``: no usable answer (timeout, refused, 5xx, not JSON), or the breaker is open;
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
from typing import TYPE_CHECKING, Any

from .errors import UpstreamAuthError, UpstreamError
from .upstream.breaker import CLOSED

if TYPE_CHECKING:
    from .upstream.breaker import Breaker
    from .upstream.client import UpstreamClient

log = logging.getLogger("checkout.readiness")

OK, UNAVAILABLE, CREDENTIALS_REFUSED, UNKNOWN, MEMORY = (
    "ok", "unavailable", "credentials_refused", "unknown", "memory")


@dataclass(frozen=True)
class Readiness:
    upstream: str
    ratelimit_store: str
    checked_seconds_ago: float | None


class ReadinessChecks:
    """The last answers of one app in this process, refreshed in the background.

    ``check_upstream`` raises the upstream's error or returns; ``check_store`` says whether the
    rate-limit store answers (None: it is the process's memory); ``on_checked`` is told each
    check's answers (the metrics' gauges).
    """

    def __init__(self, check_upstream: Callable[[], None],
                 check_store: Callable[[], bool | None], *,
                 clock: Callable[[], float] = time.monotonic,
                 on_checked: Callable[[Readiness], None] | None = None) -> None:
        self._check_upstream = check_upstream
        self._check_store = check_store
        self._clock = clock
        self._on_checked = on_checked
        self._lock = threading.Lock()
        self._running = False
        self._upstream = UNKNOWN
        self._store = UNKNOWN
        self._checked_at: float | None = None

    def current(self) -> Readiness:
        with self._lock:
            ago = None if self._checked_at is None else self._clock() - self._checked_at
            return Readiness(self._upstream, self._store, ago)

    def refresh_if_stale(self, ttl: float) -> None:
        """Start a check on a thread of its own when the last is older than ``ttl`` seconds (and
        none is running)."""
        with self._lock:
            fresh = self._checked_at is not None and self._clock() - self._checked_at < ttl
            if fresh or self._running:
                return
            self._running = True
        threading.Thread(target=self._check, name="checkout-readiness", daemon=True).start()

    def _check(self) -> None:
        try:
            upstream = _upstream_answer(self._check_upstream)
            store = _store_answer(self._check_store)
            with self._lock:
                # Told before it shows: whoever reads the new answer finds its log line written.
                _tell_changes((self._upstream, self._store), (upstream, store))
                self._upstream, self._store = upstream, store
                self._checked_at = self._clock()
            if self._on_checked is not None:
                self._on_checked(Readiness(upstream, store, 0.0))
        finally:
            with self._lock:
                self._running = False


def partner_now(checks: ReadinessChecks, breaker: Breaker,
                ttl: float) -> tuple[Readiness, dict[str, Any]]:
    """The upstream's and the rate-limit store's readiness now (``/healthz/ready``, the desk's
    overview): the last background check (a new one started when older than ``ttl`` seconds),
    and the breaker, which every real call keeps current: calls since the check that kept
    failing make a check that said ``ok`` ``unavailable``. With the breaker's details."""
    checks.refresh_if_stale(ttl)
    seen = checks.current()
    state = breaker.snapshot()
    upstream = seen.upstream
    if state.state != CLOSED and upstream == OK:
        upstream = UNAVAILABLE
    details: dict[str, Any] = {"breaker": state.state, "checked_seconds_ago":
                               None if seen.checked_seconds_ago is None
                               else round(seen.checked_seconds_ago)}
    if state.retry_in is not None:
        details["retry_in_seconds"] = round(state.retry_in, 1)
    return Readiness(upstream, seen.ratelimit_store, seen.checked_seconds_ago), details


def upstream_answers(upstream: UpstreamClient) -> None:
    """The upstream's readiness check: one cheap call (reference data); raises its error."""
    upstream.onramp_assets()


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
