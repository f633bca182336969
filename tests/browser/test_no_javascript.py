"""Every flow with JavaScript off, as on low-end phones, proxy browsers and data-saver modes.

Chromium runs with ``java_script_enabled=False``: no htmx, no checkout.js, and no embed.js on the
shop's page either, so nothing mounts the checkout. The test shop here is the page a merchant
would write without script: a plain ``<iframe src>`` of the launch URL, served on
``http://127.0.0.1:P3`` (another site than the checkout's ``http://localhost:P2``). Each flow runs
inside that cross-site iframe, except the on-ramp's payment page and the return page after it,
which are top-level as for every user (the payment page replaces the shop's page).

Each flow runs once, in English (the launch token's ``locale``): each page must declare its
language. That every page is said in French, Swahili and Portuguese, and an amount typed as each
writes a decimal (``100,5`` in French and Portuguese) is read and shown their way, the view tests
check (tests/views/test_one_language.py, tests/test_typed_amounts.py).

- On-ramp: the amount step without live pricing ("Update price" shows the choices and the price),
  the order created, paid on the sandbox's own payment page, and the return page updating itself
  until the order is complete.
- Off-ramp: payout details, account check, wallet, the order created, its deposit declared by
  pasting a transaction hash, and the status page updating itself until paid out.
- KYC: a basic document before the order; the pending page updates itself until the review.
  A computer without a camera hands over to a phone, and its page waiting for the phone follows
  along by itself.

On every page: no button that needs JavaScript (each visible one submits its form).
"""
from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from babel import Locale, UnknownLocaleError
from babel.numbers import format_currency, format_decimal
from flask import Flask, Response, abort, render_template_string, request
from PIL import Image

from checkout.i18n import babel_locale

from ..support.live_server import LiveServer
from .conftest import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LANGUAGES,
    catalogue,
    explain_failure,
    screenshot,
)

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
TX_HASH = "0x" + "7d" * 32
SELF_UPDATE = 30_000        # ms a page that reloads itself may take to show a change

PLAIN_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Test shop without JavaScript</title>
</head>
<body>
  <h1>Test shop</h1>
  <iframe src="{{ launch }}" title="Buy stablecoins" width="100%" height="1800"
    allow="clipboard-write; payment; camera"></iframe>
</body>
</html>
"""

# Visible buttons that do nothing without JavaScript: any that is not a form's submit button.
DEAD_BUTTONS = """() => [...document.querySelectorAll("button")]
  .filter((b) => b.getClientRects().length > 0)
  .filter((b) => !(b.form && b.type === "submit"))
  .map((b) => b.textContent.trim())"""


def plain_shop_app(checkout_origin: str) -> Flask:
    """A shop page that frames the checkout with markup alone."""
    app = Flask("plain_shop")

    @app.get("/")
    def shop() -> Response:
        launch = request.args.get("launch", "")
        if not launch.startswith(checkout_origin + "/"):
            abort(400)
        response = Response(render_template_string(PLAIN_PAGE, launch=launch))
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; frame-src {checkout_origin}; base-uri 'none'")
        return response

    return app


@pytest.fixture(scope="module")
def plain_shop(checkout_server) -> Iterator[LiveServer]:
    live = LiveServer.start("127.0.0.1")
    live.app = plain_shop_app(checkout_server.origin)
    yield live
    live.stop()


@pytest.fixture(scope="module")
def script_free_browser(playwright_instance):
    """A Chromium of its own with scripting off from its first frame: a context's
    java_script_enabled=False reaches a cross-site frame (a process of its own) a moment after
    that frame starts parsing, and a <noscript> parsed before then is text (seen under load)."""
    browser = playwright_instance.chromium.launch(
        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, "--blink-settings=scriptEnabled=false"])
    yield browser
    browser.close()


@pytest.fixture
def no_js(script_free_browser, request) -> Iterator[tuple[Any, list[str]]]:
    """A page in a phone-sized context with JavaScript disabled, and the console errors seen."""
    context = script_free_browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield page, errors
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        screenshot(page, f"FAILED-{request.node.name}")
        explain_failure(page)
    context.close()
    assert [e for e in errors if "Content Security Policy" in e] == []


class PlainShop:
    """The plain shop page with the checkout in its iframe, driven without JavaScript by a user
    who reads ``language``."""

    def __init__(self, shop: Any, plain: LiveServer, page: Any, language: str) -> None:
        self.shop = shop
        self.plain = plain
        self.page = page
        self.language = language

    def _(self, text: str) -> str:
        return catalogue(self.language).gettext(text)

    def open(self, flow: str = "onramp", **claims: Any) -> Any:
        url = self.shop.launch_url(flow, parentOrigin=self.plain.origin, locale=self.language,
                                   **claims)
        self.page.goto(f"{self.plain.origin}/?launch={quote(url, safe='')}")
        frame = self.frame()
        frame.wait_for_load_state("load")
        self.check(frame)
        return frame

    def frame(self) -> Any:
        return self.shop.frame(self.page)

    def submit(self, name: str, *, role: str = "button") -> Any:
        """Press a button (or follow a link) named ``name`` in English, in the user's language;
        return the frame once its next page has loaded and been checked."""
        frame = self.frame()
        with frame.expect_navigation():
            frame.get_by_role(role, name=self._(name)).click()
        self.check(frame)
        return frame

    def check(self, frame: Any) -> None:
        """The page speaks the user's language, and has no button that needs JavaScript."""
        assert frame.evaluate("() => document.documentElement.lang") == self.language
        dead = frame.evaluate(DEAD_BUTTONS)
        assert dead == [], f"buttons that do nothing without JavaScript on {frame.url}: {dead}"


