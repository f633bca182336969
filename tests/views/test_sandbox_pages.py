"""A bare ``Checkout(app)`` on the embedded sandbox serves the sandbox's browser pages itself.

A merchant's developer who mounts the checkout with no upstream configured must be able to finish a
redirect order: the payment page of the order's ``paymentUrl``, the upstream's resume page and the
console are served under ``{prefix}/sandbox/``, on the host the user is on.
"""
from __future__ import annotations

import re
from html import unescape
from urllib.parse import urlsplit

import pytest
from flask import Flask

from checkout import Checkout

from .conftest import sandbox_order


def _links(html: str) -> list[str]:
    return [unescape(href) for href in re.findall(r'href="([^"]+)"', html)]


def test_redirect_order_is_paid_on_the_hosts_own_sandbox_page(flow):
    html = flow.to_pay("redirect").get_data(as_text=True)
    payment_url = next(h for h in _links(html) if "/sandbox/pay/" in h)
    # On this host, under the checkout's prefix: the browser can reach it.
    host = flow.app.config.get("SERVER_NAME") or "localhost"
    assert payment_url.startswith(f"http://{host}/checkout/sandbox/pay/"), payment_url
    page = flow.client.get(urlsplit(payment_url).path)
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    assert "Sandbox payment page" in body
    # The page's form posts back under the same prefix.
    action = re.search(r'<form[^>]+action="([^"]+)"', body)
    assert action is None or action.group(1).startswith("/checkout/sandbox/pay/")
    # Paying there sends the browser back to our return page, and the order moves on.
    paid = flow.client.post(urlsplit(payment_url).path, data={"action": "pay"})
    assert paid.status_code == 302
    back = urlsplit(paid.headers["Location"]).path
    assert back.startswith("/checkout/o/") and flow.session_id not in back
    assert flow.client.get(back).status_code == 200
    assert sandbox_order(flow.app, flow.session.order_id).status != "deposit_awaiting"


def test_upstream_resume_link_leads_to_the_hosts_sandbox_page(flow):
    flow.to_pay("redirect")
    order = sandbox_order(flow.app, flow.session.order_id)
    resume = order.data["resumeUrl"]
    host = flow.app.config.get("SERVER_NAME") or "localhost"
    assert resume.startswith(f"http://{host}/checkout/sandbox/orders/"), resume
    assert flow.client.get(urlsplit(resume).path).status_code == 200


def test_console_is_served_under_the_prefix_with_the_checkouts_headers(flow):
    flow.to_pay("manual")
    console = flow.client.get("/checkout/sandbox/")
    assert console.status_code == 200
    html = console.get_data(as_text=True)
    # Its links stay under the prefix (the sandbox builds them from the script name).
    internal = [h for h in _links(html) if h.startswith("/")]
    assert internal and all(h.startswith("/checkout/") for h in internal), internal
    orders = flow.client.get("/checkout/sandbox/orders")
    assert orders.status_code == 200 and flow.session.order_id in orders.get_data(as_text=True)
    # The console is open to anyone who reaches the sandbox: no session key on it.
    detail = flow.client.get(f"/checkout/sandbox/orders/{flow.session.order_id}")
    for page in (console, orders, detail):
        assert flow.session_id not in page.get_data(as_text=True)
    assert "script-src 'self'" in console.headers["Content-Security-Policy"]
    assert console.headers["Cache-Control"] == "no-store"
    assert flow.client.get("/checkout/sandbox/no-such-page").status_code == 404


def test_a_set_public_url_still_wins(tmp_path, config):
    config["CHECKOUT_SANDBOX"] = {**config["CHECKOUT_SANDBOX"],
                                  "SANDBOX_PUBLIC_URL": "http://pay.example.test"}
    app = Flask("host", instance_path=str(tmp_path / "instance"))
    app.config.update(config)
    Checkout(app)
    from .conftest import Flow

    flow = Flow(app, app.test_client())
    html = flow.to_pay("redirect").get_data(as_text=True)
    assert any(h.startswith("http://pay.example.test/sandbox/pay/") for h in _links(html))


@pytest.fixture
def upstream_config(config):
    config["CHECKOUT_API_BASE_URL"] = "https://upstream.example.test"
    config["CHECKOUT_LAUNCH_SECRET"] = "x" * 40
    config["CHECKOUT_CLIENT_ID"] = "client-for-tests"
    config["CHECKOUT_WEBHOOK_SECRET"] = "w" * 32
    return config


def test_no_sandbox_pages_against_a_real_upstream(tmp_path, upstream_config):
    app = Flask("host", instance_path=str(tmp_path / "instance"))
    app.config.update(upstream_config)
    Checkout(app)
    client = app.test_client()
    assert client.get("/checkout/sandbox/").status_code == 404
    assert client.get("/checkout/sandbox/pay/x").status_code == 404


def test_the_sandbox_home_page_title_is_text(client):
    html = client.get("/checkout/sandbox/").get_data(as_text=True)
    title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "<" not in title and "Checkout sandbox" in title
    assert html.count('id="kyc-thresholds"') == 1
