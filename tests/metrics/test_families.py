"""Each family of metrics moves when its event happens, and no label ever names a session, an
order, a person, an amount or a secret."""
from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from checkout import Checkout
from checkout.errors import OrderNotAvailable, UpstreamUnavailable
from checkout.upstream import UpstreamClient
from checkout.webhooks.dispatcher import process_pending

from ..conftest import make_app
from ..support.waiting import wait_for
from ..views.conftest import EVM_ADDRESS, Flow
from ..views.test_status import poll_until
from ..webhooks.helpers import T0, FakeUpstream, order_payload, signed_webhook, use_upstream
from .support import TOKEN, scrape

UPSTREAM = "checkout_upstream_request_duration_seconds_count"
WEBHOOKS = "checkout_webhook_delivery_duration_seconds_count"
OPENED = "checkout_sessions_opened_total"


@pytest.fixture
def config(config) -> dict:
    config.update(CHECKOUT_METRICS_TOKEN=TOKEN, CHECKOUT_METRICS_ORDERS_CACHE_SECONDS=0,
                  CHECKOUT_WEBHOOK_BACKGROUND=False, CHECKOUT_WEBHOOK_FETCH_ORDERS=False)
    return config


def test_upstream_calls_by_endpoint_template_status_and_time(app, client):
    upstream = app.extensions["checkout"].upstream
    upstream.onramp_assets()
    with pytest.raises(OrderNotAvailable):
        upstream.offramp_order("6b03bcea0b78e5d098eee536")
    seen = scrape(client)
    assert seen.value(UPSTREAM, method="GET", endpoint="/api/onramp/assets", status="200") == 1
    assert seen.value(UPSTREAM, endpoint="/api/offramp/order/{id}", status="404") == 1
    assert seen.value("checkout_upstream_request_duration_seconds_sum",
                      endpoint="/api/onramp/assets") > 0
    assert "6b03bcea0b78e5d098eee536" not in seen.text


def test_an_upstream_that_cannot_be_reached_is_counted_as_unreachable(app, client):
    counts = app.extensions["checkout"].metrics
    closed = UpstreamClient("http://127.0.0.1:9", client_id="x", retries=1,
                            on_call=counts.upstream_call)
    closed.transport.sleep = lambda seconds: None
    with pytest.raises(UpstreamUnavailable):
        closed.onramp_assets()
    assert scrape(client).value(UPSTREAM, endpoint="/api/onramp/assets",
                                status="unreachable") == 2          # each attempt


def test_sessions_opened_by_flow_and_start_and_a_token_presented_again_is_not_one(app, client):
    client.get("/checkout/onramp")
    client.get("/checkout/offramp")
    with app.test_request_context():
        launch = Checkout.launch_url("onramp", jti="jti-metrics-1")
    client.get(launch)
    client.get(launch)                          # the same session again
    seen = scrape(client)
    assert seen.value(OPENED, flow="onramp", start="unsigned") == 1
    assert seen.value(OPENED, flow="offramp", start="unsigned") == 1
    assert seen.value(OPENED, flow="onramp", start="launch") == 1


