"""On a slow connection (400 kbit/s, 600 ms each way, as a phone on a weak signal), in the
cross-site frame: what the user types while a part of the page comes back is not lost, they see
that something is loading, and pressing a button twice sends one form."""
from __future__ import annotations

import pytest

from .test_onramp_e2e import settle

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 780}
SLOW = {"offline": False, "latency": 600, "downloadThroughput": 50_000,
        "uploadThroughput": 50_000}


def throttle(page, frame) -> None:
    """The cross-site frame runs in a process of its own (site isolation): it is throttled
    through its own DevTools session, the shop's page through the page's."""
    for target in (page, frame):
        cdp = page.context.new_cdp_session(target)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", SLOW)


def test_typing_during_a_refresh_is_kept_the_price_shows_it_is_loading_and_one_send(
        page, shop, short_quotes):
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", currency="local")
    settle(frame)
    throttle(page, frame)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(f"{r.method} {r.url}"))

    # The network changes: the form is asked again with the draft (an htmx GET, slow now). The
    # user goes on typing the amount meanwhile; the form comes back and the typing is still there.
    amount = frame.locator("input[name=amount]")
    frame.locator("select[name=network]").select_option("CELO")
    frame.wait_for_function("() => document.querySelector('.htmx-request')")
    amount.press_sequentially("5000", delay=50)
    settle(frame)
    frame.locator("select[name=asset]").select_option("USDT")   # one more round trip
    frame.wait_for_function("() => document.querySelector('.htmx-request')")
    amount.press_sequentially("0", delay=50)
    settle(frame)
    assert frame.locator("input[name=amount]").input_value() == "50000"

    # While the price is fetched, the page says so; then the price for what was typed.
    frame.locator("input[name=amount]").fill("5000")
    frame.wait_for_selector("#quote-loading", state="visible")
    frame.wait_for_selector("#quote [data-testid=receive-amount]", timeout=30_000)
    frame.wait_for_selector("#quote-loading", state="hidden")

    # Two presses of Continue, the second while the first is on its way: one form sent, and the
    # form shows it is on its way. (The form is sent to a new window here, so that this page
    # stays to be pressed again and looked at.)
    frame = shop.steady(page)
    posts: list[str] = []
    page.context.on("request", lambda r: posts.append(r.url)
                    if r.method == "POST" and r.url.endswith("/choose") else None)
    with page.context.expect_page() as opened:
        busy = frame.evaluate("""() => {
          const button = [...document.querySelectorAll('button[type=submit]')]
            .find(b => b.offsetParent !== null && b.form && b.form.action.endsWith('/choose'));
          button.form.target = '_blank';
          button.click();
          const busy = button.form.getAttribute('aria-busy');
          button.click();
          return busy;
        }""")
    assert busy == "true"
    # Both presses happened before the first answer came back: had the second been sent, its
    # request would have left by the time the first window has its page.
    opened.value.wait_for_load_state()
    assert len(posts) == 1, posts
