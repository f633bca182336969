"""Signature cases of issue 4 against the real receiver: only a correct signature gets stored."""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from checkout.errors import WebhookSignatureError
from checkout.signature import sign
from checkout.webhooks.events import js_stringify, verify_delivery

from .helpers import order_payload, signed_webhook


def _flip_one_byte(body: bytes) -> bytes:
    i = body.index(b"deposit_awaiting")
    return body[:i] + bytes([body[i] ^ 0x01]) + body[i + 1:]


def test_valid_signature_is_stored_and_acknowledged(receiver, recorder):
    response = receiver.post(signed_webhook())
    assert response.status_code == 200
    assert response.json == {"received": True, "duplicate": False, "id": 1}
    assert receiver.count_events() == 1


def test_uppercase_hex_signature_is_accepted(receiver):
    delivery = signed_webhook()
    delivery.headers["x-signature"] = delivery.headers["x-signature"].upper()
    assert receiver.post(delivery).status_code == 200


def _tampered(kind: str):
    good = signed_webhook()
    if kind == "flipped byte":
        return signed_webhook(body=_flip_one_byte(good.body), signature=good.headers["x-signature"])
    if kind == "re-serialised JSON":
        same_json = json.dumps(json.loads(good.body), indent=2).encode()
        assert json.loads(same_json) == json.loads(good.body)
        return signed_webhook(body=same_json, signature=good.headers["x-signature"])
    if kind == "wrong secret":
        return signed_webhook(secret="not-the-webhook-secret")
    if kind == "missing header":
        return signed_webhook(drop_signature=True)
    if kind == "empty header":
        return signed_webhook(signature="")
    if kind == "empty body":
        return signed_webhook(body=b"")
    if kind == "malformed header":
        return signed_webhook(signature="sha256=" + good.headers["x-signature"])
    if kind == "truncated header":
        return signed_webhook(signature=good.headers["x-signature"][:-1])
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["flipped byte", "re-serialised JSON", "wrong secret",
                                  "missing header", "empty header", "empty body",
                                  "malformed header", "truncated header"])
def test_bad_signature_is_refused_and_nothing_is_stored(receiver, recorder, kind):
    response = receiver.post(_tampered(kind))
    assert response.status_code == 401
    assert response.json["error"]
    assert receiver.count_events() == 0
    receiver.process()
    assert recorder.calls == []


def test_refusal_never_echoes_the_secret(app, receiver):
    response = receiver.post(signed_webhook(secret="wrong"))
    secret = app.config["CHECKOUT_WEBHOOK_SECRET"]
    assert secret not in response.get_data(as_text=True)


# -- the opt-in "data" mode: JSON.stringify(body.data), exactly -----------------------------------

@pytest.mark.parametrize("value, expected", [
    (Decimal("1.0"), "1"), (Decimal("-0"), "0"), (Decimal("0.1"), "0.1"),
    (Decimal("1e21"), "1e+21"), (Decimal("1e20"), "100000000000000000000"),
    (Decimal("0.000001"), "0.000001"), (Decimal("1.5e-7"), "1.5e-7"),
    (Decimal("12345678901234567890"), "12345678901234567000"),
    (Decimal("1499.6700000000001"), "1499.67"), (Decimal("2.5e-5"), "0.000025"),
])
def test_js_stringify_numbers_as_javascript_prints_them(value, expected):
    assert js_stringify(value) == expected


def test_js_stringify_matches_javascript_on_recorded_vectors():
    """401 JSON texts (numbers of every magnitude, index-like keys, duplicate keys, escapes, lone
    surrogates) and what node's JSON.stringify(JSON.parse(text)) printed for each."""
    recorded = json.loads((Path(__file__).parent / "data" / "js_stringify_vectors.json")
                          .read_text())
    mismatches = [(text, expected) for text, expected in recorded["vectors"]
                  if js_stringify(json.loads(text, parse_int=Decimal, parse_float=Decimal))
                  != expected]
    assert mismatches == []
    assert len(recorded["vectors"]) > 400


