"""The sandbox's manual clock, moved forward by a test: every test's sandbox runs at one pace (the
real one, ``SANDBOX_CLOCK = "manual"``), and a test says "thirty seconds later" where it needs the
agent's confirmation, a payout or an expiry, rather than waiting for them or racing them."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask

from .waiting import wait_for

# What every test's sandbox is told (the root conftest's ``config``, the sandbox tests' factory,
# the browser and gunicorn harnesses).
MANUAL = {"SANDBOX_CLOCK": "manual"}


def sandbox_state(app: Flask) -> Any:
    """The sandbox's state (``.scheduler``, ``.clock``, ``.orders``) of a sandbox app, or of the
    sandbox a checkout's host app embeds."""
    found = app.extensions.get("sandbox")
    if found is not None:
        return found
    return app.extensions["checkout"].sandbox.extensions["sandbox"]


def advance(app: Flask, seconds: float) -> int:
    """Move the sandbox's clock ``seconds`` forward: every timer falling due meanwhile runs, in
    order, in this thread, before this returns. Returns how many ran."""
    return sandbox_state(app).scheduler.advance(seconds)


def later(app: Flask, seconds: float, monkeypatch: Any) -> None:
    """``seconds`` later on both sides: the sandbox's clock moved forward (its timers falling due
    run) and the checkout's own (``checkout.journey.clock``: a quote's age, the time a page says
    is left before the upstream allows something again)."""
    from checkout.journey import clock

    advance(app, seconds)
    before = clock.now
    monkeypatch.setattr(clock, "now", lambda: before() + seconds)


def as_time_passes(app_or_scheduler: Any, condition: Callable[[], Any], step: float = 60,
                   timeout: float = 15.0) -> Any:
    """Until ``condition()`` holds (its value returned), the sandbox's clock moved ``step``
    seconds on whenever one of its timers is pending: an order's next status, a webhook's retry
    (set by the sender's thread once an attempt has failed). Never while nothing is pending, so
    an attempt on its way keeps its own times."""
    scheduler = app_or_scheduler if hasattr(app_or_scheduler, "advance") \
        else sandbox_state(app_or_scheduler).scheduler

    def holds() -> Any:
        value = condition()
        if not value and scheduler.pending_count():
            scheduler.advance(step)
        return value

    return wait_for(holds, timeout)


def delivered(sender: Any, delivery: Any, timeout: float = 5.0) -> bool:
    """True once a webhook delivery of the sandbox's ``sender`` has ended, each retry's wait
    passed on its manual clock as soon as the attempt before it had set it."""
    from checkout.sandbox.webhooks import retry_waits

    return as_time_passes(sender.scheduler, lambda: delivery.done, max(retry_waits(10)), timeout)
