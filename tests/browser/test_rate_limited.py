"""A shopper who meets a rate limit sees why and when to try again in the checkout's frame, in
their language: never a blank frame, never a price that silently stops updating."""
from __future__ import annotations

import re

import pytest

from .conftest import screenshot
from .test_onramp_e2e import settle

pytestmark = pytest.mark.browser


def test_the_live_price_says_when_to_try_again(page, shop, rate_limits):
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", network="CELO",
                      asset="USDT", currency="local")
    settle(frame)
    rate_limits(quote_per_session="2/minute")
    amount = frame.locator("input[name=amount]")
    statuses = []
    for typed in ("5000", "6000", "7000"):
        with page.expect_response(lambda r, typed=typed: "/quote?" in r.url
                                  and f"amount={typed}" in r.url) as answer:
            amount.fill(typed)
        statuses.append(answer.value.status)
        settle(frame)
    assert statuses == [200, 200, 429]
    message = frame.locator("#quote-message")
    assert re.fullmatch(r"There have been too many requests from this connection in a short "
                        r"time\. Try again in \d+ seconds?\.", message.inner_text())
    assert not frame.locator("#quote [data-testid=receive-amount]").count()
    # Still described by it, and the field keeps what was typed.
    assert "quote-message" in amount.get_attribute("aria-describedby")
    assert amount.input_value() == "7000"
    screenshot(page, "rate-limited-live-price")


def test_a_limited_page_is_shown_in_the_frame_in_the_users_language(page, shop, rate_limits):
    frame = shop.open(page, locale="fr")
    rate_limits(page_per_session="1/minute")
    with frame.expect_navigation():
        frame.evaluate("() => location.reload()")
    with frame.expect_navigation():
        frame.evaluate("() => location.reload()")
    frame = shop.steady(page)
    heading = frame.locator("h1")
    assert heading.inner_text() == "Veuillez patienter un instant"
    assert re.search(r"Réessayez dans \d+ secondes?\.", frame.locator("main").inner_text())
    assert frame.evaluate("() => document.documentElement.lang") == "fr"
    assert frame.get_by_role("link", name="Réessayer").is_visible()
    screenshot(page, "rate-limited-page-fr")
