"""The order's reference on the pages that ask the user to pay or send: there for support, under
what the user has to do, and a quiet copy button (what to pay, and where, comes first)."""
from __future__ import annotations

import re

import pytest

from .test_offramp import Sale


@pytest.fixture
def sale(app, client) -> Sale:
    return Sale(app, client)


def copy_button_classes(html: str, text: str) -> list[str]:
    found = re.search(r'<button type="button" class="([^"]+)" data-copy="' + re.escape(text)
                      + '"', html)
    assert found, html[:3000]
    return found.group(1).split()


def at(html: str, marker: str) -> int:
    assert marker in html, marker
    return html.index(marker)


def test_the_pay_page_shows_the_reference_after_how_to_pay(flow):
    html = flow.to_pay("manual").get_data(as_text=True)
    reference = at(html, 'data-testid="order-reference"')
    assert at(html, 'data-testid="detail-') < reference
    assert at(html, "I have paid") < reference
    # By when to pay is still said before how.
    assert at(html, 'data-testid="order-deadline"') < at(html, 'data-testid="detail-')
    classes = copy_button_classes(html, flow.session.order_id)
    assert "button--secondary" in classes, classes
    # The copy buttons of what to pay stay the page's filled ones.
    assert "button--secondary" not in copy_button_classes(html, "0123456789")


def test_the_deposit_page_shows_the_reference_after_what_to_send(sale):
    html = sale.to_deposit().get_data(as_text=True)
    reference = at(html, 'data-testid="order-reference"')
    assert at(html, 'data-testid="deposit-address"') < reference
    assert at(html, "I have sent it") < reference
    assert at(html, 'data-testid="order-deadline"') < at(html, 'data-testid="deposit-address"')
    classes = copy_button_classes(html, sale.session.order_id)
    assert "button--secondary" in classes, classes
