"""The merchant's desk in a real Chromium: a support person's walk, and every desk page checked.

A customer buys on the checkout and, on its payment page, presses the shop's support e-mail link:
the e-mail carries the order's reference (checkout.support). The support person, on a 360 px
phone, with a keyboard alone and JavaScript off, opens the desk, types that reference in its
search box, reads the order's story and presses "Check with the partner now": the status the
partner has (its webhook lost) is recorded, and so is who asked.

Then axe-core on every desk page (the overview, the list, an order, "send the signal again", the
403 page) in the light and the dark scheme, at 360 px, with no sideways scroll and no CSP
violation.
"""
from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from flask import Flask

from checkout import Checkout
from checkout.launch import launch_url

from ..desk.staff import OPERATOR
from ..support.sandbox_clock import MANUAL
from ..views.conftest import move_sandbox_order
from .conftest import (
    RECORD_VIOLATIONS,
    LiveServer,
    assert_accessible,
    close_context,
    screenshot,
)
from .test_keyboard import tab_to
from .test_onramp_e2e import ADDRESS

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}


@pytest.fixture(scope="module")
def desk_server(tmp_path_factory) -> Iterator[LiveServer]:
    """A shop whose staff use the desk (who they are: the X-Test-Staff header, tests/desk/staff.py)
    and whose customers write to help@shop.example."""
    live = LiveServer.start("localhost")
    folder = tmp_path_factory.mktemp("desk-browser")
    app = Flask("desk_host", instance_path=str(folder / "instance"))
    app.config.update(
        CHECKOUT_DATABASE_URL=f"sqlite:///{folder}/checkout.sqlite3",
        CHECKOUT_DESK_ACCESS="tests.desk.staff:from_header",
        CHECKOUT_SUPPORT={"email": "help@shop.example"}, CHECKOUT_MERCHANT_NAME="Test Shop",
        # The manual clock: the order waits for its payment while the support person looks at it.
        CHECKOUT_SANDBOX=MANUAL)
    Checkout(app)
    live.app = app
    yield live
    live.stop()


def support_email_reference(href: str) -> str:
    """The reference in the subject of the shop's support e-mail link ("Order <reference>")."""
    subject = parse_qs(urlsplit(href).query)["subject"][0]
    assert subject.startswith("Order "), subject
    return unquote(subject.removeprefix("Order "))


def buy(browser, server: LiveServer) -> str:
    """A customer's order, up to its payment page; the reference their support e-mail carries."""
    app = server.app
    with app.app_context():
        url = launch_url(app, "onramp", _base_url=server.origin, countryIsoCode="NG",
                         paymentChannel="bank", network="CELO", asset="USDT", currency="local",
                         amount=5000, address=ADDRESS, email="ada@example.com")
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(url)
        page.get_by_role("button", name="Confirm and pay").click()
        page.wait_for_selector("[data-transfer-type]")
        href = page.locator("[data-support=email]").first.get_attribute("href")
        assert href and href.startswith("mailto:help@shop.example?")
        return support_email_reference(href)
    finally:
        close_context(context)


def no_sideways_scroll(page, where: str) -> None:
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow == 0, f"{where} scrolls sideways by {overflow}px"


def test_a_support_person_finds_the_order_from_the_email_reads_it_and_checks_it(browser,
                                                                                desk_server):
    reference = buy(browser, desk_server)
    # The payment arrives at the partner; its webhook is lost on the way.
    move_sandbox_order(desk_server.app, reference, "swap_seller_confirmed", webhook=False)

    context = browser.new_context(viewport=PHONE, java_script_enabled=False,
                                  extra_http_headers=OPERATOR)
    try:
        page = context.new_page()
        page.goto(f"{desk_server.origin}/checkout/desk/")
        assert page.evaluate("() => typeof document.querySelector") == "function"
        tab_to(page, page, "el.id === 'desk-q'")
        page.keyboard.type(reference)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        # One order found: its story opens.
        assert page.locator("[data-testid=desk-order-id]").inner_text() == reference
        story = page.locator("main").inner_text()
        assert "ad***@example.com" in story and "ada@example.com" not in story
        assert ADDRESS in story
        assert "You pay" in story and "NGN" in story
        assert "Order created" in story and "Reached the step: Review" in story
        no_sideways_scroll(page, "the order's story")
        screenshot(page, "desk-1-story")

        tab_to(page, page, "el.dataset.testid === 'desk-check'")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        done = page.locator("[data-testid=desk-done]").inner_text()
        assert "The partner told of a new status: it is recorded." in done
        timeline = page.locator("[data-testid=desk-timeline]").inner_text()
        assert "Payment received" in timeline and "from a check at the desk" in timeline
        assert "Kofi Mensah checked with the partner (operator)" in timeline
        no_sideways_scroll(page, "the order after the check")
        screenshot(page, "desk-2-checked")
    finally:
        close_context(context)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_desk_page_has_no_accessibility_violation(browser, browser_log, desk_server,
                                                        scheme):
    reference = buy(browser, desk_server)
    pages = {
        "overview": "/checkout/desk/?period=30d",
        "orders": "/checkout/desk/orders",
        "no match": "/checkout/desk/orders?q=nobody%40example.org&status=refund_failed",
        "order": f"/checkout/desk/orders/{reference}",
        "send the signal again": None,          # found from the order's page
    }
    context = browser.new_context(viewport=PHONE, color_scheme=scheme,
                                  extra_http_headers=OPERATOR)
    context.expose_binding("__reportCspViolation",
                           lambda source, violation: browser_log.csp_violations.append(violation))
    context.add_init_script(RECORD_VIOLATIONS)
    try:
        page = context.new_page()
        # The order's status signal, so that "send the signal again" has one to send.
        page.goto(desk_server.origin + pages["order"])
        with page.expect_navigation():
            page.locator("[data-testid=desk-check]").click()
        for name, path in pages.items():
            if path is None:
                link = page.locator("[data-testid=desk-resend-link]")
                if not link.count():        # no status owed a signal yet: read it again
                    page.goto(desk_server.origin + pages["order"])
                with page.expect_navigation():
                    page.locator("[data-testid=desk-resend-link]").click()
            else:
                page.goto(desk_server.origin + path)
            assert page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches") \
                == (scheme == "dark")
            assert_accessible(page, f"desk {name}, {scheme}")
            no_sideways_scroll(page, f"desk {name}, {scheme}")
            screenshot(page, f"desk-{name}-{scheme}")
    finally:
        close_context(context)
    # Without access: the desk's own 403 page.
    stranger = browser.new_context(viewport=PHONE, color_scheme=scheme)
    try:
        page = stranger.new_page()
        answer = page.goto(desk_server.origin + "/checkout/desk/")
        assert answer is not None and answer.status == 403
        assert_accessible(page, f"desk 403, {scheme}")
    finally:
        close_context(stranger)
    assert browser_log.csp_violations == []
