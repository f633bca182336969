"""Helpers for the sandbox API tests: an app built from a config mapping and a small API driver."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from checkout.sandbox import create_app, credentials

from ..support.sandbox_clock import MANUAL

CLIENT_ID = credentials.CLIENT_ID
HEADERS = {"x-client-id": CLIENT_ID}
EVM_ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"     # EIP-55 test vector
OTHER_EVM_ADDRESS = "0xde709f2102306220921060314715629080e2fb77"
TX_HASH = "0x" + "ab" * 32


def build_app(**overrides: Any) -> Flask:
    """A sandbox app on the manual clock (tests.support.sandbox_clock.advance moves it)."""
    config = {"TESTING": True, **MANUAL}
    config.update(overrides)
    return create_app(config)


@pytest.fixture
def sandbox_factory() -> Iterator[Callable[..., Flask]]:
    """Build sandbox apps from config overrides; their timer threads stop after the test."""
    built: list[Flask] = []

    def factory(**overrides: Any) -> Flask:
        app = build_app(**overrides)
        built.append(app)
        return app

    yield factory
    for app in built:
        app.extensions["sandbox"].shutdown()


@pytest.fixture
def sandbox_app(sandbox_factory) -> Flask:
    """A sandbox on the manual clock: nothing happens by itself during a test; tests step an
    order with ``Api.advance`` or move the clock (tests.support.sandbox_clock.advance)."""
    return sandbox_factory()


@pytest.fixture
def api(sandbox_app) -> Api:
    return Api(sandbox_app)


class Api:
    """Calls the sandbox as a merchant would: with the client id, JSON in and out."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.client: FlaskClient = app.test_client()

    @property
    def store(self):
        return self.app.extensions["sandbox"].orders

    def get(self, path: str, expect: int = 200, **params: Any) -> Any:
        response = self.client.get(path, query_string=params, headers=HEADERS)
        assert response.status_code == expect, (response.status_code, response.get_data(as_text=True))
        return response.get_json()

    def post(self, path: str, body: Any, expect: int = 200) -> Any:
        response = self.client.post(path, json=body, headers=HEADERS)
        assert response.status_code == expect, (response.status_code, response.get_data(as_text=True))
        return response.get_json()

    # -- on-ramp ----------------------------------------------------------------------------------

    def onramp_quote(self, **overrides: Any) -> dict[str, Any]:
        params = {"network": "CELO", "asset": "USDC", "currency": "local", "amount": "5000",
                  "countryIsoCode": "NG", "paymentChannel": "bank"}
        params.update(overrides)
        return self.get("/api/onramp/best-offer", **params)

    def onramp_order(self, quote: dict[str, Any] | None = None, *, quote_params: dict | None = None,
                     **overrides: Any) -> dict[str, Any]:
        quote = quote or self.onramp_quote(**(quote_params or {}))
        params = {"network": "CELO", "asset": "USDC", "currency": "local", "amount": 5000}
        params.update({k: v for k, v in (quote_params or {}).items()
                       if k in ("network", "asset", "currency")})
        if quote_params and "amount" in quote_params:
            params["amount"] = float(quote_params["amount"])
        body = {"quoteId": quote["quoteId"], **params, "email": "ada@example.com",
                "userIp": "203.0.113.7", "address": EVM_ADDRESS}
        body.update(overrides)
        body = {k: v for k, v in body.items() if v is not None}
        return self.post("/api/onramp/order/create", body)

    def advance(self, order_id: str) -> dict[str, Any]:
        response = self.client.post(f"/sandbox/orders/{order_id}/advance", json={})
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_json()

    def sandbox_order(self, order_id: str) -> dict[str, Any]:
        return self.client.get(f"/sandbox/orders/{order_id}.json").get_json()

    def statuses(self, order_id: str) -> list[str]:
        return [entry["status"] for entry in self.sandbox_order(order_id)["statusHistory"]]

    # -- off-ramp ---------------------------------------------------------------------------------

    def offramp_offer(self, **overrides: Any) -> dict[str, Any]:
        params = {"amount": "20", "currency": "usd", "country": "NG", "type": "bank",
                  "network": "POLYGON", "asset": "USDC"}
        params.update(overrides)
        return self.get("/api/offramp/best-offer", **params)

    def offramp_typed_order(self, offer: dict[str, Any] | None = None, **overrides: Any) -> dict:
        offer = offer or self.offramp_offer()
        body = {"offerId": offer["offer"]["_id"], "paymentType": "CRYPTO_WALLET",
                "network": "POLYGON", "asset": "USDC", "address": EVM_ADDRESS, "currency": "usd",
                "amount": 20, "requiredFields": {"bankCode": "011:02",
                                                 "bankAccountNumber": "0123456789"}}
        body.update(overrides)
        return self.post("/api/offramp/create-order", body)

    def offramp_channel_order(self, quote: dict[str, Any] | None = None, **overrides: Any) -> dict:
        quote = quote or self.get("/api/offramp/best-offer", amount="10", currency="usd",
                                  countryIsoCode="KE", paymentChannel="mobile_money",
                                  network="CELO", asset="USDT")
        body = {"quoteId": quote["quoteId"], "network": "CELO", "asset": "USDT",
                "address": EVM_ADDRESS, "currency": "usd", "amount": 10,
                "requiredFields": {"phoneNumber": "254110611756"}, "email": "kim@example.com"}
        body.update(overrides)
        response = self.client.post("/sandbox/offramp/orders", json=body)
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_json()


