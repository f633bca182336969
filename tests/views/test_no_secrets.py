"""A whole checkout, walked with request signing on: no credential ever reaches the browser."""
from __future__ import annotations

import base64
import secrets

import pytest

from .conftest import CORRIDORS, Flow
from .test_status import poll_until

CLIENT_ID = "merchant-id-" + secrets.token_hex(4)
CLIENT_SECRET = base64.b64encode(secrets.token_bytes(32)).decode()
WEBHOOK_SECRET = "whsec-" + secrets.token_hex(16)
LAUNCH_SECRET = "launch-" + secrets.token_hex(24)


@pytest.fixture
def config(config):
    config.update(CHECKOUT_CLIENT_ID=CLIENT_ID, CHECKOUT_CLIENT_SECRET=CLIENT_SECRET,
                  CHECKOUT_WEBHOOK_SECRET=WEBHOOK_SECRET, CHECKOUT_LAUNCH_SECRET=LAUNCH_SECRET)
    return config


@pytest.mark.parametrize("time_scale", [0.01])
def test_no_secret_in_any_body_header_or_redirect(app):
    flow = Flow(app, app.test_client())
    flow.start(network="CELO", asset="USDT", email="ada@example.com",
               orderParams="cart-1", returnUrl="https://shop.test/done")
    flow.get("/quote", query_string={**CORRIDORS["ussd"], "network": "CELO", "asset": "USDT",
                                     "currency": "local", "amount": "5000"},
             headers={"HX-Request": "true"})
    flow.to_pay("ussd")
    flow.follow(flow.post("/pay/confirm"))
    poll_until(flow, "payout_successful")
    flow.get("/return")
    flow.get("/")
    assert len(flow.responses) > 10
    needles = {"client id": CLIENT_ID, "client secret": CLIENT_SECRET,
               "webhook secret": WEBHOOK_SECRET, "launch secret": LAUNCH_SECRET}
    for response in flow.responses:
        body = response.get_data(as_text=True)
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        for name, secret in needles.items():
            assert secret not in body, f"{name} in the body of {response.request.path}"
            assert secret not in headers, f"{name} in the headers of {response.request.path}"
    assert flow.session.order_id                           # the walk really created an order
