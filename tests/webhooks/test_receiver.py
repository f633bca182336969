"""The receiver's answers: 400, 413, no redirects, duplicates, newer-only moves, signals."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from flask import Flask, redirect, request
from sqlalchemy import select

from checkout.webhooks.store import events_table, orders_table, signal_log_table

from ..conftest import make_app
from .conftest import Receiver
from .helpers import T0, history, order_payload, signed_webhook


def _stored(app, table, *where):
    with app.extensions["checkout"].engine.connect() as conn:
        return conn.execute(select(table).where(*where).order_by(*table.primary_key)).all()


def test_signed_body_that_is_not_an_event_is_kept_and_refused_with_400(app, receiver, recorder):
    response = receiver.post(signed_webhook(body=b"<xml>not json</xml>"))
    assert response.status_code == 400
    assert "JSON" in response.json["error"]
    [event] = _stored(app, events_table)
    assert event.state == "invalid" and event.body == b"<xml>not json</xml>"
    receiver.process()
    assert recorder.calls == []


@pytest.mark.parametrize("payload", [
    [1, 2, 3],
    {"event": "order-status-change"},
    {"event": "order-status-change", "data": {"order": {"_id": "o", "status": "payout_pending"}}},
    {"event": "order-status-change",
     "data": {"order": {"_id": "o", "status": "payout_pending", "updatedAt": "yesterday"}}},
    {"event": "", "data": {}},
])
def test_signed_json_that_is_not_a_spec_event_is_400(receiver, payload):
    assert receiver.post(signed_webhook(payload)).status_code == 400
    assert receiver.count_events() == 1


def test_oversized_body_is_413_and_not_stored(app, receiver):
    app.config["CHECKOUT_WEBHOOK_MAX_BYTES"] = 1024
    big = order_payload(padding="x" * 2048)
    assert receiver.post(signed_webhook(big)).status_code == 413
    assert receiver.count_events() == 0


def test_trailing_slash_is_the_same_receiver_not_a_redirect(receiver):
    response = receiver.post(signed_webhook(), path="/checkout/webhooks/")
    assert response.status_code == 200
    assert receiver.client.get("/checkout/webhooks").status_code in (404, 405)


def test_no_redirect_of_its_own_even_on_a_host_with_lax_slashes_and_a_catch_all(webhook_config):
    """A host whose rules would redirect an unknown path, and which forces https the way the
    README shows: letting the receiver's endpoint through."""
    host = Flask("host_site", instance_path=webhook_config.pop("_instance_path"))
    host.config.update(webhook_config)
    host.url_map.strict_slashes = False

    @host.before_request
    def force_https():
        if request.endpoint != "checkout.webhooks" and request.scheme != "https":
            return redirect(request.url.replace("http://", "https://", 1), code=301)
        return None

    @host.route("/<path:anything>", methods=["GET", "POST"])
    def catch_all(anything):
        return redirect("/")

    from checkout import Checkout

    Checkout(host)
    client = host.test_client()
    delivery = signed_webhook()
    for path in ("/checkout/webhooks", "/checkout/webhooks/"):
        response = client.post(path, data=delivery.body, headers=delivery.headers,
                               base_url="http://shop.test")
        assert response.status_code == 200, (path, response.status_code)
    bad = client.post("/checkout/webhooks", data=b"{}", headers={"x-signature": "0" * 64},
                      base_url="http://shop.test")
    assert bad.status_code == 401
    # Elsewhere the host keeps its own rules.
    assert client.post("/shop", base_url="http://shop.test").status_code == 301


def test_headers_that_matter_are_stored_and_never_the_secret(app, receiver):
    delivery = signed_webhook()
    receiver.post(delivery)
    [event] = _stored(app, events_table)
    assert event.headers["x-signature"] == delivery.headers["x-signature"]
    assert event.headers["content-type"] == "application/json"
    assert event.headers["user-agent"] == "upstream-webhooks/1"
    assert event.headers["content-length"] == str(len(delivery.body))
    secret = app.config["CHECKOUT_WEBHOOK_SECRET"]
    assert secret not in json.dumps(event.headers) and secret.encode() not in event.body


def test_duplicate_is_recorded_acknowledged_and_changes_nothing(app, receiver, recorder):
    delivery = signed_webhook()
    first, second = receiver.post(delivery), receiver.post(delivery)
    assert first.json["duplicate"] is False
    assert second.status_code == 200 and second.json["duplicate"] is True
    assert second.json["id"] == first.json["id"]
    receiver.process()
    third = receiver.post(delivery)
    receiver.process()
    assert third.json["duplicate"] is True
    [event] = _stored(app, events_table)
    assert event.duplicates == 2 and event.attempts == 1
    assert len(recorder.of("webhook_received")) == 3
    assert recorder.statuses() == [("ord_1", "deposit_awaiting")]


