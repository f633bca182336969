"""A forged Host never reaches a link: absolute links come from a trusted public address
(checkout.public_address), on every page that builds one."""
from __future__ import annotations

import pytest

from ..conftest import make_app
from .conftest import Flow, sandbox_order
from .test_kyc import to_kyc

EVIL = "evil.example"


def on_host(app, host: str):
    """Every request to ``app`` comes with ``Host: host`` (the test client would say localhost)."""
    inner = app.wsgi_app

    def with_host(environ, start_response):
        environ["HTTP_HOST"] = host
        return inner(environ, start_response)

    app.wsgi_app = with_host
    return app


def forged_flow(app) -> Flow:
    return Flow(app, app.test_client())


def pages_with_absolute_links(app) -> dict[str, str]:
    """Every page that builds an absolute link, as the forged-Host user sees it, and the
    return address the upstream got."""
    pages: dict[str, str] = {}
    flow = forged_flow(app)
    pages["pay (bank transfer, resume link)"] = flow.to_pay("manual").get_data(as_text=True)
    pages["status"] = flow.get("/status").get_data(as_text=True)
    pages["return"] = flow.get("/return").get_data(as_text=True)
    redirect = forged_flow(app)
    pages["pay (redirect, payment page)"] = redirect.to_pay("redirect").get_data(as_text=True)
    order = sandbox_order(app, redirect.session.order_id)
    pages["redirectUrl and paymentUrl given to the upstream"] = \
        f"{order.data.get('redirectUrl')} {order.data.get('paymentUrl')}"
    kyc = forged_flow(app)
    pages["KYC form with photos (handoff)"] = to_kyc(kyc, "60000").get_data(as_text=True) + \
        kyc.get("/kyc?document=ALIEN_CARD").get_data(as_text=True)
    return pages


def test_with_nothing_configured_a_forged_host_gets_no_absolute_link(config):
    config.pop("SERVER_NAME")
    app = on_host(make_app(dict(config)), EVIL)
    for page, html in pages_with_absolute_links(app).items():
        assert EVIL not in html, page
    flow = forged_flow(app)
    html = flow.to_pay("manual").get_data(as_text=True)
    assert "Continue on another device" not in html      # no link rather than a forged one


def test_the_configured_public_address_wins_over_the_host(config):
    config.pop("SERVER_NAME")
    config["CHECKOUT_PUBLIC_URL"] = "https://pay.shop.example"
    app = on_host(make_app(dict(config)), EVIL)
    pages = pages_with_absolute_links(app)
    for page, html in pages.items():
        assert EVIL not in html, page
    assert "https://pay.shop.example/checkout/s/" in pages["pay (bank transfer, resume link)"]
    assert "https://pay.shop.example/checkout/o/" in \
        pages["redirectUrl and paymentUrl given to the upstream"]
    assert "https://pay.shop.example/checkout/s/" in pages["KYC form with photos (handoff)"]


def test_server_name_is_a_public_address(config):
    config["SERVER_NAME"] = "pay.shop.example"
    config["PREFERRED_URL_SCHEME"] = "https"
    app = make_app(dict(config))
    client = app.test_client()
    flow = Flow(app, client)
    html = flow.to_pay("manual").get_data(as_text=True)
    assert f"https://pay.shop.example/checkout/s/{flow.session_id}/" in html


def test_with_trusted_hosts_another_host_is_refused_and_a_trusted_one_is_used(config):
    config.pop("SERVER_NAME")
    config["TRUSTED_HOSTS"] = ["pay.shop.example"]
    app = make_app(dict(config))
    assert app.test_client().get("/checkout/onramp", headers={"Host": EVIL}).status_code == 400
    flow = Flow(on_host(app, "pay.shop.example"), app.test_client())
    flow.start()                                # unsigned: no launch URL to build without a host
    html = flow.to_pay("manual").get_data(as_text=True)
    assert f"http://pay.shop.example/checkout/s/{flow.session_id}/" in html


@pytest.mark.parametrize("host", ["localhost:5000", "127.0.0.1:8000", "[::1]:5000", "[::1]",
                                  "localhost"])
def test_on_a_developer_s_own_machine_the_loopback_host_is_used(config, host):
    config.pop("SERVER_NAME")
    app = on_host(make_app(dict(config)), host)
    flow = Flow(app, app.test_client())
    html = flow.to_pay("manual").get_data(as_text=True)
    assert f"http://{host}/checkout/s/{flow.session_id}/" in html
