"""With JavaScript, "Continue" posts the step's form in the background and the answer, the next
step's whole page, replaces the frame's page: one round trip, no page load, and everything a page
load gave (the address, the history, the focus, the shop's "ready") still there."""
from __future__ import annotations

import pytest

from .conftest import Held
from .test_kyc_e2e import quick_kyc  # noqa: F401  (a fixture)
from .test_onramp_e2e import ADDRESS, choose, kenyan_mpesa_past_the_phone, settle

pytestmark = pytest.mark.browser


def documents_loaded(page, shop) -> list[str]:
    """The pages the checkout's frame loads from now on (navigations, not htmx requests)."""
    loaded: list[str] = []
    page.on("request", lambda r: loaded.append(r.url)
            if r.is_navigation_request() and r.url.startswith(shop.checkout_origin) else None)
    return loaded


def test_continue_moves_on_in_place_with_the_address_focus_and_ready_of_a_new_page(page, shop):
    frame = shop.open(page)
    choose(frame, country="NG", channel="bank", amount="5000")
    settle(frame)
    loaded = documents_loaded(page, shop)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    readies = sum(1 for e in shop.events(page) if e["type"] == "ready")

    shop.click(page, "button", "Continue")
    frame.wait_for_selector("input[name=address]")
    assert loaded == [] and len(posts) == 1 and posts[0].endswith("/choose")
    assert frame.url.endswith("/wallet")
    assert frame.title() == "Your wallet"
    # As on a page load: the new step's heading has the focus, the shop heard "ready".
    frame.wait_for_function("() => document.activeElement && document.activeElement.matches('h1')")
    page.wait_for_function(
        "(n) => (window.checkoutEvents || []).filter((e) => e.type === 'ready').length > n",
        arg=readies)
    # And the funnel's event for the shop's own figures (checkout.views.funnel).
    page.wait_for_function("() => (window.checkoutEvents || []).some((e) => "
                           "e.type === 'step-viewed' && e.flow === 'onramp' && e.step === 'wallet')")

    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill("ada@example.com")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("text=Review your order")
    assert loaded == [] and frame.url.endswith("/review")

    # A reload loads the page at the address shown; Back loads the step before, as it is saved.
    frame.evaluate("location.reload()")
    frame = shop.frame(page)
    frame.wait_for_selector("text=Review your order")
    page.evaluate("history.back()")
    frame = shop.frame(page)
    frame.wait_for_selector("input[name=address]")
    assert frame.url.endswith("/wallet")
    assert frame.locator("input[name=address]").input_value() == ADDRESS
    # Back once more: the amount step, at its own address (the first page was shown at the
    # session's, which showed the wallet again).
    page.evaluate("history.back()")
    frame = shop.frame(page)
    frame.wait_for_selector("input[name=amount]")
    assert frame.url.endswith("/choose")
    assert frame.locator("input[name=amount]").input_value() == "5000"


def test_a_refused_continue_shows_its_messages_in_place_focused_on_the_field(page, shop):
    frame = shop.open(page)
    choose(frame, country="NG", channel="bank", amount="5000")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("input[name=address]")
    loaded = documents_loaded(page, shop)
    length = page.evaluate("history.length")
    frame.locator("input[name=address]").fill("0x123")
    frame.locator("input[name=email]").fill("ada@example.com")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("#field-address-error")
    frame.wait_for_function(
        "() => document.activeElement && document.activeElement.name === 'address'")
    assert loaded == [] and frame.url.endswith("/wallet")
    assert page.evaluate("history.length") == length        # no entry for Back to repeat


PRESS_TWICE = """(path) => {
  const button = [...document.querySelectorAll('button[type=submit]')]
    .find(b => b.offsetParent !== null && b.form && b.form.action.endsWith(path));
  button.click();
  button.click();
}"""


def posts_to(page, path: str) -> list[str]:
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url)
            if r.method == "POST" and r.url.endswith(path) else None)
    return posts


def test_a_step_whose_page_has_a_script_of_its_own_comes_in_place_and_the_script_starts(
        page, shop):
    """A sale's payout details come after the amount, on a page with filter.js, which the
    amount's page does not load: the page comes in place all the same, the file is loaded, and
    its bank list's filter box filters."""
    frame = shop.open(page, "offramp", countryIsoCode="NG", paymentChannel="bank",
                      network="POLYGON", asset="USDC", currency="local")
    frame.locator("input[name=amount]").fill("20000")
    frame.wait_for_selector("#quote [data-testid=receive-amount]")
    settle(frame)
    assert frame.locator("head script[src*='filter.js']").count() == 0
    loaded = documents_loaded(page, shop)
    posts = posts_to(page, "/choose")
    shop.steady(page).evaluate(PRESS_TWICE, "/choose")
    frame.wait_for_selector("select[name=bankCode]")
    frame.locator("input[data-checkout-filter]").fill("gtb")
    frame.wait_for_function("() => document.querySelectorAll("
                            "'select[name=bankCode] option:not([hidden])').length < 5")
    assert frame.locator("select[name=bankCode] option:not([hidden])", has_text="Guaranty").count()
    assert loaded == [] and len(posts) == 1, (loaded, posts)
    assert frame.locator("head script[src*='filter.js']").count() == 1