def test_js_stringify_orders_index_keys_first_and_keeps_text():
    data = json.loads('{"b":1,"2":"x","10":[true,null],"a":"é\\n\\u2028","1":{}}',
                      parse_int=Decimal, parse_float=Decimal)
    assert js_stringify(data) == '{"1":{},"2":"x","10":[true,null],"b":1,"a":"é\\n\u2028"}'


def test_data_mode_verifies_the_signature_of_data_only(app, receiver):
    app.config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"] = "data"
    payload = order_payload(amount=1.0)      # the sender's JSON.stringify prints 1, not 1.0
    body = json.dumps(payload, indent=1).encode()
    data_signature = sign(js_stringify(json.loads(body, parse_float=Decimal,
                                                  parse_int=Decimal)["data"]).encode(),
                          app.config["CHECKOUT_WEBHOOK_SECRET"])
    assert receiver.post(signed_webhook(body=body, signature=data_signature)).status_code == 200
    # The spec's whole-body signature is not what this mode checks.
    assert receiver.post(signed_webhook(body=body)).status_code == 401


def test_unknown_signature_mode_fails_at_start_up(webhook_config):
    from checkout.errors import ConfigurationError

    from ..conftest import make_app

    webhook_config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"] = "json"
    with pytest.raises(ConfigurationError, match="CHECKOUT_WEBHOOK_SIGNATURE_MODE"):
        make_app(dict(webhook_config))


def test_unknown_signature_mode_fails_loudly():
    with pytest.raises(ValueError):
        verify_delivery(b"{}", "0" * 64, "s", mode="header")
    with pytest.raises(WebhookSignatureError):
        verify_delivery(b"not json", "0" * 64, "s", mode="data")


# -- data mode: the framing outside data is not signed, so it must leave nothing to choose --------

def _data_mode_delivery(app, **framing):
    data = order_payload(status="payout_successful")["data"]
    signature = sign(js_stringify(data).encode(), app.config["CHECKOUT_WEBHOOK_SECRET"])
    body = json.dumps({**framing, "data": data}).encode()
    return signed_webhook(body=body, signature=signature)


@pytest.mark.parametrize("framing", [
    {"event": "kyc"},
    {"event": "auth"},
    {"event": "order-status-change", "extra": "unsigned"},
    {"event": "order-status-change", "note": {"refund": True}},
    {},
])
def test_data_mode_refuses_a_reframed_body_and_stores_nothing(app, receiver, framing):
    app.config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"] = "data"
    response = receiver.post(_data_mode_delivery(app, **framing))
    assert response.status_code == 401
    assert receiver.count_events() == 0


def test_data_mode_dedupes_on_the_signed_data(app, receiver):
    app.config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"] = "data"
    first = receiver.post(_data_mode_delivery(app, event="order-status-change"))
    assert first.status_code == 200 and first.json["duplicate"] is False
    # The same signed data re-serialised (other spacing and key order): the same delivery.
    payload = json.loads(_data_mode_delivery(app, event="order-status-change").body)
    signature = _data_mode_delivery(app, event="order-status-change").headers["x-signature"]
    body = json.dumps({"data": payload["data"], "event": payload["event"]}, indent=2).encode()
    again = receiver.post(signed_webhook(body=body, signature=signature))
    assert again.status_code == 200 and again.json["duplicate"] is True
    assert receiver.count_events() == 1


def test_data_mode_still_reports_a_wrong_signature_first():
    body = json.dumps({"event": "kyc", "data": {}}).encode()
    with pytest.raises(WebhookSignatureError, match="(?i)signature"):
        verify_delivery(body, "0" * 64, "s", mode="data")


def test_body_mode_signs_everything_so_any_event_is_accepted(receiver):
    # Unchanged: the whole body is signed, the framing included.
    response = receiver.post(signed_webhook(payload={"event": "kyc", "data": {}, "extra": 1}))
    assert response.status_code == 200
