"""Sandbox time: real wall-clock timestamps, scaled waits, and one timer thread.

The sandbox stamps orders and deliveries with the real UTC time (merchants compare them with their own
logs), but every *wait* the upstream would make (an order expiring after 5 minutes, a webhook retry
after 256 s) is multiplied by ``scale``. With ``scale=0.001`` a five-minute expiry fires after 0.3 s,
so whole order lifecycles and retry schedules run inside a test.

A :class:`ManualClock` runs at the real pace and moves forward when told: :meth:`Scheduler.advance`
runs every timer that falls due, in order, in the caller's thread. A test (or a developer on the
console) says "five minutes later" and the order has expired, at once and always the same way,
where a sped-up clock made the test race the timers.

:class:`Scheduler` runs callables after a number of *sandbox* seconds on one daemon thread. Callables
must be quick: anything that blocks (an HTTP request) belongs on another thread, or it would hold up
every other timer of the sandbox.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["Clock", "ManualClock", "Scheduler", "ScheduledCall"]

log = logging.getLogger(__name__)


class Clock:
    """The sandbox's notion of time: ``now()`` is real UTC; waits last ``seconds * scale``."""

    manual = False          # moved forward only by the passage of time

    def __init__(self, scale: float = 1.0) -> None:
        if not scale > 0:  # also rejects NaN
            raise ValueError(f"time scale must be positive, got {scale!r}")
        self.scale = float(scale)

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        return datetime.now(UTC)

    def elapsed(self) -> float:
        """Seconds on a clock that never goes back (``time.monotonic``): when timers fall due."""
        return time.monotonic()

    def sleep_seconds(self, seconds: float) -> float:
        """How many real seconds a wait of ``seconds`` sandbox seconds lasts."""
        return max(0.0, float(seconds)) * self.scale

    def due_at(self, seconds: float) -> datetime:
        """The real UTC time at which a wait of ``seconds`` sandbox seconds, started now, ends."""
        return self.now() + timedelta(seconds=self.sleep_seconds(seconds))

    def __repr__(self) -> str:
        return f"Clock(scale={self.scale!r})"


class ManualClock(Clock):
    """Real time (pace 1), moved forward on demand (:meth:`Scheduler.advance`): timestamps stay
    in order and near the real time, and a test jumps over the waits it does not want to sit."""

    manual = True

    def __init__(self) -> None:
        super().__init__(1.0)
        self._ahead = 0.0           # seconds moved forward so far
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self._ahead)

    def elapsed(self) -> float:
        return time.monotonic() + self._ahead

    def forward_to(self, elapsed: float) -> None:
        """Move forward until :meth:`elapsed` reads at least ``elapsed`` (never back)."""
        with self._lock:
            self._ahead += max(0.0, elapsed - self.elapsed())

    def __repr__(self) -> str:
        return f"ManualClock(ahead={self._ahead:g})"


@dataclass(eq=False)
class ScheduledCall:
    """A handle on one call of :meth:`Scheduler.call_later`; pass it to :meth:`Scheduler.cancel`."""

    due: float                      # the clock's elapsed() at which it runs
    delay: float                    # the requested wait, in sandbox seconds
    due_at: datetime                # the same moment as wall-clock UTC, for display
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False
    started: bool = False           # taken off the heap to run (set under the scheduler's lock)

    @property
    def pending(self) -> bool:
        return not (self.cancelled or self.started)


