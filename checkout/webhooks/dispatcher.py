"""The per-process worker that acts on stored webhooks after they were acknowledged.

One daemon thread per process and app, started lazily by the first request of any kind (and again
after a fork, so each gunicorn worker has its own). It wakes when a delivery is stored and every
``CHECKOUT_WEBHOOK_SWEEP_INTERVAL`` seconds, so events stored by a process that died before
processing them are picked up by another: claims are in the database, not in this process. Each
sweep also purges expired sessions (hourly) and asks the upstream about orders whose webhooks were
lost (:mod:`checkout.webhooks.reconcile`).

:func:`process_pending` does one round synchronously (tests, the CLI, or a cron job when
``CHECKOUT_WEBHOOK_BACKGROUND`` is False).
"""
from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from flask import Flask

from ..session_purge import maybe_purge
from ..state import real_app, state_of
from .dispatch import dispatch_signals
from .fetch import fetch_due_orders
from .processing import process_stored_events
from .reconcile import maybe_reconcile

log = logging.getLogger(__name__)

# Seconds the dispatcher waits for acknowledgements between batches. During a burst of deliveries
# its batches would take CPU (and SQLite's one writer) from the acknowledgements; so it processes
# a batch per quarter second at least while they keep coming, and catches up at full speed after.
GIVE_WAY_MAX = 0.25


@dataclass(frozen=True)
class Round:
    """What one round of :func:`process_pending` did."""

    events: int
    signals: int
    fetches: int

    @property
    def busy(self) -> bool:
        return bool(self.events or self.signals or self.fetches)


def process_pending(app: Flask, *, fetch: bool | None = None,
                    between_batches: Callable[[], None] | None = None) -> Round:
    """Process stored events, send owed signals, fetch due full orders, until nothing is left.

    Runs in the calling thread. Safe to run in several threads and processes at once: every step
    claims its rows in the database first.
    """
    app = real_app(app)
    if fetch is None:
        fetch = bool(app.config.get("CHECKOUT_WEBHOOK_FETCH_ORDERS", True))
    total = Round(0, 0, 0)
    while True:
        done = _one_round(app, fetch, between_batches)
        total = Round(total.events + done.events, total.signals + done.signals,
                      total.fetches + done.fetches)
        if not done.busy:
            return total


def _one_round(app: Flask, fetch: bool, between_batches: Callable[[], None] | None) -> Round:
    engine = state_of(app).engine
    events = process_stored_events(app, engine, between_batches=between_batches)
    signals = dispatch_signals(app, engine, between_batches=between_batches)
    fetches = fetch_due_orders(app, engine) if fetch else 0
    return Round(events, signals, fetches)


class Dispatcher:
    """The background thread of one app in one process.

    It holds the app weakly: an app that is thrown away (tests make many) ends its thread.
    """

    def __init__(self, app: Flask) -> None:
        self._app = weakref.ref(app)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid: int | None = None
        self._acks = 0              # acknowledgements in flight in this process
        self._acks_lock = threading.Lock()

    def enabled(self, app: Flask) -> bool:
        return bool(app.config.get("CHECKOUT_WEBHOOK_BACKGROUND", True))

    def notify(self) -> None:
        """Something was stored: process it soon (starting the thread if needed)."""
        if self.ensure_running():
            self._wake.set()

    def ensure_running(self) -> bool:
        """Start the thread in this process if it is not running (cheap when it is)."""
        if self._thread is not None and self._pid == os.getpid() and self._thread.is_alive():
            return True
        app = self._app()
        if app is None or not self.enabled(app):
            return False
        with self._lock:
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                # After a fork the parent's thread does not exist here: start our own.
                self._stop.clear()
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=f"checkout-webhooks-{self._pid}")
                self._thread.start()
        return True

    @contextmanager
    def acknowledging(self) -> Iterator[None]:
        """Wrap the storing of a delivery: the dispatcher gives way meanwhile."""
        with self._acks_lock:
            self._acks += 1
        try:
            yield
        finally:
            with self._acks_lock:
                self._acks -= 1

    def _give_way(self) -> None:
        # Acknowledgements come first (the sender waits on them; processing can lag a little):
        # between batches, wait while this process is storing deliveries, up to a bound.
        deadline = time.monotonic() + GIVE_WAY_MAX
        while self._acks and time.monotonic() < deadline and not self._stop.is_set():
            time.sleep(0.002)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout)

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
            round_failed = False
            try:
                process_pending(app, between_batches=self._give_way)
            except Exception:  # the database may be down; try again later
                log.exception("webhook dispatcher round failed")
                round_failed = True
            # The sweep already runs periodically in every process: it also deletes expired
            # sessions, at most once per CHECKOUT_SESSION_PURGE_INTERVAL (never raises).
            maybe_purge(app)
            # Orders whose webhooks were lost: due ones are asked of the upstream, within this
            # process's per-minute bound (never raises). A status it stores wakes this thread.
            # Not while the round above failed: the database is likely down for it too.
            if not round_failed:
                maybe_reconcile(app)
            del app


def get_dispatcher(app: Flask) -> Dispatcher | None:
    state = app.extensions.get("checkout")
    return state.dispatcher if state is not None else None

