"""A whole on-ramp order with a keyboard alone: Tab, arrow keys, typing and Enter, never a click.

Starts on the merchant's page (the checkout in a cross-site iframe), so focus has to travel from the
parent page into the frame, as it does for a keyboard user. Every focused control must show a
visible focus indicator. Once, in English: what a key does does not change with the language
(that every page is said in the others, the view tests check: tests/views/test_one_language.py).
"""
from __future__ import annotations

import pytest

from .conftest import catalogue, screenshot
from .test_onramp_e2e import ADDRESS, settle

pytestmark = pytest.mark.browser

# True when the frame has the keyboard focus and its focused element satisfies ``test``.
FOCUSED = """(test) => {
  const el = document.activeElement;
  if (!document.hasFocus() || !el || el === document.body) return false;
  return new Function("el", "return " + test)(el);
}"""

# The focused element's visible focus indicator: an outline or a box shadow.
FOCUS_VISIBLE = """() => {
  const style = getComputedStyle(document.activeElement);
  return (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0)
      || style.boxShadow !== "none";
}"""


def tab_to(page, frame, test: str, *, limit: int = 60) -> None:
    """Press Tab until the frame's focused element satisfies the JavaScript ``test`` (over el)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if frame.evaluate(FOCUSED, test):
            assert frame.evaluate(FOCUS_VISIBLE), f"no visible focus on {test}"
            return
    raise AssertionError(f"Tab never reached {test}")


def button(text: str) -> str:
    return f"el.matches('button, [role=button]') && el.textContent.includes({text!r})"


def test_keyboard_alone_completes_an_order(page, shop):
    language = "en"
    t = catalogue(language).gettext      # the names the user reads
    frame = shop.open(page, countryIsoCode="NG", network="CELO", asset="USDT",
                      currency="local", amount=5000, locale=language)
    assert frame.evaluate("() => document.documentElement.lang") == language

    # The payment methods are radios, each with how it works under it: Tab reaches the group,
    # Space chooses the focused one (the first, bank transfer).
    tab_to(page, frame, "el.matches('input[name=paymentChannel]')")
    assert frame.evaluate("() => document.activeElement.value") == "bank"
    page.keyboard.press("Space")
    settle(frame)
    frame.wait_for_selector("input[name=paymentChannel][value=bank]:checked")
    assert frame.evaluate("() => document.activeElement.value") == "bank"
    frame.wait_for_selector("#quote [data-testid=receive-amount]")
    settle(frame)

    tab_to(page, frame, button(t("Continue")))
    page.keyboard.press("Enter")
    frame.wait_for_selector("input[name=address]")

    tab_to(page, frame, "el.matches('input[name=address]')")
    page.keyboard.type(ADDRESS)
    tab_to(page, frame, "el.matches('input[name=email]')")
    page.keyboard.type("ada@example.com")
    page.keyboard.press("Enter")            # submits the form, as for any keyboard user
    frame.wait_for_selector(f"h1:text-is('{t('Review your order')}')")
    screenshot(page, f"keyboard-1-review-{language}")

    tab_to(page, frame, button(t("Confirm and pay")))
    # Playwright does not wait for a navigation in a frame: wait for the page Enter loads.
    with frame.expect_navigation():
        page.keyboard.press("Enter")
    frame.wait_for_selector("[data-transfer-type]")
    created = shop.wait_for_event(page, "order-created")
    screenshot(page, f"keyboard-2-pay-{language}")

    tab_to(page, frame, button(t("I have paid")))
    with frame.expect_navigation():
        page.keyboard.press("Enter")
    shop.advance(page, 60)
    completed = shop.wait_for_event(page, "completed")
    assert completed["order"]["id"] == created["order"]["id"]
    screenshot(page, f"keyboard-3-complete-{language}")


@pytest.mark.parametrize(("name", "typed", "wanted"), [
    ("network", "celo", "CELO"), ("network", "pol", "POLYGON"), ("asset", "usdt", "USDT")])
def test_typing_a_name_on_a_closed_select_picks_it(page, shop, name, typed, wanted):
    """Type-ahead on a focused select: Chromium picks (and fires "change" for) the first option
    matching each prefix typed so far. A re-render on each of those changes would replace the
    select under the typing and start its search again from the next letter ("celo" picked
    Optimism): the step is asked again once the choice is made, with what the user typed."""
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", currency="local")
    settle(frame)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/choose?" in r.url else None)
    frame.locator(f"select[name={name}]").focus()
    # The step comes back for the choice once the typing pauses (as type-ahead itself forgets).
    with page.expect_response(lambda r: "/choose?" in r.url, timeout=5_000):
        page.keyboard.type(typed, delay=120)
    settle(frame)
    assert frame.locator(f"select[name={name}]").input_value() == wanted
    assert frame.evaluate("() => document.activeElement.name") == name
    assert len(asked) == 1, asked
