"""The per-process thread that runs the app's background sweep
(:func:`checkout.webhooks.dispatcher.sweep`).

One daemon thread per process and app, started lazily by the first checkout request (and again
after a fork, so each gunicorn worker has its own). It wakes when a delivery is stored and every
``CHECKOUT_WEBHOOK_SWEEP_INTERVAL`` seconds, and gives way to acknowledgements between batches.
It is given the sweep it runs, so that the app's state can hold it without the sweep's modules.
"""
from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager

from flask import Flask

from ..process_local import ProcessLocal

Sweep = Callable[..., None]     # sweep(app, *, between_batches=...)

# Between batches the dispatcher waits until no delivery has been stored for GIVE_WAY_QUIET
# seconds, for GIVE_WAY_MAX at most. During a burst of deliveries its batches would take CPU (and
# SQLite's one writer) from the acknowledgements, which a sender waits on and may give up on; so
# while they keep coming it processes a batch a second at least, and catches up at full speed as
# soon as the burst pauses. Processing a batch costs about 20 ms of CPU, more than 50
# acknowledgements.
GIVE_WAY_MAX = 1.0
GIVE_WAY_QUIET = 0.02


class Dispatcher:
    """The background thread of one app in one process.

    It holds the app weakly: an app that is thrown away (tests make many) ends its thread, at
    once if the thread is asleep (the weak reference's callback wakes it), or when its round ends.
    """

    def __init__(self, app: Flask, sweep: Sweep) -> None:
        self._app = weakref.ref(app, self._app_gone)
        self._sweep = sweep
        self._wake = threading.Event()
        self._stop = threading.Event()
        # This process's thread: after a fork the parent's does not exist, and the child starts
        # its own (under a lock no thread of the parent can be holding).
        self._thread: ProcessLocal[threading.Thread | None] = ProcessLocal(lambda: None)
        # Deliveries being stored in this process: not its parent's, stored when it forked (this
        # process's dispatcher would give way to them between every batch, for ever).
        self._acks: ProcessLocal[int] = ProcessLocal(int)
        self._last_ack = 0.0        # when the last one was stored (monotonic)
        self._acknowledging = _Acknowledging(self)

    def enabled(self, app: Flask) -> bool:
        return bool(app.config.get("CHECKOUT_WEBHOOK_BACKGROUND", True))

    def notify(self) -> None:
        """Something was stored: process it soon (starting the thread if needed)."""
        if self.ensure_running():
            self._wake.set()

    def ensure_running(self) -> bool:
        """Start the thread in this process if it is not running (cheap when it is)."""
        thread = self._thread.value
        if thread is not None and thread.is_alive():
            return True
        app = self._app()
        if app is None or not self.enabled(app):
            return False
        with self._thread.lock:
            thread = self._thread.value
            if thread is None or not thread.is_alive():
                # After a fork the parent's thread does not exist here: start our own.
                self._stop.clear()
                thread = self._thread.value = threading.Thread(
                    target=self._run, daemon=True, name=f"checkout-webhooks-{os.getpid()}")
                thread.start()
        return True

    def acknowledging(self) -> AbstractContextManager[None]:
        """Wrap the storing of a delivery: the dispatcher gives way meanwhile."""
        return self._acknowledging

    def _give_way(self) -> None:
        # Acknowledgements come first (the sender waits on them; processing can lag a little):
        # between batches, wait for a pause in this process's deliveries, up to a bound. Polled at
        # the pause's length: each wake-up takes the GIL from the requests.
        deadline = time.monotonic() + GIVE_WAY_MAX
        while not self._stop.is_set():
            now = time.monotonic()
            quiet = now - self._last_ack
            if (not self._acks.value and quiet >= GIVE_WAY_QUIET) or now >= deadline:
                return
            time.sleep(min(deadline - now, max(GIVE_WAY_QUIET - quiet, GIVE_WAY_QUIET / 2)))

    def _app_gone(self, _ref: object) -> None:
        # Called by the collector, in whichever thread it runs: only set events here.
        self._stop.set()
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        thread = self._thread.value
        if thread is not None and thread.is_alive():
            thread.join(timeout)

    def _run(self) -> None:
        first = True   # the start-up sweep: events a dead process left behind
        while not self._stop.is_set():
            app = self._app()
            if app is None:
                return
            interval = float(app.config.get("CHECKOUT_WEBHOOK_SWEEP_INTERVAL", 5.0))
            if not first:
                del app                 # not kept alive by a sleeping thread
                self._wake.wait(interval)
                app = self._app()
                if app is None:
                    return
            first = False
            self._wake.clear()
            if self._stop.is_set():
                return
            self._sweep(app, between_batches=self._give_way)
            del app


class _Acknowledging:
    """The context of :meth:`Dispatcher.acknowledging` (a class: cheaper than a generator, on
    every delivery)."""

    __slots__ = ("_dispatcher",)

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher

    def __enter__(self) -> None:
        dispatcher = self._dispatcher
        acks = dispatcher._acks
        with acks.lock:
            acks.value += 1

    def __exit__(self, *exc: object) -> None:
        dispatcher = self._dispatcher
        acks = dispatcher._acks
        with acks.lock:
            acks.value -= 1
            dispatcher._last_ack = time.monotonic()