def typed(amount: str, language: str, country: str) -> tuple[str, str]:
    """``amount`` as a user of ``language`` in ``country`` types it, and as the pages show it in
    the country's currency (Babel's words for both, spaces made plain; Portuguese as Portugal
    writes it, as the pages do)."""
    try:
        locale = babel_locale(Locale.parse(f"{language}_{country}"))
    except (ValueError, UnknownLocaleError):
        locale = babel_locale(language)
    currency = {"GH": "GHS"}[country]
    shown = format_currency(Decimal(amount), currency, locale=locale)
    return format_decimal(Decimal(amount), locale=locale), plain_spaces(shown)


def plain_spaces(text: str) -> str:
    return " ".join(text.replace("\xa0", " ").replace("\u202f", " ").split())


@pytest.fixture
def plain(shop, shop_server, plain_shop, checkout_config, no_js) -> PlainShop:
    # The plain shop frames the checkout too: its origin joins the allowed parents for this test.
    # A waiting page reloads itself every second here rather than every ten.
    checkout_config(CHECKOUT_FRAME_ANCESTORS=[shop_server.origin, plain_shop.origin],
                    CHECKOUT_NO_SCRIPT_REFRESH_SECONDS=1)
    return PlainShop(shop, plain_shop, no_js[0], "en")


def confirm(plain: PlainShop, button: str, done: str) -> Any:
    """Confirm: the order is made, and ``done`` shows on the page that follows."""
    frame = plain.submit(button)
    frame.wait_for_selector(done)
    return frame


def test_an_on_ramp_order_paid_on_the_payment_page(plain):
    page = plain.page
    frame = plain.open()
    assert not frame.locator("#quote [data-testid=receive-amount]").count()
    frame.locator("select[name=countryIsoCode]").select_option("GH")
    # Nothing follows a choice without JavaScript: "Update price" brings the country's channels.
    frame = plain.submit("Update price")
    frame.locator("input[name=paymentChannel][value=bank]").check()
    frame.locator("select[name=network]").select_option("CELO")
    frame.locator("select[name=asset]").select_option("USDT")
    amount, shown = typed("100.5", plain.language, "GH")
    frame.locator("input[name=amount]").fill(amount)
    frame = plain.submit("Update price")
    # The whole price, before going on, and nothing saved yet.
    assert frame.locator("#quote [data-testid=receive-amount]").inner_text().endswith("USDT")
    assert frame.locator("input[name=amount]").input_value() == amount
    screenshot(page, f"no-js-onramp-1-priced-{plain.language}")
    frame = plain.submit("Continue")
    frame.wait_for_selector("input[name=address]")
    # Back, as the browser's button: the amount step, as saved, at its own address; Forward,
    # the wallet again.
    page.evaluate("history.back()")
    plain.frame().wait_for_selector("input[name=amount]")
    assert urlsplit(plain.frame().url).path.endswith("/choose")
    assert plain.frame().locator("input[name=amount]").input_value() == amount
    page.evaluate("history.forward()")
    plain.frame().wait_for_selector("input[name=address]")
    frame = plain.frame()
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill("no-js@example.com")
    frame = plain.submit("Continue")
    frame.wait_for_selector(f"h1:text-is('{plain._('Review your order')}')")
    # The amount as the user meant it, in their language's way of writing money.
    assert shown in plain_spaces(frame.locator("main").inner_text())
    frame = confirm(plain, "Confirm and pay", "[data-transfer-type=redirect]")
    # Copy buttons cannot copy here: hidden, their values left as text to select.
    assert frame.locator("[data-copy]").count() and not frame.locator("[data-copy]:visible").count()
    assert frame.locator("[data-testid=order-reference]").is_visible()
    screenshot(page, f"no-js-onramp-2-pay-{plain.language}")

    # The payment page replaces the shop's page (a link with target="_top").
    frame.get_by_role("link", name=plain._("Continue to the payment page")).click()
    page.wait_for_url(f"{plain.shop.checkout_origin}/checkout/sandbox/pay/*")
    page.get_by_role("button", name="Pay").click()          # the payment partner's own page
    page.wait_for_url(f"{plain.shop.checkout_origin}/checkout/o/*")
    # No click from here: the return page reloads itself until the order is complete.
    plain.shop.advance(page, 60)
    page.wait_for_selector("[data-status=payout_successful] [data-testid=tx-hash]",
                           timeout=SELF_UPDATE)
    assert "/checkout/o/" in page.url
    assert page.evaluate("() => document.documentElement.lang") == plain.language
    screenshot(page, f"no-js-onramp-3-complete-{plain.language}")
    assert page.context.cookies() == []