def test_the_bank_filter_is_there_before_its_script_and_nothing_moves_when_it_comes(page, shop):
    """On a slow network filter.js comes in after the payout page is drawn. Its filter box is
    there from the start, so nothing under it moves under the user's thumb when the file comes;
    what was typed in the box meanwhile filters the list then."""
    held = Held(page.context, "**/filter.js")
    frame = shop.open(page, "offramp", countryIsoCode="NG", paymentChannel="bank",
                      network="POLYGON", asset="USDC", currency="local")
    frame.locator("input[name=amount]").fill("20000")
    frame.wait_for_selector("#quote [data-testid=receive-amount]")
    settle(frame)
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("select[name=bankCode]")
    script = held.first(page)
    where = "() => document.querySelector('select[name=bankCode]').getBoundingClientRect().top"
    top = frame.evaluate(where)
    frame.locator("input[data-checkout-filter]").fill("gtb")

    script.continue_()
    frame.wait_for_function("() => document.querySelectorAll("
                            "'select[name=bankCode] option:not([hidden])').length < 5")
    assert frame.locator("select[name=bankCode] option:not([hidden])", has_text="Guaranty").count()
    assert frame.evaluate(where) == top


def test_continue_pressed_as_a_choice_is_being_fetched_is_sent(page, shop):
    """The coin changed (the step is asked again with the choices) and Continue pressed at once:
    the form is sent with the new coin, not queued behind the choice and dropped with the page
    the choice's answer replaces."""
    frame = shop.open(page)
    choose(frame, country="NG", channel="bank", amount="5000")
    settle(frame)
    posts = posts_to(page, "/choose")
    shop.steady(page).evaluate("""() => {
      const asset = document.querySelector('select[name=asset]');
      asset.value = 'USDC';
      asset.dispatchEvent(new Event('change', {bubbles: true}));
      [...document.querySelectorAll('button[type=submit]')]
        .find(b => b.offsetParent !== null && b.form.action.endsWith('/choose')).click();
    }""")
    frame.wait_for_selector("input[name=address]", timeout=15_000)
    assert len(posts) == 1, posts


def test_an_error_answering_continue_shows_the_error_page_where_the_user_was(page, shop):
    """A refusal before the step's view (here the page's anti-forgery token is not the session's)
    is the friendly error page in the frame, never a press that does nothing."""
    frame = shop.open(page)
    choose(frame, country="NG", channel="bank", amount="5000")
    settle(frame)
    frame.evaluate("""() => {
      document.body.setAttribute('hx-headers', '{"X-Checkout-CSRF": "forged"}');
      document.querySelector('input[name=csrf_token]').value = 'forged';
    }""")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector(".notice--error[role=alert]")
    assert frame.url.endswith("/choose")    # the step's own address, where it was shown
    assert frame.locator("a", has_text="Try again").count() == 1


def test_the_identity_step_s_send_moves_on_in_place_too(page, shop, quick_kyc):
    """Kenya, basic: a document number, no photo. "Send" posts in the background (multipart, as
    the photos need) and the waiting page comes in place, at its own address."""
    frame = kenyan_mpesa_past_the_phone(shop, page, amount=8000,
                                        email="kyc-in-place@example.com", phone="0712000977")
    frame.wait_for_selector("input[name=document][value=NATIONAL_ID]")
    frame.locator("input[name=document][value=NATIONAL_ID]").check()
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("input[name=id_number]")
    # "Pending": the sandbox holds the document under review (its magic last name).
    for name, value in (("first_name", "Wanjiru"), ("last_name", "Pending"),
                        ("dob", "1990-05-17"), ("id_number", "12345678")):
        frame.locator(f"[name={name}]").fill(value)
    loaded = documents_loaded(page, shop)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    shop.click(page, "button", "Send for verification")
    frame.wait_for_selector("[data-testid=kyc-pending]")
    assert loaded == [] and len(posts) == 1 and posts[0].endswith("/kyc")
    assert frame.url.endswith("/kyc")
