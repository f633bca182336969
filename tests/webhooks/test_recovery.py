"""Work left behind by a process that died is done by another: the start-up and periodic sweep."""
from __future__ import annotations

import gc
import time
from datetime import timedelta

from sqlalchemy import select, update

from checkout.webhooks.store import DISPATCHING, signal_log_table, utcnow

from ..conftest import make_app
from ..support.waiting import wait_for
from .conftest import Receiver
from .helpers import Recorder, history, signed_webhook


def test_events_stored_by_a_dead_process_are_processed_by_the_next_one(webhook_config):
    # Process A stores deliveries and dies before acting on them (its dispatcher never ran).
    first = make_app(dict(webhook_config))
    receiver = Receiver(first)
    for payload in history("ord_dead", ["deposit_awaiting", "deposit_successful"]):
        assert receiver.post(signed_webhook(payload)).status_code == 200
    # A signal that A had claimed when it died, long ago: its lease has run out.
    receiver.process()
    engine = first.extensions["checkout"].engine
    with engine.begin() as conn:
        conn.execute(update(signal_log_table)
                     .where(signal_log_table.c.status == "deposit_successful")
                     .values(state=DISPATCHING, claimed_at=utcnow() - timedelta(hours=1)))
    receiver.post(signed_webhook(history("ord_dead2", ["deposit_awaiting"])[0]))

    # Process B starts; its first request of any kind starts its dispatcher, which sweeps.
    webhook_config.update(CHECKOUT_WEBHOOK_BACKGROUND=True, CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.1)
    second = make_app(dict(webhook_config))
    recorder = Recorder(second)
    try:
        second.test_client().get("/checkout/healthz")

        def states() -> set[str]:
            with second.extensions["checkout"].engine.connect() as conn:
                return set(conn.execute(select(signal_log_table.c.state)).scalars())

        # The dispatcher marks each signal dispatched once its receivers returned: wait for both.
        wait_for(lambda: len(recorder.of("order_status_changed")) == 2
                  and states() == {"dispatched"})
        assert recorder.statuses() == [("ord_dead", "deposit_successful"),
                                       ("ord_dead2", "deposit_awaiting")]
        assert states() == {"dispatched"}
    finally:
        second.extensions["checkout"].dispatcher.stop()
        recorder.disconnect()


def test_a_thrown_away_app_ends_its_dispatcher(webhook_config):
    # A sweep interval far longer than the wait below: collecting the app must wake the thread.
    webhook_config.update(CHECKOUT_WEBHOOK_BACKGROUND=True, CHECKOUT_WEBHOOK_SWEEP_INTERVAL=600)
    app = make_app(dict(webhook_config))
    dispatcher = app.extensions["checkout"].dispatcher
    assert dispatcher.ensure_running()
    thread = dispatcher._thread.value
    del app
    # A Flask app sits in reference cycles: the cyclic collector frees it, but not while the
    # thread is in a round (it holds the app then). After a long suite one collection takes
    # about a second with the GIL held, so each one is followed by time for a round to end.
    deadline = time.monotonic() + 30
    while thread.is_alive() and time.monotonic() < deadline:
        gc.collect()
        thread.join(0.5)
    assert not thread.is_alive()
