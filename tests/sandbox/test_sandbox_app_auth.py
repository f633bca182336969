"""create_app, authentication of /api/* (client id, request signatures) and JSON error answers."""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checkout.sandbox import create_app, credentials
from checkout.sandbox.auth import raw_endpoint

from .sandbox_support import CLIENT_ID, HEADERS, api, sandbox_app, sandbox_factory  # noqa: F401

SECRET = credentials.CLIENT_SECRET        # unpadded base64, as dashboards show it


def signed_headers(endpoint: str, *, timestamp: int | None = None, secret: str = SECRET) -> dict:
    stamp = str(int(time.time() * 1000) if timestamp is None else timestamp)
    key = base64.b64decode(secret + "=" * (-len(secret) % 4))
    digest = hmac.new(key, f"{stamp}:{endpoint}".encode(), hashlib.sha256).digest()
    return {"x-client-id": CLIENT_ID, "x-timestamp": stamp,
            "x-signature": base64.b64encode(digest).decode()}


def test_defaults_and_state(sandbox_factory):
    app = sandbox_factory()
    state = app.extensions["sandbox"]
    assert app.config["SANDBOX_CLIENT_ID"] == credentials.CLIENT_ID
    assert app.config["SANDBOX_CLIENT_SECRET"] is None
    assert app.config["SANDBOX_WEBHOOK_EVENTS"] == ["order"]
    assert app.config["SANDBOX_USER_ENDPOINTS"] is False
    assert state.orders is not None and state.webhooks is not None
    assert state.clock.scale == 1.0 and state.scheduler.clock is state.clock


@pytest.mark.parametrize("bad", [{"SANDBOX_TIME_SCALE": 0}, {"SANDBOX_TIME_SCALE": "fast"},
                                 {"SANDBOX_WEBHOOK_EVENTS": ["orders"]},
                                 {"SANDBOX_OUTCOME": "win"}, {"SANDBOX_CLIENT_ID": ""},
                                 {"SANDBOX_PUBLIC_URL": "shop.example"},
                                 {"SANDBOX_LATENCY": -0.1}, {"SANDBOX_LATENCY": "100ms"},
                                 {"SANDBOX_LATENCY": True}, {"SANDBOX_LATENCY": 31}])
def test_bad_config_fails_at_start(bad):
    with pytest.raises(ValueError):
        create_app(bad)


