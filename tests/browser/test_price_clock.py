"""The review's price clock in a browser: the time left counts down, and when it reaches zero the
review asks for a new price by itself, so "Confirm" is always pressed on a price shown."""
from __future__ import annotations

import pytest

from .test_onramp_e2e import choose, wallet_and_review

pytestmark = pytest.mark.browser


def open_review(page, shop):
    """A Nigerian bank purchase, walked to its review; its frame."""
    frame = shop.open(page)
    choose(frame, country="NG", channel="bank", amount="5000")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("input[name=address]")
    wallet_and_review(shop, page, frame)
    return frame


def test_the_price_counts_down_and_is_asked_again_when_it_lapses(page, shop, quote_max_age):
    quote_max_age(3)                    # seconds of the checkout's clock: the browser counts them
    frame = open_review(page, shop)
    first = frame.locator("input[name=quote_id]").get_attribute("value")
    # deposit.js came with the review (in place): the time left shows, in minutes and seconds.
    frame.wait_for_selector(
        "[data-countdown-to]:visible [data-countdown-text]:text-matches('^00:0[0-3]$')")
    assert frame.locator("[data-testid=price-holds]").inner_text().startswith(
        "This price holds until ")
    # A keyboard user waits on "Confirm and pay".
    frame.locator('form[action$="/create"] button[type=submit]').focus()
    # The price lapses after 3 s here: the review comes back with a new price.
    frame.wait_for_function(
        "(first) => { const q = document.querySelector('input[name=quote_id]');"
        " return q && q.value && q.value !== first; }", arg=first, timeout=15_000)
    frame.wait_for_selector("[data-countdown-to]:not([data-countdown-expired]):visible")
    # The focus stayed on "Confirm and pay" (it dropped to the page's body), and the new price
    # was said in the page's live region (nothing was).
    frame.wait_for_function("() => document.activeElement && document.activeElement.matches("
                            "'form[action$=\"/create\"] button[type=submit]')")
    said = frame.locator("#checkout-announcer")
    said.wait_for(state="attached")
    frame.wait_for_function("() => document.getElementById('checkout-announcer').textContent"
                            ".startsWith('The price was renewed: You pay ')")
    assert said.inner_text().endswith("USDT.") and "You get" in said.inner_text()
    assert frame.locator("[data-checkout-announce]").count() == 0


def test_once_confirm_is_pressed_the_clock_asks_nothing_more(page, shop):
    """The price clock reaching zero as "Confirm" is on its way: its request for the review
    would find the order made and send the frame to it (HX-Redirect), cutting short the order
    page the confirm itself opens, whose first showing carries order-created (lost, in loaded
    runs). Once a form is leaving, the page starts no request."""
    open_review(page, shop)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url)
            if r.method == "GET" and r.resource_type in ("xhr", "fetch") else None)
    shop.steady(page).evaluate("""() => {
      document.querySelector('form[action$="/create"] button[type=submit]').click();
      document.querySelector('[data-countdown-to]').dispatchEvent(
        new CustomEvent('countdown-expired', {bubbles: true}));
    }""")
    created = shop.wait_for_event(page, "order-created")
    assert created["order"]["id"]
    shop.frame(page).wait_for_selector("[data-transfer-type]")
    assert [url for url in asked if url.endswith("/review")] == [], asked