def test_an_off_ramp_order_declared_by_pasting_the_transaction_hash(plain):
    page = plain.page
    frame = plain.open("offramp", countryIsoCode="NG", paymentChannel="bank", network="POLYGON",
                       asset="USDC", currency="local", amount=20000)
    frame.wait_for_selector("select[name=bankCode]")
    # The bank list's filter box is in the page, but it could not filter: not shown.
    assert frame.locator("input[data-checkout-filter]").count() == 1
    assert not frame.locator("input[data-checkout-filter]").is_visible()
    frame.locator("select[name=bankCode]").select_option("011:02")
    frame.locator("input[name=bankAccountNumber]").fill("0123456789")
    frame = plain.submit("Continue")
    frame.wait_for_selector("[data-testid=payee-name]")
    frame = plain.submit("Yes, pay this account")
    frame.locator("input[name=address]").fill(ADDRESS)
    frame = plain.submit("Continue")
    frame.wait_for_selector(f"h1:text-is('{plain._('Review your order')}')")
    frame = confirm(plain, "Confirm and sell", "[data-deposit-form]")
    assert frame.locator("[data-testid=deposit-address]").inner_text().startswith("0x")
    assert not frame.locator("[data-copy]:visible").count()
    screenshot(page, f"no-js-offramp-1-deposit-{plain.language}")

    frame.locator("input[name=tx_hash]").fill(TX_HASH)
    frame = plain.submit("I have sent it")
    assert frame.url.endswith("/status")
    assert frame.locator("[data-testid=tx-hash]").inner_text() == TX_HASH
    # The status page, in the shop's frame, reloads itself until the money is paid out.
    plain.shop.advance(page, 60)
    frame.wait_for_selector("[data-status=payout_successful]", timeout=SELF_UPDATE)
    frame.wait_for_selector("[data-testid=timeline] [data-status=offramp_success]")
    screenshot(page, f"no-js-offramp-2-paid-out-{plain.language}")
    assert page.context.cookies() == []