def test_latency_delays_every_api_answer_and_no_page(sandbox_factory, monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr("checkout.sandbox.time.sleep", waits.append)
    client = sandbox_factory(SANDBOX_LATENCY=0.1).test_client()
    assert client.get("/api/onramp/assets", headers={"x-client-id": CLIENT_ID}).status_code == 200
    assert client.get("/api/onramp/assets").status_code == 401      # refused, as late
    assert waits == [0.1, 0.1]
    assert client.get("/sandbox/").status_code == 200                # a page for people
    assert waits == [0.1, 0.1]
    quick = sandbox_factory().test_client()                         # the default: no wait
    quick.get("/api/onramp/assets", headers={"x-client-id": CLIENT_ID})
    assert waits == [0.1, 0.1]


def test_every_spec_path_is_routed(sandbox_app):
    rules = {rule.rule for rule in sandbox_app.url_map.iter_rules()}
    for path in ("/api/onramp/best-offer", "/api/onramp/payment-channels", "/api/onramp/limits",
                 "/api/onramp/assets", "/api/onramp/order", "/api/onramp/orders",
                 "/api/onramp/order/create", "/api/onramp/order/otp", "/api/onramp/order/confirm",
                 "/api/onramp/order/retry",
                 "/api/pay-widget-merchant/assets", "/api/pay-widget-merchant/order",
                 "/api/pay-widget-merchant/orders", "/api/pay-widget-merchant/price",
                 "/api/pay-widget-merchant/providers", "/api/pay-widget-merchant/limits",
                 "/api/offramp/best-offer", "/api/offramp/payment-channels", "/api/offramp/limits",
                 "/api/offramp/assets", "/api/offramp/order/<order_id>", "/api/offramp/orders",
                 "/api/offramp/countries", "/api/offramp/create-order", "/api/offramp/confirm-order",
                 "/api/offramp/validate-fields", "/api/offramp/wallets",
                 "/sandbox/", "/sandbox/orders", "/sandbox/pay/<order_id>",
                 "/sandbox/offramp/orders", "/sandbox/webhooks"):
        assert path in rules, path


@pytest.mark.parametrize("path", ["/api/onramp/assets", "/api/offramp/assets",
                                  "/api/pay-widget-merchant/assets", "/api/onramp/order/confirm",
                                  "/api/onramp/order/otp", "/api/no-such-path"])
def test_missing_or_wrong_client_id_is_401(sandbox_app, path):
    client = sandbox_app.test_client()
    missing = client.get(path)
    # The upstream's one observed body for bad credentials (notes 2), whatever was wrong.
    assert missing.status_code == 401
    assert missing.get_json() == {"message": "Signature is invalid"}
    wrong = client.get(path, headers={"x-client-id": CLIENT_ID + "x"})
    assert wrong.status_code == 401 and wrong.get_json() == {"message": "Signature is invalid"}


def test_sandbox_pages_need_no_client_id(sandbox_app):
    assert sandbox_app.test_client().get("/sandbox/").status_code == 200


def test_unknown_path_and_wrong_method_are_json(api):
    response = api.client.get("/api/onramp/nothing", headers=HEADERS)
    assert response.status_code == 404 and response.is_json and response.get_json()["message"]
    response = api.client.post("/api/onramp/assets", headers=HEADERS, json={})
    assert response.status_code == 405 and response.is_json
    assert "GET" in response.headers["Allow"]


def test_unexpected_error_is_json_without_traceback(sandbox_app, monkeypatch):
    from checkout.sandbox import reference

    def boom():
        raise RuntimeError("secret internals")

    monkeypatch.setattr(reference, "onramp_payment_channels_json", boom)
    response = sandbox_app.test_client().get("/api/onramp/payment-channels", headers=HEADERS)
    assert response.status_code == 500
    assert response.get_json() == {"message": "Internal server error"}


class TestSignatures:
    @pytest.fixture
    def client(self, sandbox_factory):
        return sandbox_factory(SANDBOX_CLIENT_SECRET=SECRET).test_client()

    PATH = "/api/offramp/limits?type=mobile_money&country=KE"

    def test_signed_request_passes(self, client):
        response = client.get(self.PATH, headers=signed_headers(self.PATH))
        assert response.status_code == 200, response.get_json()

    def test_client_id_alone_is_refused(self, client):
        response = client.get(self.PATH, headers={"x-client-id": CLIENT_ID})
        assert response.status_code == 401
        assert response.get_json() == {"message": "Signature is invalid"}

    def test_reordered_query_is_refused(self, client):
        headers = signed_headers("/api/offramp/limits?country=KE&type=mobile_money")
        assert client.get(self.PATH, headers=headers).status_code == 401

    @pytest.mark.parametrize("skew_ms", [-61_000, 61_000])
    def test_stale_or_future_timestamp_is_refused(self, client, skew_ms):
        headers = signed_headers(self.PATH, timestamp=int(time.time() * 1000) + skew_ms)
        assert client.get(self.PATH, headers=headers).get_json() == {"message": "Signature is invalid"}

    def test_wrong_secret_and_garbage_are_refused(self, client):
        other = base64.b64encode(b"another secret").decode()
        refused = {"message": "Signature is invalid"}
        response = client.get(self.PATH, headers=signed_headers(self.PATH, secret=other))
        assert response.status_code == 401 and response.get_json() == refused
        headers = signed_headers(self.PATH) | {"x-timestamp": "soon"}
        response = client.get(self.PATH, headers=headers)
        assert response.status_code == 401 and response.get_json() == refused
        headers = signed_headers(self.PATH) | {"x-signature": "bm90IGl0"}
        response = client.get(self.PATH, headers=headers)
        assert response.status_code == 401 and response.get_json() == refused
        headers = signed_headers(self.PATH) | {"x-client-id": CLIENT_ID + "x"}
        response = client.get(self.PATH, headers=headers)
        assert response.status_code == 401 and response.get_json() == refused

    def test_percent_encoding_is_signed_as_sent(self, client):
        path = "/api/onramp/order?orderParams=a%20b"
        assert client.get(path, headers=signed_headers(path)).status_code == 404
        assert client.get(path, headers=signed_headers("/api/onramp/order?orderParams=a b")
                          ).status_code == 401

    def test_post_signs_path_not_body(self, client):
        path = "/api/onramp/order/confirm"
        response = client.post(path, json={"orderId": "0" * 24}, headers=signed_headers(path))
        assert response.status_code == 404


def test_raw_endpoint_prefers_the_request_line():
    assert raw_endpoint({"RAW_URI": "/api/x?b=2&a=1", "PATH_INFO": "/api/x",
                         "QUERY_STRING": "a=1&b=2"}) == "/api/x?b=2&a=1"
    assert raw_endpoint({"REQUEST_URI": "http://h/api/x?a=1"}) == "/api/x?a=1"
    assert raw_endpoint({"PATH_INFO": "/api/a b", "QUERY_STRING": "q=%20"}) == "/api/a%20b?q=%20"


def test_flask_cli_finds_create_app():
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    result = subprocess.run([sys.executable, "-m", "flask", "--app", "checkout.sandbox", "routes"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert "/api/onramp/best-offer" in result.stdout