def test_status_moves_only_to_a_newer_updated_at(app, receiver, recorder):
    awaiting, validating, successful, payout = history(
        "ord_1", ["deposit_awaiting", "deposit_validating", "deposit_successful",
                  "payout_successful"])
    for payload in (awaiting, successful, validating):      # validating arrives late
        assert receiver.post(signed_webhook(payload)).status_code == 200
    receiver.process()
    [order] = _stored(app, orders_table)
    assert order.status == "deposit_successful"
    assert order.previous_status == "deposit_awaiting"
    assert recorder.statuses() == [("ord_1", "deposit_awaiting"), ("ord_1", "deposit_successful")]
    outcomes = [e.outcome for e in _stored(app, events_table)]
    assert outcomes == ["applied", "applied", "stale"]
    # Statuses can be skipped: straight to payout_successful.
    receiver.post(signed_webhook(payout))
    receiver.process()
    assert _stored(app, orders_table)[0].status == "payout_successful"


def test_canceled_and_expired_are_not_final(app, receiver, recorder):
    statuses = ["deposit_awaiting", "deposit_canceled", "deposit_expired", "deposit_successful",
                "payout_successful"]
    for payload in history("ord_1", statuses):
        receiver.post(signed_webhook(payload))
    receiver.process()
    assert _stored(app, orders_table)[0].status == "payout_successful"
    assert [s for _, s in recorder.statuses()] == statuses


def test_equal_updated_at_does_not_move_and_a_revisited_status_does_not_signal(
        app, receiver, recorder):
    t = T0 + timedelta(seconds=5)
    receiver.post(signed_webhook(order_payload("o", "payout_failed", updated_at=t)))
    receiver.post(signed_webhook(order_payload("o", "payout_pending", updated_at=t)))
    receiver.process()
    assert _stored(app, orders_table)[0].status == "payout_failed"
    # The same status again, later (a retried payout failing twice): stored, no second signal.
    receiver.post(signed_webhook(order_payload("o", "payout_failed",
                                               updated_at=t + timedelta(seconds=1))))
    receiver.process()
    assert recorder.statuses() == [("o", "payout_failed")]
    assert [e.outcome for e in _stored(app, events_table)] == ["applied", "stale", "unchanged"]


def test_signal_arguments(app, receiver, recorder):
    payload = order_payload("ord_9", "deposit_awaiting", order_type="off_ramp",
                            order_params="cart-42")
    receiver.post(signed_webhook(payload))
    receiver.process()
    [call] = recorder.of("order_status_changed")
    assert call == {"order_id": "ord_9", "status": "deposit_awaiting", "previous_status": None,
                    "flow": "offramp", "order_params": "cart-42", "event": payload}
    assert recorder.of("webhook_received") == [{"event": payload}]


def test_kyc_and_auth_events_reach_their_signals_once(receiver, recorder):
    kyc = {"event": "kyc", "data": {"kycId": "k1", "kycStatus": "approved", "kycType": "basic",
                                    "userId": "u", "userEmail": "a@b.c",
                                    "userCountryIsoCode": "NG", "kycDocument": "BVN",
                                    "date": "2026-11-22T01:00:00.000Z"}}
    auth = {"event": "auth", "data": {"authOperation": "login", "authStatus": "success",
                                      "userEmail": "a@b.c", "date": "2026-11-22T01:00:00.000Z",
                                      "userCountryIsoCode": "NG"}}
    unknown = {"event": "settlement-created", "data": {"id": "s1"}}
    for payload in (kyc, auth, kyc, unknown):
        assert receiver.post(signed_webhook(payload)).status_code == 200
    receiver.process()
    assert recorder.of("kyc_event") == [{"event": kyc}]
    assert recorder.of("auth_event") == [{"event": auth}]
    assert len(recorder.of("webhook_received")) == 4
    assert recorder.of("order_status_changed") == []


def test_the_ack_does_not_wait_for_merchant_code(app, receiver, recorder):
    """Signals are sent by the dispatcher, never inside the request."""
    assert receiver.post(signed_webhook()).status_code == 200
    assert recorder.calls == []
    receiver.process()
    assert len(recorder.calls) == 2


def test_a_failing_receiver_keeps_the_signal_for_replay(app, receiver, recorder):
    recorder.fail_next_status = 1
    receiver.post(signed_webhook())
    receiver.process()
    assert recorder.statuses() == []
    [owed] = _stored(app, signal_log_table)
    assert owed.state == "failed" and "merchant database down" in owed.error
    receiver.process()                          # no automatic second call ...
    assert recorder.statuses() == []
    result = app.test_cli_runner().invoke(args=["checkout", "webhooks", "replay", "1"])
    assert result.exit_code == 0, result.output
    assert recorder.statuses() == [("ord_1", "deposit_awaiting")]   # ... but replay sends it
    assert _stored(app, signal_log_table)[0].state == "dispatched"
    again = app.test_cli_runner().invoke(args=["checkout", "webhooks", "replay", "1"])
    assert again.exit_code == 0
    assert recorder.statuses() == [("ord_1", "deposit_awaiting")]   # idempotent


