"""The in-process adapter: a WSGI app answers a session's requests with full HTTP semantics."""
from __future__ import annotations

import json

import pytest
import requests
from flask import Flask, jsonify, request

from checkout import errors
from checkout.upstream import UpstreamClient
from checkout.upstream.inprocess import mount_wsgi_app

BASE = "http://sandbox.checkout.invalid"


@pytest.fixture
def echo_app() -> Flask:
    app = Flask("echo")

    @app.route("/api/echo", methods=["GET", "POST"])
    def echo():
        response = jsonify(
            method=request.method,
            raw_uri=request.environ.get("RAW_URI"),
            request_uri=request.environ.get("REQUEST_URI"),
            full_path=request.full_path,
            args=list(request.args.items(multi=True)),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=request.get_data(as_text=True),
            host=request.host,
        )
        response.headers["X-Served-By"] = "echo"
        return response

    @app.route("/api/onramp/order/confirm", methods=["POST"])
    def confirm():
        return "order confirmed", 200, {"Content-Type": "text/plain; charset=utf-8"}

    @app.route("/api/onramp/assets")
    def busy():
        return jsonify(message="maintenance"), 503

    return app


def test_a_real_response_comes_back(echo_app):
    session = requests.Session()
    mount_wsgi_app(session, BASE, echo_app)
    response = session.post(f"{BASE}/api/echo?b=2&a=1&e=x%40y.z", json={"k": "v"},
                            headers={"x-client-id": "abc"})
    assert isinstance(response, requests.Response)
    assert response.status_code == 200 and response.reason == "OK" and response.ok
    assert response.url == f"{BASE}/api/echo?b=2&a=1&e=x%40y.z"
    assert response.headers["x-served-by"] == "echo"
    assert response.headers["Content-Type"] == "application/json"
    assert response.request.method == "POST"
    echoed = response.json()
    # The query reaches the app byte for byte, as the signature needs.
    assert echoed["raw_uri"] == echoed["request_uri"] == "/api/echo?b=2&a=1&e=x%40y.z"
    assert echoed["args"] == [["b", "2"], ["a", "1"], ["e", "x@y.z"]]
    assert echoed["headers"]["x-client-id"] == "abc"
    assert json.loads(echoed["body"]) == {"k": "v"}
    assert echoed["host"] == "sandbox.checkout.invalid"


def test_only_the_mounted_base_url_is_served(echo_app):
    session = requests.Session()
    mount_wsgi_app(session, BASE, echo_app)
    assert session.get_adapter(f"{BASE}/api/echo") is not session.get_adapter("https://other.test/")
    # A host that merely starts with the same text is not captured.
    assert session.get_adapter(f"{BASE}.evil.test/api/echo") is session.get_adapter(
        "http://other.test/")


def test_the_client_goes_through_the_same_code_path(echo_app):
    client = UpstreamClient(BASE, client_id="merchant-1",
                            client_secret="c2FuZGJveC1jbGllbnQtc2VjcmV0LWZvci10ZXN0cy0wMQ")
    mount_wsgi_app(client.http, BASE, echo_app)
    echoed = client.transport.request("GET", "/api/echo", params={"z": "1", "a": "b c"})
    assert echoed["raw_uri"] == "/api/echo?z=1&a=b%20c"
    assert echoed["headers"]["x-client-id"] == "merchant-1"
    assert {"x-timestamp", "x-signature"} <= set(echoed["headers"])
    assert client.onramp_confirm_order("o-1") is None            # a text answer
    client.transport.sleep = lambda seconds: None
    with pytest.raises(errors.UpstreamUnavailable) as info:
        client.onramp_assets()
    assert info.value.status == 503 and info.value.message == "maintenance"


def test_an_exception_in_the_app_is_a_500_not_a_crash():
    app = Flask("broken")

    @app.route("/api/onramp/assets")
    def broken():
        raise RuntimeError("bug in the sandbox")

    client = UpstreamClient(BASE, client_id="merchant-1", retries=0)
    mount_wsgi_app(client.http, BASE, app)
    with pytest.raises(errors.UpstreamUnavailable) as info:
        client.onramp_assets()
    assert info.value.status == 500
