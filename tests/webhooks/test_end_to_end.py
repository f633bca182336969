"""End to end over real HTTP on loopback: the sandbox's own webhook sender (spec 6.4 retries)
delivering to a live checkout server."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from checkout import order_status
from checkout.sandbox.clock import ManualClock, Scheduler
from checkout.sandbox.webhooks import WebhookSender
from checkout.webhooks.admin import recent_events
from checkout.webhooks.dispatcher import process_pending

from .. import postgres
from ..conftest import make_app
from ..support.live_server import live_server
from ..support.sandbox_clock import as_time_passes, delivered
from ..support.waiting import wait_for
from .helpers import Recorder, history


@pytest.mark.postgres
def test_sender_retries_through_a_database_outage_and_nothing_is_lost(webhook_config):
    cluster = postgres.Cluster()
    cluster.start()
    webhook_config["CHECKOUT_DATABASE_URL"] = cluster.url
    app = make_app(dict(webhook_config))
    recorder = Recorder(app)
    # The sender's waits of 1, 2, 4 ... seconds pass when the test moves its clock.
    scheduler = Scheduler(ManualClock())
    sender = WebhookSender(app.config["CHECKOUT_WEBHOOK_SECRET"], scheduler=scheduler,
                           allow_loopback=True)
    try:
        with live_server(app) as base:
            url = f"{base}/checkout/webhooks"
            cluster.stop()
            delivery = sender.send(url, history("ord_e2e", ["deposit_awaiting"])[0])
            as_time_passes(scheduler, lambda: len(delivery.attempts) >= 2, step=256)
            cluster.start()
            assert delivered(sender, delivery, 30) and delivery.state == "succeeded"
            statuses = [attempt.status for attempt in delivery.attempts]
            assert statuses[-1] == 200 and set(statuses[:-1]) == {503}
            # The upstream redelivers by hand: a duplicate, acknowledged, changing nothing.
            again = sender.redeliver(delivery.id)
            assert delivered(sender, again, 10) and again.state == "succeeded"
            assert '"duplicate":true' in again.attempts[-1].response_excerpt.replace(" ", "")
        process_pending(app)
        assert recorder.statuses() == [("ord_e2e", "deposit_awaiting")]
        assert len(recorder.of("webhook_received")) == 2
    finally:
        sender.close()
        scheduler.shutdown()
        recorder.disconnect()
        app.extensions["checkout"].close()
        cluster.remove()


class FailFirstWebhook:
    """WSGI middleware: the first webhook POST gets a 503, as a crashed worker would give."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.failed = 0

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        if environ["PATH_INFO"].startswith("/checkout/webhooks") and not self.failed:
            self.failed += 1
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"try again"]
        return self.app(environ, start_response)


def test_sandbox_orders_reach_the_merchant_exactly_once(webhook_config):
    """Real sandbox orders: its webhooks, retries, the background dispatcher, the full-order
    fetch, and the status page reading what webhooks keep."""
    webhook_config.update(CHECKOUT_WEBHOOK_BACKGROUND=True, CHECKOUT_WEBHOOK_FETCH_ORDERS=True,
                          CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2)
    app = make_app(dict(webhook_config))
    recorder = Recorder(app)
    wsgi = FailFirstWebhook(app.wsgi_app)
    app.wsgi_app = wsgi
    state = app.extensions["checkout"]
    sandbox = state.sandbox.extensions["sandbox"]
    try:
        with live_server(app) as base:
            sandbox.webhook_url = f"{base}/checkout/webhooks"
            quote = state.upstream.onramp_best_offer(
                network="CELO", asset="USDC", currency="local", amount=5000,
                country_iso_code="NG", payment_channel="bank")
            order = state.upstream.onramp_create_order(
                quote_id=quote.quote_id, network="CELO", asset="USDC", amount=5000,
                currency="local", email="ada@example.com", user_ip="203.0.113.7",
                address="0x52908400098527886E0F7030069857D2E4169EE7", order_params="cart-7")
            order_id = order.raw["orderId"]
            state.upstream.onramp_confirm_order(order_id=order_id)
            as_time_passes(app, lambda: ("payout_successful" in
                                         [s for o, s in recorder.statuses() if o == order_id]),
                           timeout=30)
            assert sandbox.webhooks.drain(10)
            wait_for(lambda: (order_status.get(state.engine, order_id).full_order or {})
                     .get("status") == "complete")
        assert wsgi.failed == 1                                 # one attempt was refused ...
        lifecycle = ["deposit_awaiting", "deposit_validating", "deposit_successful",
                     "payout_pending", "payout_successful"]
        events = sorted((e for e in recent_events(app) if e.order_id == order_id),
                        key=lambda e: e.id)
        stored_events = {(e.status, e.state) for e in events}
        assert stored_events == {(s, "processed") for s in lifecycle}   # ... and none was lost
        # Events are processed in the order they were received. The refused delivery came back
        # later, and the sender's threads may deliver two close statuses (deposit_successful and
        # payout_pending are 10 ms apart here) either way round: a status received after a newer
        # one is stored but signals nothing. Every other status signals, in order, exactly once.
        owed, newest = [], None
        for event in events:
            if newest is None or event.updated_at > newest:
                owed.append(event.status)
                newest = event.updated_at
        statuses = [s for o, s in recorder.statuses() if o == order_id]
        assert statuses == owed
        assert statuses == [s for s in lifecycle if s in statuses]
        assert statuses[-1] == "payout_successful"
        calls = recorder.of("order_status_changed")
        assert {c["order_params"] for c in calls} == {"cart-7"}
        assert {c["flow"] for c in calls} == {"onramp"}
        stored = order_status.current(app, order_id, "onramp")
        assert stored.status == "payout_successful" and stored.hash
        assert stored.full_order["status"] == "complete"
    finally:
        app.extensions["checkout"].dispatcher.stop()
        recorder.disconnect()