def test_background_dispatcher_sends_signals_soon_after_the_ack(webhook_config):
    webhook_config.update(CHECKOUT_WEBHOOK_BACKGROUND=True, CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2)
    app = make_app(dict(webhook_config))
    from ..support.waiting import wait_for
    from .helpers import Recorder

    recorder = Recorder(app)
    try:
        assert Receiver(app).post(signed_webhook()).status_code == 200
        wait_for(lambda: recorder.of("order_status_changed"), 5)
        assert recorder.statuses() == [("ord_1", "deposit_awaiting")]
    finally:
        app.extensions["checkout"].dispatcher.stop()
        recorder.disconnect()


def test_oversized_body_without_content_length_is_413(app, receiver):
    """A chunked body has no Content-Length: the read itself stops at the cap."""
    import io

    app.config["CHECKOUT_WEBHOOK_MAX_BYTES"] = 1024
    big = signed_webhook(order_payload(padding="x" * 4096))
    response = receiver.client.post(
        "/checkout/webhooks", input_stream=io.BytesIO(big.body),
        headers={**big.headers, "Transfer-Encoding": "chunked"}, base_url="https://shop.test",
        environ_overrides={"wsgi.input_terminated": True})    # as servers set for chunked bodies
    assert response.status_code == 413
    assert receiver.count_events() == 0


def _host_with_hooks(webhook_config) -> tuple[Flask, list[str]]:
    """A host site whose every request hook and signal writes down that it ran."""
    from flask import request_started

    from checkout import Checkout

    host = Flask("host_site", instance_path=webhook_config.pop("_instance_path"))
    host.config.update(webhook_config)
    ran: list[str] = []
    host.before_request(lambda: ran.append("before_request"))
    host.after_request(lambda response: ran.append("after_request") or response)
    host.teardown_request(lambda exc: ran.append("teardown_request"))
    request_started.connect(lambda sender, **extra: ran.append("request_started"), host,
                            weak=False)
    host.get("/shop")(lambda: "shop")
    Checkout(host)
    return host, ran


def test_a_delivery_is_a_request_like_any_other_for_the_hosts_hooks(webhook_config):
    """The receiver is a view of the blueprint: the host's hooks and Flask's signals run for a
    delivery, and nothing of the checkout's runs before them."""
    host, ran = _host_with_hooks(webhook_config)
    client = host.test_client()
    delivery = signed_webhook()
    for path in ("/checkout/webhooks", "/checkout/webhooks/"):
        ran.clear()
        response = client.post(path, data=delivery.body, headers={
            **delivery.headers, "X-Request-ID": "proxy-42"}, base_url="https://shop.test")
        assert response.status_code == 200
        assert response.json == {"received": True, "duplicate": path.endswith("/"), "id": 1}
        assert response.headers["X-Request-ID"] == "proxy-42"
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["Content-Type"] == "application/json"
        assert ran == ["request_started", "before_request", "after_request", "teardown_request"]
    assert client.get("/checkout/webhooks").status_code == 405
    assert host.wsgi_app.__func__ is Flask.wsgi_app        # not wrapped by the checkout
    # No app-wide hook of the checkout's runs before the host's own.
    assert [hook.__module__ for hook in host.before_request_funcs.get(None, [])] == [__name__]


def test_middleware_the_host_wrapped_before_the_checkout_sees_each_delivery(webhook_config,
                                                                            caplog):
    """ProxyFix wrapped in any order: the log line of a refused delivery names the sender."""
    from werkzeug.middleware.proxy_fix import ProxyFix

    from checkout import Checkout

    host = Flask("host_site", instance_path=webhook_config.pop("_instance_path"))
    host.config.update(webhook_config)
    host.wsgi_app = ProxyFix(host.wsgi_app, x_for=1)    # type: ignore[method-assign]
    Checkout(host)
    response = host.test_client().post(
        "/checkout/webhooks", data=b"{}", headers={"x-signature": "0" * 64,
                                                   "X-Forwarded-For": "203.0.113.7"},
        environ_base={"REMOTE_ADDR": "10.0.0.2"})
    assert response.status_code == 401
    assert "webhook refused from 203.0.113.7" in caplog.text


def test_a_failure_of_the_receiver_is_a_500_to_retry_with_nothing_stored(app, receiver,
                                                                       monkeypatch, caplog):
    from checkout.views import webhooks as receiver_view

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(receiver_view, "record_delivery", broken)
    response = receiver.post(signed_webhook())
    assert response.status_code == 500
    assert response.json == {"error": "internal error, retry later"}
    assert response.headers["X-Request-ID"]
    assert "webhook receiver failed" in caplog.text and "a bug" in caplog.text
    assert receiver.count_events() == 0