class Scheduler:
    """A heap of timers served by one daemon thread.

    Thread-safe: any thread may call :meth:`call_later` or :meth:`cancel`, including a scheduled
    callable itself. An exception raised by a callable is logged and the thread carries on.
    """

    def __init__(self, clock: Clock | None = None, *, name: str = "sandbox-scheduler") -> None:
        self.clock = clock or Clock()
        self._name = name
        self._heap: list[tuple[float, int, ScheduledCall]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition(threading.Lock())
        self._running = 0               # callables executing right now (worker or run_pending_now)
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._advancing = False         # advance() runs the calls falling due meanwhile

    # -- scheduling -------------------------------------------------------------------------------

    def call_later(self, sandbox_seconds: float, fn: Callable[..., Any], *args: Any,
                   **kwargs: Any) -> ScheduledCall:
        """Run ``fn(*args, **kwargs)`` after ``sandbox_seconds`` of sandbox time (0: at once)."""
        real = self.clock.sleep_seconds(sandbox_seconds)
        call = ScheduledCall(due=self.clock.elapsed() + real, delay=float(sandbox_seconds),
                             due_at=self.clock.now() + timedelta(seconds=real),
                             fn=fn, args=args, kwargs=kwargs)
        with self._cond:
            if self._stopped:
                raise RuntimeError("scheduler has been shut down")
            heapq.heappush(self._heap, (call.due, next(self._seq), call))
            self._ensure_thread()
            # Wake the thread: this call may be due before the one it is sleeping towards.
            self._cond.notify_all()
        return call

    def cancel(self, handle: ScheduledCall) -> bool:
        """Stop ``handle`` from running. False if it already ran, is running or was cancelled."""
        with self._cond:
            if not handle.pending:
                return False
            handle.cancelled = True
            # Left in the heap and skipped when popped: removing from the middle of a heap costs more.
            self._cond.notify_all()
            return True

    def pending_count(self) -> int:
        """How many calls wait to run (cancelled ones excluded)."""
        with self._cond:
            return sum(1 for _, _, call in self._heap if call.pending)

    def shutdown(self, *, wait: bool = True, timeout: float | None = 5.0) -> None:
        """Drop every pending call and stop the thread; later ``call_later`` calls raise."""
        with self._cond:
            self._stopped = True
            for _, _, call in self._heap:
                call.cancelled = True
            self._heap.clear()
            self._cond.notify_all()
            thread = self._thread
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- moving a manual clock --------------------------------------------------------------------

    def advance(self, sandbox_seconds: float) -> int:
        """Move a :class:`ManualClock` forward by ``sandbox_seconds``, running every call that
        falls due meanwhile, in order of its due time, in the calling thread (the clock reads
        each call's due time while it runs, so what it stamps is in order); calls those calls
        schedule run too if they fall due in the window. Returns how many ran."""
        if not self.clock.manual or not isinstance(self.clock, ManualClock):
            raise RuntimeError("only a manual clock is moved forward")
        if not sandbox_seconds >= 0:
            raise ValueError(f"time only moves forward, not by {sandbox_seconds!r} s")
        with self._cond:
            self._advancing = True      # the thread leaves them to this call meanwhile
        ran = 0
        try:
            target = self.clock.elapsed() + sandbox_seconds
            while True:
                with self._cond:
                    while self._heap and not self._heap[0][2].pending:
                        heapq.heappop(self._heap)
                    if not self._heap or self._heap[0][0] > target:
                        break
                    due, _, call = heapq.heappop(self._heap)
                    call.started = True
                    self._running += 1
                self.clock.forward_to(due)
                self._run_counted(call)
                ran += 1
            self.clock.forward_to(target)
        finally:
            with self._cond:
                self._advancing = False
                self._cond.notify_all()
        return ran

    # -- helpers for tests ------------------------------------------------------------------------

    def run_pending_now(self) -> int:
        """Run, in the calling thread, every call queued right now, however far off it is due.

        Calls that those calls schedule are left for later (so a self-rescheduling timer cannot loop
        forever). Returns how many ran. Lets a test fast-forward order timers deterministically.
        """
        with self._cond:
            batch = [call for _, _, call in sorted(self._heap) if call.pending]
            self._heap.clear()      # what is not in the batch was cancelled
            for call in batch:
                call.started = True
            self._running += len(batch)
        ran = 0
        for call in batch:
            self._run_counted(call)
            ran += 1
        return ran

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait (real seconds) until nothing is queued or running. True if that happened in time.

        Calls scheduled by running calls count too, so this waits out a whole retry schedule.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._running or any(call.pending for _, _, call in self._heap):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    # -- the thread -------------------------------------------------------------------------------

    def _ensure_thread(self) -> None:
        # Started lazily so that building a sandbox app (e.g. to list its routes) starts no thread.
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                call = self._next_due_locked()
                if call is None:
                    return
                self._running += 1
            self._run_counted(call)

    def _run_counted(self, call: ScheduledCall) -> None:
        """Run ``call``, counted in ``_running`` by the caller, and say when it is done (drain()
        waits for the count to fall)."""
        try:
            self._invoke(call)
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def _next_due_locked(self) -> ScheduledCall | None:
        """Block until a call is due and pop it; None once shut down."""
        while not self._stopped:
            while self._heap and not self._heap[0][2].pending:
                heapq.heappop(self._heap)
                self._cond.notify_all()     # drain() may be waiting on a cancelled leftover
            if not self._heap or self._advancing:
                self._cond.wait()
                continue
            wait = self._heap[0][0] - self.clock.elapsed()
            if wait <= 0:
                call = heapq.heappop(self._heap)[2]
                call.started = True
                return call
            self._cond.wait(wait)
        return None

    @staticmethod
    def _invoke(call: ScheduledCall) -> None:
        try:
            call.fn(*call.args, **call.kwargs)
        except Exception:
            log.exception("sandbox scheduler: %r raised", getattr(call.fn, "__qualname__", call.fn))
