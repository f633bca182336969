"""How often this process does its background chores, per app: small clocks of its own, held by
the app's state and read by the chores (:mod:`checkout.session_purge`,
:mod:`checkout.webhooks.reconcile`). Nothing here touches the database or the upstream."""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class Schedule:
    """When this process last did one chore for one app (the purge, a reconciliation pass): at
    most once per interval."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last: float | None = None

    def due(self, interval: float) -> bool:
        """True (and the slot is taken) when the chore did not run in this process for ``interval``
        s."""
        if interval <= 0:
            return False                   # disabled: the CLI (e.g. from cron) does it
        with self._lock:
            now = self._clock()
            if self._last is not None and now - self._last < interval:
                return False
            self._last = now
            return True


class CallBudget:
    """At most ``per_minute`` upstream calls in any 60 seconds, in this process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: deque[float] = deque()

    def take(self, per_minute: int, now: float) -> bool:
        """True (and one call is counted) when a call is allowed at ``now`` (seconds)."""
        with self._lock:
            while self._calls and self._calls[0] <= now - 60.0:
                self._calls.popleft()
            if len(self._calls) >= per_minute:
                return False
            self._calls.append(now)
            return True

    def give_back(self, now: float) -> None:
        """Uncount a call taken at ``now`` that was not made."""
        with self._lock:
            try:
                self._calls.remove(now)
            except ValueError:
                pass
