"""What is done with stored webhooks after they were acknowledged: one :func:`sweep`.

The app's :class:`checkout.webhooks.background.Dispatcher` runs a sweep in its thread when a
delivery is stored and every ``CHECKOUT_WEBHOOK_SWEEP_INTERVAL`` seconds, so events stored by a
process that died before processing them are picked up by another: claims are in the database, not
in this process. Each sweep also purges expired sessions (hourly) and asks the upstream about
orders whose webhooks were lost (:mod:`checkout.webhooks.reconcile`).

:func:`process_pending` does one round synchronously (tests, the CLI, or a cron job when
``CHECKOUT_WEBHOOK_BACKGROUND`` is False).
"""
from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass

from flask import Flask
from sqlalchemy.exc import OperationalError

from .. import session_purge
from ..state import real_app, state_of
from ..store import availability_of, database_failure
from .background import Dispatcher
from .dispatch import dispatch_signals
from .fetch import fetch_due_orders
from .processing import process_stored_events

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class Round:
    """What one round of :func:`process_pending` did."""

    events: int
    signals: int
    fetches: int

    @property
    def busy(self) -> bool:
        return bool(self.events or self.signals or self.fetches)


def process_pending(app: Flask, *, fetch: bool | None = None) -> Round:
    """Process stored events, send owed signals, fetch due full orders, until nothing is left.

    Runs in the calling thread. Safe to run in several threads and processes at once: every step
    claims its rows in the database first.
    """
    app = real_app(app)
    if fetch is None:
        fetch = bool(app.config.get("CHECKOUT_WEBHOOK_FETCH_ORDERS", True))
    total = Round(0, 0, 0)
    while True:
        done = _one_round(app, fetch)
        total = Round(total.events + done.events, total.signals + done.signals,
                      total.fetches + done.fetches)
        if not done.busy:
            return total


def _one_round(app: Flask, fetch: bool) -> Round:
    state = state_of(app)
    engine = state.engine
    events = process_stored_events(app, engine)
    signals = dispatch_signals(app, engine)
    attempts = int(app.config.get("CHECKOUT_WEBHOOK_FETCH_ATTEMPTS", 8))
    fetches = fetch_due_orders(state.order_statuses, max_attempts=attempts) if fetch else 0
    return Round(events, signals, fetches)


def sweep(app: Flask) -> None:
    """One round of the background work (never raises): stored events and owed signals, then the
    hourly purge, the create answers no page took, and the orders whose webhooks were lost."""
    round_failed = False
    try:
        process_pending(app)
    except OperationalError as exc:    # the database is down: one line an outage
        log.log(logging.WARNING if availability_of(state_of(app).engine).first_of_kind(
            "dispatcher") else logging.DEBUG,
            "webhook dispatcher round failed: database unavailable (%s)", database_failure(exc))
        round_failed = True
    except Exception:  # anything else is a bug: its traceback
        log.exception("webhook dispatcher round failed")
        round_failed = True
    # Expired sessions (and KYC levels not confirmed for long) are deleted at most once per
    # CHECKOUT_SESSION_PURGE_INTERVAL (never raises).
    state = state_of(app)
    session_purge.maybe_purge(
        state.engine, state.purge_schedule,
        interval=float(app.config["CHECKOUT_SESSION_PURGE_INTERVAL"]),
        remember_days=float(app.config["CHECKOUT_KYC_REMEMBER_DAYS"]))
    # Likewise the create answers no page took (personal data in this process's memory).
    state.just_created.forget_stale()
    # Orders whose webhooks were lost: due ones are asked of the upstream, within this
    # process's per-minute bound (never raises). Not while the round above failed: the
    # database is likely down for it too.
    if not round_failed:
        state.reconciler.maybe_run()


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


def get_dispatcher(app: Flask) -> Dispatcher | None:
    state = app.extensions.get("checkout")
    return state.dispatcher if state is not None else None