def test_webhook_deliveries_by_result_and_stored_orders_by_flow_and_status(app, client):
    receive = app.test_client()

    def post(delivery):
        return receive.post("/checkout/webhooks", data=delivery.body, headers=delivery.headers)

    first = signed_webhook(order_id="ord_metrics_1", status="deposit_awaiting")
    assert post(first).status_code == 200
    assert post(first).status_code == 200                           # a duplicate
    assert post(signed_webhook(order_id="ord_metrics_1", signature="0" * 64)).status_code == 401
    assert post(signed_webhook(body=b'{"event":"something-else"}')).status_code == 400
    assert post(signed_webhook(body=b" " * (256 * 1024 + 1))).status_code == 413
    process_pending(app)
    seen = scrape(client)
    assert seen.value(WEBHOOKS, result="accepted") == 1
    assert seen.value(WEBHOOKS, result="duplicate") == 1
    assert seen.value(WEBHOOKS, result="bad_signature") == 1
    assert seen.value(WEBHOOKS, result="invalid") == 1
    assert seen.value(WEBHOOKS, result="too_large") == 1
    assert seen.value("checkout_webhook_delivery_duration_seconds_sum") > 0
    assert seen.value("checkout_orders", flow="onramp", status="deposit_awaiting") == 1
    assert seen.value("checkout_order_status_changes_total", flow="onramp",
                      status="deposit_awaiting") == 1
    # The next status moves the order from one gauge to the other.
    later = order_payload("ord_metrics_1", "deposit_successful", updated_at=T0 + timedelta(minutes=5))
    assert post(signed_webhook(later)).status_code == 200
    process_pending(app)
    seen = scrape(client)
    assert seen.value("checkout_orders", flow="onramp", status="deposit_awaiting") == 0
    assert seen.value("checkout_orders", flow="onramp", status="deposit_successful") == 1
    assert seen.value("checkout_order_status_changes_total", flow="onramp") == 2


@pytest.mark.parametrize("status", ["spy@evil.example", "deposit_awaiting\u200b", "SWAP_EXPIRED"])
def test_a_status_nobody_knows_is_counted_as_other_and_never_becomes_a_label(app, client,
                                                                              status):
    # Signed (the sender holds the secret), but the status and type are whatever it wrote.
    receive = app.test_client()
    for n, (order_status, order_type) in enumerate([(status, "on_ramp"),
                                                    (status, "bob@evil.example"),
                                                    ("payout_pending", "on_ramp")]):
        delivery = signed_webhook(order_id=f"ord_other_{n}", status=order_status,
                                  order_type=order_type)
        assert receive.post("/checkout/webhooks", data=delivery.body,
                            headers=delivery.headers).status_code == 200
    process_pending(app)
    seen = scrape(client)
    assert status not in seen.text and "evil.example" not in seen.text
    assert seen.value("checkout_order_status_changes_total", flow="onramp", status="other") == 1
    assert seen.value("checkout_order_status_changes_total", flow="other", status="other") == 1
    assert seen.value("checkout_orders", flow="onramp", status="other") == 1
    assert seen.value("checkout_orders", flow="other", status="other") == 1
    assert seen.value("checkout_orders", flow="onramp", status="payout_pending") == 1
    assert seen.label_values("status") <= {"other", "payout_pending"}


def test_the_stored_orders_are_counted_at_most_once_per_cache_period(config):
    app = make_app({**config, "CHECKOUT_METRICS_ORDERS_CACHE_SECONDS": 3600})
    client = app.test_client()
    assert scrape(client).value("checkout_orders") == 0
    delivery = signed_webhook(order_id="ord_cached")
    app.test_client().post("/checkout/webhooks", data=delivery.body, headers=delivery.headers)
    process_pending(app)
    assert scrape(client).value("checkout_orders") == 0            # the count of an hour ago
    app.extensions["checkout"].metrics.orders.ttl = 0
    assert scrape(client).value("checkout_orders") == 1


def test_requests_refused_by_our_limits_by_limit_name(config):
    app = make_app({**config, "CHECKOUT_RATELIMITS": {"open_per_ip": "2/minute"}})
    client = app.test_client()
    answers = [client.get("/checkout/onramp").status_code for _ in range(4)]
    assert answers == [303, 303, 429, 429]
    seen = scrape(client)
    assert seen.value("checkout_ratelimited_requests_total", limit="open_per_ip") == 2
    assert seen.value("checkout_ratelimited_requests_total") == 2