def test_a_basic_kyc_before_the_order(plain, checkout_config):
    # The sandbox decides after its review's minute: read its verdict at each reload of the page.
    checkout_config(CHECKOUT_KYC_POLL_SECONDS=0)
    page = plain.page
    frame = plain.open(countryIsoCode="KE", paymentChannel="mobile_money", network="CELO",
                       asset="USDT", currency="local", amount=5000)
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(ADDRESS)
    # A user of their own per language: one verified already would not be asked again.
    frame.locator("input[name=email]").fill(f"no-js-kyc-{plain.language}@example.com")
    frame = plain.submit("Continue")
    frame.locator("input[name=phoneNumber]").fill(
        f"07120003{LANGUAGES.index(plain.language) + 1:02d}")
    frame = plain.submit("Continue")
    frame.wait_for_selector(f"h1:text-is('{plain._('Verify your identity')}')")
    frame.get_by_label(plain._("National ID")).check()
    frame = plain.submit("Continue")
    frame.get_by_label(plain._("First name")).fill("Wanjiru")
    frame.get_by_label(plain._("Last name")).fill("Kamau")
    frame.get_by_label(plain._("Date of birth")).fill("1990-05-17")
    frame.get_by_label(plain._("ID number")).fill("40718293")
    screenshot(page, f"no-js-kyc-1-form-{plain.language}")
    frame = plain.submit("Send for verification")
    # Under review: the pending page reloads itself, and once approved (the review's minute
    # passed) the checkout goes on to the review.
    frame.wait_for_selector("[data-testid=kyc-pending]")
    plain.shop.advance(page, 60)
    review = f"h1:text-is('{plain._('Review your order')}')"
    frame.wait_for_selector(review, timeout=SELF_UPDATE)
    plain.check(frame)
    frame = confirm(plain, "Confirm and pay", "[data-transfer-type]")
    assert frame.locator("[data-testid=order-reference]").inner_text()
    screenshot(page, f"no-js-kyc-2-order-{plain.language}")
    assert page.context.cookies() == []


def test_a_computer_without_a_camera_waits_for_the_phone_on_a_page_that_follows_along(
        plain, checkout_config, shop, tmp_path: Path):
    checkout_config(CHECKOUT_KYC_POLL_SECONDS=0)
    page = plain.page
    phone_number = f"07120004{LANGUAGES.index(plain.language) + 1:02d}"
    frame = plain.open(countryIsoCode="KE", paymentChannel="mobile_money", network="CELO",
                       asset="USDT", currency="local", amount=15000)
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill(f"no-js-handoff-{plain.language}@example.com")
    frame = plain.submit("Continue")
    frame.locator("input[name=phoneNumber]").fill(phone_number)
    frame = plain.submit("Continue")
    frame.get_by_label(plain._("Alien card")).check()
    frame = plain.submit("Continue")
    frame.locator("summary", has_text=plain._("No camera on this device? Continue on your phone"))\
        .click()
    link = frame.locator("[data-testid=kyc-handoff-url]").inner_text().strip()
    # The form cannot follow along without script: the page says what to press, not that it will.
    wait = plain._("Wait for my phone")
    said = frame.locator("[data-testid=kyc-handoff] p:visible").first.inner_text()
    assert said == plain._("Scan this code with your phone, or open the link there, then press "
                           "“%(wait)s” below.") % {"wait": wait}
    frame = plain.submit("Wait for my phone", role="link")
    frame.wait_for_selector("[data-testid=kyc-handoff-waiting]")
    assert frame.locator("[data-testid=kyc-handoff-waiting] svg").count() == 1
    screenshot(page, f"no-js-handoff-1-waiting-{plain.language}")

    # The phone (here a page without script too) sends the document with its photos.
    mobile = page.context.new_page()
    try:
        mobile.goto(link)
        mobile.get_by_label(plain._("Alien card")).check()
        with mobile.expect_navigation():
            mobile.get_by_role("button", name=plain._("Continue")).click()
        mobile.get_by_label(plain._("First name")).fill("Wanjiru")
        # The sandbox's magic last name: under review until the test decides.
        mobile.get_by_label(plain._("Last name")).fill("Pending")
        mobile.get_by_label(plain._("Date of birth")).fill("1990-05-17")
        mobile.get_by_label(plain._("ID number")).fill("7654321")
        for name in ("selfie", "front", "back"):
            picture = tmp_path / f"{name}.jpg"
            Image.effect_noise((800, 600), 40).convert("RGB").save(picture, "JPEG")
            mobile.locator(f"input[name=photo_{name}]").set_input_files(str(picture))
        with mobile.expect_navigation():
            mobile.get_by_role("button", name=plain._("Send for verification")).click()
        mobile.wait_for_selector("[data-testid=kyc-pending]")
    finally:
        mobile.close()
    # No click on the computer: its page reloads itself, sees the document under review, then
    # the approval, and goes on to the review.
    frame = plain.frame()
    frame.wait_for_selector("[data-testid=kyc-pending]", timeout=SELF_UPDATE)
    shop.decide_kyc(phone_number, "approve")
    frame = plain.frame()
    frame.wait_for_selector(f"h1:text-is('{plain._('Review your order')}')", timeout=SELF_UPDATE)
    plain.check(frame)
    assert page.context.cookies() == []
