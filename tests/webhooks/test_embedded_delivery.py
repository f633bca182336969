"""A bare ``Checkout(app)`` on the embedded sandbox gets the sandbox's webhooks, in process.

No webhook URL is configured and the host's address is not reachable from itself (``shop.test``):
the signed deliveries still reach the checkout's own receiver, through its signature check and
storage, so a status page shows what happened without asking the upstream.
"""
from __future__ import annotations

from checkout import order_status

from ..conftest import make_app
from ..support.sandbox_clock import as_time_passes
from .helpers import Recorder


def test_the_embedded_sandboxs_webhooks_reach_the_checkout_in_process(config):
    config.update(CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2, CHECKOUT_STATUS_MAX_AGE=3600)
    app = make_app(dict(config))
    recorder = Recorder(app)
    state = app.extensions["checkout"]
    sandbox = state.sandbox.extensions["sandbox"]
    try:
        quote = state.upstream.onramp_best_offer(
            network="CELO", asset="USDC", currency="local", amount=5000, country_iso_code="NG",
            payment_channel="bank")
        order = state.upstream.onramp_create_order(
            quote_id=quote.quote_id, network="CELO", asset="USDC", amount=5000, currency="local",
            email="ada@example.com", user_ip="203.0.113.7",
            address="0x52908400098527886E0F7030069857D2E4169EE7", order_params="cart-8")
        state.upstream.onramp_confirm_order(order_id=order.id)
        as_time_passes(app, lambda: ("payout_successful" in
                                     [s for o, s in recorder.statuses() if o == order.id]))
        stored = order_status.get(state.engine, order.id)
        assert stored.status == "payout_successful" and stored.source == "webhook"
        deliveries = sandbox.webhooks.deliveries(order.id)
        assert deliveries and all(d.url == "http://shop.test/checkout/webhooks" for d in deliveries)
        assert all(a.address == "in-process" for d in deliveries for a in d.attempts)
    finally:
        recorder.disconnect()
        state.dispatcher.stop()
