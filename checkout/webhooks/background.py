"""The per-process thread that runs the app's background sweep
(:func:`checkout.webhooks.dispatcher.sweep`).

One daemon thread per process and app, started lazily by the first checkout request (and again
after a fork, so each gunicorn worker has its own). It wakes when a delivery is stored and every
``CHECKOUT_WEBHOOK_SWEEP_INTERVAL`` seconds. It is given the sweep it runs, so that the app's
state can hold it without the sweep's modules.
"""
from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable

from flask import Flask

from ..process_local import ProcessLocal

Sweep = Callable[[Flask], None]


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
            self._sweep(app)
            del app
