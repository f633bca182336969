"""The receipt in a real Chromium: it prints clean (no controls, no footer, the order whole), its
print button comes with JavaScript only, and without JavaScript it is all there."""
from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from checkout.views.receipts import receipt_url

from ..views.conftest import Flow
from ..views.test_receipts import ended_sale
from .conftest import assert_accessible

pytestmark = pytest.mark.browser


@pytest.fixture
def receipt(checkout_app: Flask, checkout_server: Any) -> str:
    """The address of a receipt of a real order (an on-ramp, created on the served app)."""
    flow = Flow(checkout_app, checkout_app.test_client())
    flow.to_pay("manual")
    with checkout_app.test_request_context():
        path = receipt_url(flow.session.order_id, "onramp", "en")
    return checkout_server.origin + path


def visible(page: Any, selector: str) -> bool:
    return page.locator(selector).first.is_visible()


def test_the_receipt_prints_the_order_and_nothing_else(page, receipt):
    # A phone in dark mode: the receipt follows it on screen (the theme offers dark), not on paper.
    page.emulate_media(color_scheme="dark")
    page.goto(receipt)
    assert page.evaluate("() => getComputedStyle(document.body).color") != "rgb(0, 0, 0)"
    page.wait_for_selector("[data-testid=receipt-amounts]")
    button = page.get_by_role("button", name="Print or save")
    assert button.is_visible()
    page.emulate_media(media="print", color_scheme="dark")
    assert not button.is_visible()
    assert not visible(page, ".checkout-footer")
    for part in ("h1", "[data-testid=order-reference]", "[data-testid=receipt-amounts]",
                 "[data-testid=receive-amount]", "[data-testid=receipt-wallet]"):
        assert visible(page, part), part
    # Black on white, whatever the screen's colours were.
    assert page.evaluate("() => getComputedStyle(document.body).color") == "rgb(0, 0, 0)"
    assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") == \
        "rgb(255, 255, 255)"


def test_the_print_button_asks_the_browser_to_print(page, receipt):
    page.goto(receipt)
    page.evaluate("() => { window.printed = 0; window.print = () => { window.printed += 1; }; }")
    page.get_by_role("button", name="Print or save").click()
    assert page.evaluate("() => window.printed") == 1


def test_without_javascript_the_receipt_is_all_there_and_shows_no_dead_button(browser, receipt):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(receipt)
        assert visible(page, "[data-testid=receipt-amounts]")
        assert visible(page, "[data-testid=order-reference]")
        assert not page.get_by_role("button", name="Print or save").is_visible()
        page.get_by_role("link", name="Français").click()
        assert page.locator("h1").inner_text() == "Reçu"
    finally:
        context.close()


@pytest.mark.parametrize("javascript", [True, False])
def test_a_refunded_sale_s_receipt_on_a_narrow_phone(browser, checkout_app, checkout_server,
                                                      javascript):
    """What went back, where and by which transaction, whole on a 320 px screen with or without
    JavaScript (long addresses and hashes wrap), in French as the link was made."""
    _, path = ended_sale(checkout_app, checkout_app.test_client(), "refund", "fr")
    context = browser.new_context(java_script_enabled=javascript,
                                  viewport={"width": 320, "height": 720})
    try:
        page = context.new_page()
        page.goto(checkout_server.origin + path.replace("&amp;", "&"))
        assert page.evaluate("() => document.documentElement.lang") == "fr"
        for part in ("receipt-outcome", "refund-amount", "refund-address", "refund-tx-hash"):
            assert visible(page, f"[data-testid={part}]"), part
        assert not page.locator("[data-testid=receipt-amounts]").count()
        assert page.get_by_role("link", name="Voir sur l’explorateur").count() == 2
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow == 0, f"the receipt scrolls sideways by {overflow}px"
        if javascript:      # axe-core runs as a script: the page without it is the same page
            assert_accessible(page, "refunded receipt")
    finally:
        context.close()
