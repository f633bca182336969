"""Between batches, the dispatcher gives way to deliveries being stored: it waits for a pause in
them (GIVE_WAY_QUIET), for GIVE_WAY_MAX at most, and not at all when none are coming."""
from __future__ import annotations

import gc
import threading
import time

import pytest

from checkout.webhooks import background
from checkout.webhooks.background import Dispatcher
from checkout.webhooks.dispatcher import sweep

from ..conftest import make_app
from ..forking import in_forked_child


@pytest.fixture
def dispatcher(webhook_config, monkeypatch):
    monkeypatch.setattr(background, "GIVE_WAY_MAX", 0.6)
    monkeypatch.setattr(background, "GIVE_WAY_QUIET", 0.05)
    webhook_config["CHECKOUT_WEBHOOK_BACKGROUND"] = False
    # Kept alive for the whole test: the dispatcher holds its app weakly, and stops (gives way no
    # more) once a collection finds the app gone.
    app = make_app(dict(webhook_config))
    yield Dispatcher(app, sweep)
    del app


def timed(give_way, started: float | None = None) -> float:
    """Seconds from ``started`` (by default, now) until ``give_way()`` returns."""
    # Without the cyclic collector meanwhile: late in a long run one collection holds the GIL for
    # about a second, which these bounds (tenths of a second) would count as the dispatcher's.
    gc.disable()
    try:
        started = time.monotonic() if started is None else started
        give_way()
        return time.monotonic() - started
    finally:
        gc.enable()


def test_no_delivery_coming_no_wait(dispatcher):
    assert timed(dispatcher._give_way) < 0.05


def test_it_waits_for_a_pause_after_the_last_delivery(dispatcher):
    with dispatcher.acknowledging():
        pass
    # Just stored: it waits until GIVE_WAY_QUIET has passed since, and no longer.
    assert 0.03 <= timed(dispatcher._give_way) < 0.3


def test_a_delivery_being_stored_holds_it_back_until_done(dispatcher):
    storing = dispatcher.acknowledging()
    storing.__enter__()
    # Counted from the timer's start, when the store's 0.2 s begin: a busy machine may begin the
    # wait itself a little later (a full run measured 0.238 s from there).
    started = time.monotonic()
    threading.Timer(0.2, storing.__exit__, (None, None, None)).start()
    waited = timed(dispatcher._give_way, started)
    assert 0.2 + 0.04 <= waited < 0.55         # the store, then the quiet time after it


def test_deliveries_that_never_pause_let_it_through_after_the_bound(dispatcher):
    stop = threading.Event()

    def keep_storing() -> None:
        while not stop.is_set():
            with dispatcher.acknowledging():
                time.sleep(0.005)

    sender = threading.Thread(target=keep_storing)
    sender.start()
    try:
        assert 0.55 <= timed(dispatcher._give_way) < 1.0
    finally:
        stop.set()
        sender.join()


def test_a_process_forked_while_a_delivery_was_being_stored_does_not_wait_for_it(dispatcher):
    """The parent's store in progress is not the child's: the child's dispatcher must not give
    way to it (for GIVE_WAY_MAX between every batch, for ever)."""
    storing = dispatcher.acknowledging()
    storing.__enter__()         # a parent's thread is storing a delivery at the fork
    try:
        # Only the quiet time after the parent's last store, as if none were in progress.
        assert in_forked_child(timed, dispatcher._give_way) < 0.3
    finally:
        storing.__exit__(None, None, None)
