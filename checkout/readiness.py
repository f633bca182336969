"""The last upstream readiness answer of one app (``GET /healthz``), and who may refresh it.

The route is public and the upstream check is a call made with the merchant's key, so its answer is
reused for a while per app and process: hammering ``/healthz`` cannot be turned into a flood of
upstream calls. Only one caller at a time refreshes an expired answer; the others meanwhile get the
previous one.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable


class ReadinessCache:
    """One cached answer with a single refresher."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._refreshing = threading.Lock()
        self._value: str | None = None
        self._expires = 0.0

    def get(self, ttl: float, check: Callable[[], str]) -> str:
        value = self._value
        if value is not None and self._clock() < self._expires:
            return value
        if value is not None:
            # Someone else is refreshing: answer with the previous result rather than queue up.
            if not self._refreshing.acquire(blocking=False):
                return value
        else:
            self._refreshing.acquire()     # the very first answer: wait for the one refresh
        try:
            if self._value is not None and self._clock() < self._expires:
                return self._value          # refreshed while we waited for the lock
            value = check()
            self._value, self._expires = value, self._clock() + max(0.0, ttl)
            return value
        finally:
            self._refreshing.release()
