"""A 360 px phone, in the merchant's cross-site iframe: nothing scrolls sideways, and the focus
survives every htmx swap and every page that comes back with errors."""
from __future__ import annotations

import pytest

from .conftest import LANGUAGES, catalogue, screenshot
from .test_onramp_e2e import ADDRESS, confirm_order, settle, wallet_and_review

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}

# How far the frame's page is wider than the frame (0: no sideways scrolling).
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
# How many lines the text of an element takes (one rectangle per line box it is laid out on).
TEXT_LINES = """(element) => {
  const range = document.createRange();
  range.selectNodeContents(element);
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
}"""
FOCUSED = ("() => document.activeElement ? "
           "(document.activeElement.id || document.activeElement.tagName) : null")


def test_pay_page_with_the_resume_link_open_does_not_scroll_sideways(page, shop):
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", network="CELO",
                      asset="USDT", currency="local", amount=5000)
    # Every value of the amount step was given by the shop: the checkout opens at the wallet.
    frame.wait_for_selector("input[name=address]")
    wallet_and_review(shop, page, frame)
    frame = shop.steady(page)       # loaded and laid out (its stylesheet too), then measured
    assert frame.evaluate(OVERFLOW) == 0
    confirm_order(shop, page, frame)
    frame = shop.steady(page)
    frame.locator("summary", has_text="Continue on another device").click()
    frame.wait_for_selector("[data-testid=resume-url]")
    screenshot(page, "small-screen-pay-resume-open")
    assert frame.evaluate(OVERFLOW) == 0
    assert page.evaluate(OVERFLOW) == 0


def test_changing_the_amount_currency_by_keyboard_keeps_the_focus(page, shop):
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", network="CELO",
                      asset="USDT")
    frame.focus("#field-currency-local")
    page.keyboard.press("ArrowDown")        # selects "USDT": the form is re-rendered by htmx
    frame.wait_for_selector("#field-currency-crypto:checked")
    settle(frame)
    assert frame.evaluate(FOCUSED) == "field-currency-crypto"
    assert "You get (USDT)" in frame.locator("label[for=field-amount]").inner_text()
    page.keyboard.press("Tab")
    assert frame.evaluate(FOCUSED) == "field-amount"


def test_a_page_that_comes_back_with_errors_focuses_the_first_invalid_field(page, shop):
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", network="CELO",
                      asset="USDT", currency="local", amount=5000)
    # Every value of the amount step was given by the shop: the checkout opens at the wallet.
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=email]").fill("ada@example.com")
    shop.click(page, "button", "Continue")         # no address
    frame.wait_for_selector(".field--invalid")
    frame.wait_for_function(
        "() => document.activeElement && document.activeElement.id === 'field-address'")
    assert frame.locator("#field-address").get_attribute("aria-invalid") == "true"
    screenshot(page, "small-screen-wallet-error-focused")


def test_an_unanswered_choice_of_radio_buttons_above_the_other_errors_gets_the_focus(page, shop):
    """Radio buttons have no aria-invalid: their group's error still comes first when it is
    first on the page ("How you pay" above "Network")."""
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG")
    frame.wait_for_selector("input[name=paymentChannel]", state="attached")
    shop.click_and_load(page, "button", "Continue")        # nothing chosen
    frame.wait_for_selector("#field-paymentChannel-wrap.field--invalid")
    assert frame.locator("#field-network").get_attribute("aria-invalid") == "true"
    frame.wait_for_function("() => document.activeElement && "
                            "document.activeElement.name === 'paymentChannel'")


def test_the_providers_payment_link_goes_away_once_the_payment_is_seen(page, context, shop):
    """A status page left open while the user pays elsewhere must not keep inviting a payment."""
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="GH", paymentChannel="bank", network="CELO",
                      asset="USDT", currency="local", amount=100)
    # Every value of the amount step was given by the shop: the checkout opens at the wallet.
    frame.wait_for_selector("input[name=address]")
    wallet_and_review(shop, page, frame)
    confirm_order(shop, page, frame)
    frame = shop.steady(page)
    payment_url = frame.get_by_role("link", name="Continue to the payment page").get_attribute("href")

    # The framed status page, rendered while the order awaits payment: the provider's link is there.
    frame.goto(frame.url.rsplit("/", 1)[0] + "/status")
    frame.wait_for_selector("[data-status=deposit_awaiting]")
    provider = frame.get_by_role("link", name="Continue on our payment partner’s page")
    assert provider.is_visible()

    # The user pays on the provider's page in another tab; the status block's polls move on.
    other = context.new_page()
    other.goto(payment_url)
    other.get_by_role("button", name="Pay").click()
    # Close only once the return page has loaded: a close that races a navigation's commit can
    # hang Chromium's page close forever (microsoft/playwright#42366, #41900).
    other.wait_for_url("**/checkout/o/*")
    other.wait_for_selector("[data-status]")
    other.close()
    shop.advance(page, 60)
    frame.wait_for_selector("[data-status=payout_successful]")
    # Still in the page (rendered before the payment), but hidden by checkout.css.
    assert frame.locator(".resume-provider").count() == 1
    assert not frame.locator(".resume-provider").is_visible() and provider.count() == 0
    screenshot(page, "small-screen-status-paid-no-provider-link")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_order_reference_stays_whole_on_one_line_with_its_copy_button(page, shop, language):
    """Read out to support character by character: never one character left beside "Copy"
    (whose label is longer in French), nor pushed sideways out of the frame."""
    _ = catalogue(language).gettext
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", network="CELO",
                      asset="USDT", currency="local", amount=5000, locale=language)
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill("ada@example.com")
    shop.click(page, "button", _("Continue"))
    frame.wait_for_selector(f"h1:text-is('{_('Review your order')}')")
    for _attempt in range(3):
        shop.click_and_load(page, "button", _("Confirm and pay"))
        frame.wait_for_selector("[data-transfer-type], .notice[role=alert]")
        if frame.locator("[data-transfer-type]").count():
            break
    for page_name in ("pay", "status"):
        if page_name == "status":
            frame.goto(frame.url.rsplit("/", 1)[0] + "/status")
        frame = shop.steady(page)
        reference = frame.locator("[data-testid=order-reference]")
        copy = frame.get_by_role("button", name=_("Copy the order reference"))
        assert len(reference.inner_text()) == 24
        assert reference.evaluate(TEXT_LINES) == 1, page_name
        # The button beside the whole reference or under it, never over it, and tappable.
        code, button = reference.bounding_box(), copy.bounding_box()
        assert button["x"] >= code["x"] + code["width"] or button["y"] >= code["y"] + code["height"]
        assert button["height"] >= 36
        assert frame.evaluate(OVERFLOW) == 0, page_name
        screenshot(page, f"small-screen-order-reference-{page_name}-{language}")
