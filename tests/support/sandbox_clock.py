"""The sandbox's manual clock, moved forward by a test: every test's sandbox runs at one pace (the
real one, ``SANDBOX_CLOCK = "manual"``), and a test says "thirty seconds later" where it needs the
agent's confirmation, a payout or an expiry, rather than waiting for them or racing them."""
from __future__ import annotations

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


def delivered(sender: Any, delivery: Any, timeout: float = 5.0) -> bool:
    """True once a webhook delivery of the sandbox's ``sender`` has ended, every retry's wait
    passed on its manual clock as soon as the attempt before it had set it (on the sender's
    thread): the clock moves only while a retry is what is pending, never during an attempt,
    whose times stay its own."""
    from checkout.sandbox.webhooks import retry_waits

    scheduler = sender.scheduler

    def ended() -> bool:
        if delivery.done:
            return True
        if scheduler.pending_count():
            scheduler.advance(max(retry_waits(10)))
        return False

    return wait_for(ended, timeout)
