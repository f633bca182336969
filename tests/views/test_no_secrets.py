"""A whole checkout, walked with request signing on: no credential ever reaches the browser."""
from __future__ import annotations

import base64
import json
import logging
import secrets

import pytest

from checkout.signature import sign

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


NEEDLES = {"client id": CLIENT_ID, "client secret": CLIENT_SECRET,
           "webhook secret": WEBHOOK_SECRET, "launch secret": LAUNCH_SECRET}


def assert_no_secret_logged(records: list[logging.LogRecord]) -> None:
    for record in records:
        text = record.getMessage()
        if record.exc_info:
            text += logging.Formatter().formatException(record.exc_info)
        for name, secret in NEEDLES.items():
            assert secret not in text, f"{name} in a log line of {record.name}"


def test_no_secret_in_any_body_header_or_redirect(app, caplog):
    caplog.set_level(logging.DEBUG)
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
    # The embedded sandbox's pages, served on the host (console, order, deliveries): the sandbox
    # runs with the merchant's configured credentials, and shows none of them either.
    order_id = flow.session.order_id
    for path in ("/", "/orders", f"/orders/{order_id}", f"/orders/{order_id}.json", "/webhooks",
                 "/webhooks.json"):
        page = flow._keep(flow.client.get(f"/checkout/sandbox{path}"))
        assert page.status_code == 200, path
    assert len(flow.responses) > 10
    for response in flow.responses:
        body = response.get_data(as_text=True)
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        for name, secret in NEEDLES.items():
            assert secret not in body, f"{name} in the body of {response.request.path}"
            assert secret not in headers, f"{name} in the headers of {response.request.path}"
    assert flow.session.order_id                           # the walk really created an order

    # The webhook receiver, with a good and a bad signature, logs no secret either.
    body = json.dumps({"event": "order-status-change", "data": {}}).encode()
    client = app.test_client()
    for signature in (sign(body, WEBHOOK_SECRET), "0" * 64):
        client.post("/checkout/webhooks", data=body, content_type="application/json",
                    headers={"x-signature": signature})
    assert caplog.records                                  # logging was really captured
    assert_no_secret_logged(caplog.records)


# The upstream expects another client secret: every call answers 401 "Signature is invalid".
@pytest.mark.parametrize("sandbox_config",
                         [{"SANDBOX_CLIENT_SECRET": base64.b64encode(b"x" * 32).decode()}])
def test_upstream_rejecting_our_credentials_shows_an_error_and_logs_no_secret(app, caplog):
    caplog.set_level(logging.DEBUG)
    flow = Flow(app, app.test_client())
    flow.start(network="CELO", asset="USDT")
    page = flow.get("/quote", query_string={**CORRIDORS["manual"], "network": "CELO",
                                            "asset": "USDT", "currency": "local",
                                            "amount": "5000"},
                    headers={"HX-Request": "true"})
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    for name, secret in NEEDLES.items():
        assert secret not in text, f"{name} in the error shown"
    assert 'role="alert"' in text and "Try again" in text          # a clear error, with a retry
    assert any(r.levelno >= logging.WARNING for r in caplog.records)   # the failure is logged
    assert_no_secret_logged(caplog.records)


def test_no_secret_in_any_page_of_a_sale(app, caplog):
    """The off-ramp, with the shop's wallet event, the test wallet and the status timeline."""
    from .test_offramp import Sale

    caplog.set_level(logging.DEBUG)
    sale = Sale(app, app.test_client())
    sale.client.environ_base["HTTP_SEC_FETCH_DEST"] = "iframe"
    sale.start(orderParams="sale-1", returnUrl="https://shop.test/done")
    deposit = sale.to_deposit()
    assert "deposit-requested" in deposit.get_data(as_text=True)
    order_id = sale.session.order_id
    sale._keep(sale.client.get(f"/checkout/sandbox/offramp/{order_id}/send"))
    sale.follow(sale.post("/deposit/sent", {"tx_hash": "0x" + "5e" * 32}))
    poll_until(sale, "payout_successful")
    sale.get("/status")
    assert len(sale.responses) > 10
    for response in sale.responses:
        body = response.get_data(as_text=True)
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        for name, secret in NEEDLES.items():
            assert secret not in body, f"{name} in the body of {response.request.path}"
            assert secret not in headers, f"{name} in the headers of {response.request.path}"
    assert_no_secret_logged(caplog.records)
