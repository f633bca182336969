"""The per-process worker that acts on stored webhooks after they were acknowledged.

One daemon thread per process and app, started lazily by the first checkout request (and again
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
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from flask import Flask
from sqlalchemy.exc import OperationalError

from .. import session_purge
from ..process_local import ProcessLocal
from ..state import real_app, state_of
from ..store import database_failure
from .dispatch import dispatch_signals
from .fetch import fetch_due_orders
from .processing import process_stored_events
from .reconcile import maybe_reconcile

log = logging.getLogger(__name__)

# Between batches the dispatcher waits until no delivery has been stored for GIVE_WAY_QUIET
# seconds, for GIVE_WAY_MAX at most. During a burst of deliveries its batches would take CPU (and
# SQLite's one writer) from the acknowledgements, which a sender waits on and may give up on; so
# while they keep coming it processes a batch a second at least, and catches up at full speed as
# soon as the burst pauses. Processing a batch costs about 20 ms of CPU, more than 50
# acknowledgements.
GIVE_WAY_MAX = 1.0
GIVE_WAY_QUIET = 0.02


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


def sweep(app: Flask, *, between_batches: Callable[[], None] | None = None) -> None:
    """One round of the background work (never raises): stored events and owed signals, then the
    hourly purge, the create answers no page took, and the orders whose webhooks were lost."""
    round_failed = False
    try:
        process_pending(app, between_batches=between_batches)
    except OperationalError as exc:    # the database is down: one line a round
        log.warning("webhook dispatcher round failed: database unavailable (%s)",
                    database_failure(exc))
        round_failed = True
    except Exception:  # anything else is a bug: its traceback
        log.exception("webhook dispatcher round failed")
        round_failed = True
    # Expired sessions (and KYC levels not confirmed for long) are deleted at most once per
    # CHECKOUT_SESSION_PURGE_INTERVAL (never raises).
    session_purge.maybe_purge(app)
    # Likewise the create answers no page took (personal data in this process's memory).
    state_of(app).just_created.forget_stale()
    # Orders whose webhooks were lost: due ones are asked of the upstream, within this
    # process's per-minute bound (never raises). Not while the round above failed: the
    # database is likely down for it too.
    if not round_failed:
        maybe_reconcile(app)


def run_worker(app: Flask, stop: threading.Event) -> None:
    """The background work in this process until ``stop`` is set (``flask checkout worker``):
    a sweep every ``CHECKOUT_WEBHOOK_SWEEP_INTERVAL`` seconds. Deliveries are stored by the web
    processes; every claim is in the database, so this process, the web processes' threads and
    other workers can run side by side, and what a process that died had claimed is taken again
    once its lease is over."""
    interval = float(app.config.get("CHECKOUT_WEBHOOK_SWEEP_INTERVAL", 5.0))
    log.info("checkout worker started (pid %s): a sweep every %g s", os.getpid(), interval)
    while not stop.is_set():
        sweep(real_app(app))
        stop.wait(interval)
    log.info("checkout worker stopped (pid %s)", os.getpid())


class Dispatcher:
    """The background thread of one app in one process.

    It holds the app weakly: an app that is thrown away (tests make many) ends its thread, at
    once if the thread is asleep (the weak reference's callback wakes it), or when its round ends.
    """

    def __init__(self, app: Flask) -> None:
        self._app = weakref.ref(app, self._app_gone)
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
            sweep(app, between_batches=self._give_way)
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


def get_dispatcher(app: Flask) -> Dispatcher | None:
    state = app.extensions.get("checkout")
    return state.dispatcher if state is not None else None

