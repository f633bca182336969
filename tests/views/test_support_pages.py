"""Every page that may need it names whom to contact: the merchant's support with the order's
reference already written, else the merchant by name; never the payment partner."""
from __future__ import annotations

import re

import pytest

from checkout.errors import UpstreamTimeout
from checkout.state import get_state

SUPPORT = {"email": "help@mama-mboga.example", "whatsapp": "+254712345678"}


def support_block(html: str) -> str:
    match = re.search(r'<div class="support" data-testid="support">(.*?)</div>', html, re.S)
    assert match, html[:3000]
    return match.group(1)


@pytest.fixture
def config(config):
    config.update(CHECKOUT_SUPPORT=SUPPORT, CHECKOUT_MERCHANT_NAME="Mama Mboga")
    return config


def test_the_pay_and_status_pages_link_to_support_with_the_order_reference(flow):
    pay = flow.to_pay().get_data(as_text=True)
    order_id = flow.session.order_id
    block = support_block(pay)
    assert "Questions about this order? Contact Mama Mboga:" in block
    assert f"subject=Order%20{order_id}" in block
    assert f"wa.me/254712345678?text=Hello%20Mama%20Mboga%2C%20I%20need%20help%20with%20my%20" \
           f"order%20{order_id}." in block
    assert 'target="_blank" rel="noopener noreferrer"' in block     # WhatsApp leaves the frame
    status = flow.get("/status").get_data(as_text=True)
    assert f"subject=Order%20{order_id}" in support_block(status)


def test_a_failure_page_links_to_support_with_the_order_it_is_about(flow, monkeypatch):
    flow.to_pay()
    order_id = flow.session.order_id
    with flow.app.app_context():
        upstream = get_state().upstream

    def unanswered(*args, **kwargs):
        raise UpstreamTimeout("no answer")

    monkeypatch.setattr(upstream, "onramp_confirm_order", unanswered)
    failed = flow.post("/pay/confirm")
    html = failed.get_data(as_text=True)
    assert failed.status_code >= 500 and 'role="alert"' in html
    assert f"subject=Order%20{order_id}" in support_block(html)


def test_a_failure_before_any_order_links_to_support_about_the_checkout(flow):
    flow.start()
    html = flow.client.post(f"{flow.base}/choose", data={}).get_data(as_text=True)  # no token
    block = support_block(html)
    assert "Need help? Contact Mama Mboga:" in block
    assert "subject=My%20checkout" in block


@pytest.mark.parametrize(("merchant", "said"), [
    ("Mama Mboga", "Questions about this order? Contact Mama Mboga and give them its reference."),
    (None, "Questions about this order? Contact the shop and give them its reference."),
])
def test_without_support_set_the_pages_name_the_merchant(app, flow, merchant, said):
    app.config.update(CHECKOUT_SUPPORT=None, CHECKOUT_MERCHANT_NAME=merchant)
    block = support_block(flow.to_pay().get_data(as_text=True))
    assert said in block and "href" not in block
    assert "partner" not in block