def test_reconciler_checks_by_flow_and_result(app, client):
    state = app.extensions["checkout"]
    fake = FakeUpstream()
    use_upstream(app, fake)
    for order_id in ("ord_found", "ord_unknown"):
        state.sessions.attach_order(state.sessions.create("offramp").id, order_id)
    fake.orders["ord_found"] = {"id": "ord_found", "status": "transaction_confirmed",
                                "updatedAt": "2026-11-22T01:00:20.000Z"}
    done = state.reconciler.run(older_than=0)
    assert sorted(c.result for c in done.checks) == ["failed", "moved"]
    seen = scrape(client)
    assert seen.value("checkout_reconciler_checks_total", flow="offramp", result="moved") == 1
    assert seen.value("checkout_reconciler_checks_total", flow="offramp", result="failed") == 1


# -- a whole order, then one scrape: which label values there are -----------------------------------

ENDPOINT = re.compile(r"/api/[a-z/-]+(/\{id\})?")


def test_after_a_whole_order_no_label_names_the_session_order_person_or_secret(config):
    # The sandbox's webhooks reach the checkout in process (its dispatcher thread runs).
    app = make_app({**config, "CHECKOUT_WEBHOOK_BACKGROUND": True,
                    "CHECKOUT_WEBHOOK_SWEEP_INTERVAL": 0.05, "CHECKOUT_STATUS_MAX_AGE": 0})
    client = app.test_client()
    state = app.extensions["checkout"]
    try:
        flow = Flow(app, client)
        flow.start(email="ada.lovelace@example.com", address=EVM_ADDRESS,
                   orderParams="cart-7c1f-secret-ref", amount="5000", currency="local")
        flow.to_pay("manual")
        flow.follow(flow.post("/pay/confirm"))
        poll_until(flow, "payout_successful",
                   headers={"HX-Request": "true", "Sec-Fetch-Dest": "empty"})
        order_id = flow.session.order_id
        wait_for(lambda: scrape(client).value("checkout_order_status_changes_total",
                                              status="payout_successful") == 1)
        seen = scrape(client)
    finally:
        state.dispatcher.stop()
    assert seen.value("checkout_orders_created_total", flow="onramp") == 1
    assert seen.value(OPENED, flow="onramp", start="launch") == 1
    assert seen.value("checkout_orders", flow="onramp", status="payout_successful") == 1
    assert seen.value(WEBHOOKS, result="accepted") >= 1
    endpoints = seen.label_values("endpoint")
    assert {"/api/onramp/order/create", "/api/onramp/order"} <= endpoints
    assert all(ENDPOINT.fullmatch(e) for e in endpoints), endpoints
    secrets = {flow.session_id, order_id, "ada.lovelace", "example.com", EVM_ADDRESS.lower(),
               "cart-7c1f", "5000", TOKEN, flow.csrf, app.config["CHECKOUT_LAUNCH_SECRET"],
               app.config["CHECKOUT_WEBHOOK_SECRET"], app.config["CHECKOUT_CLIENT_ID"]}
    values = [v.lower() for v in seen.all_label_values()]
    leaks = {s for s in secrets for v in values if s and s.lower() in v}
    assert leaks == set(), leaks
    assert json.dumps(sorted(seen.label_values("flow"))) == '["onramp"]'


def test_a_metric_that_cannot_be_written_never_fails_what_it_counts(app, client, caplog):
    # A multiprocess directory removed by a tmp cleaner, a full disk: the upstream call already
    # answered (it may have created an order) and the delivery is already stored.
    families = app.extensions["checkout"].metrics.families

    def broken(*labels: str):
        raise OSError("No space left on device")

    for family in (families.upstream, families.webhooks):
        family.labels = broken
    assert app.extensions["checkout"].upstream.onramp_assets()
    delivery = signed_webhook(order_id="ord_metrics_full_disk", status="deposit_awaiting")
    answer = client.post("/checkout/webhooks", data=delivery.body, headers=delivery.headers)
    assert answer.status_code == 200 and answer.get_json()["received"] is True
    warnings = [r for r in caplog.records if "could not be counted" in r.getMessage()]
    assert {r.levelname for r in warnings} == {"WARNING"}
    assert len(warnings) == 2                   # once per counting point, then quietly
