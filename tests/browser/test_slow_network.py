"""On a slow connection (400 kbit/s, 600 ms each way, as a phone on a weak signal), in the
cross-site frame: what the user types while a part of the page comes back is not lost, they see
that something is loading, and pressing a button twice sends one form."""
from __future__ import annotations

import pytest

from .conftest import Held
from .test_onramp_e2e import ADDRESS, settle

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
        page, shop):
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
    frame.wait_for_selector("#quote [data-testid=receive-amount]")
    frame.wait_for_selector("#quote-loading", state="hidden")

    # Two presses of Continue, the second while the first is on its way: one form sent, and the
    # form shows it is on its way. (With JavaScript the form is posted in the background, so the
    # page stays to be pressed again and looked at until the next step replaces it.)
    frame = shop.steady(page)
    posts: list[str] = []
    page.context.on("request", lambda r: posts.append(r.url)
                    if r.method == "POST" and r.url.endswith("/choose") else None)
    busy = frame.evaluate("""() => {
      const button = [...document.querySelectorAll('button[type=submit]')]
        .find(b => b.offsetParent !== null && b.form && b.form.action.endsWith('/choose'));
      button.click();
      const busy = button.form.getAttribute('aria-busy');
      button.click();
      return busy;
    }""")
    assert busy == "true"
    # Both presses happened before the first answer came back: had the second been sent, its
    # request would have left by the time the next step is on screen.
    frame.wait_for_selector("input[name=address]")
    settle(frame)
    assert len(posts) == 1, posts


def test_a_choice_made_while_the_step_comes_back_is_kept(page, shop):
    """The coin changes (the step is asked again, slowly); before it comes back the user ticks
    "crypto". The answer that lands later must not undo the tick, nor the coin."""
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", network="CELO",
                      currency="local")
    settle(frame)
    throttle(page, frame)
    sent: list = []
    page.on("request", lambda request: sent.append(request))
    frame.locator("select[name=asset]").select_option("USDT")
    frame.wait_for_function("() => document.querySelector('.htmx-request')")
    frame.locator("#field-currency-crypto").check()
    settle(frame)
    for request in sent:                # anything still on its way lands
        answer = request.response()
        if answer is not None:
            answer.finished()
    settle(frame)
    assert frame.locator("select[name=asset]").input_value() == "USDT"
    assert frame.locator("#field-currency-crypto").is_checked()
    # The form came back for what the user sees: the amount is asked in USDT.
    assert "USDT" in frame.locator("label[for=field-amount]").inner_text()


def test_a_name_typed_on_a_select_while_the_step_comes_back_is_kept(page, shop):
    """A coin picked (the step asked again, slowly), then the network typed on the keyboard
    before the answer lands: the answer for the old choice does not replace the select under the
    typing, and the step comes back once for both choices."""
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", currency="local")
    settle(frame)
    throttle(page, frame)
    frame.locator("select[name=asset]").select_option("USDC")
    frame.wait_for_function("() => document.querySelector('.htmx-request')")
    frame.locator("select[name=network]").focus()
    # Type-ahead forgets after a second: the choice is made, and the step asked for both.
    with page.expect_response(lambda r: "/choose?" in r.url and "network=CELO" in r.url
                              and "asset=USDC" in r.url):
        page.keyboard.type("celo", delay=150)
    settle(frame)
    assert frame.locator("select[name=network]").input_value() == "CELO"
    assert frame.locator("select[name=asset]").input_value() == "USDC"
    assert frame.evaluate("() => document.activeElement.name") == "network"


def test_a_part_of_the_step_being_fetched_again_says_so(page, shop):
    """On a slow network a changed select shows that the step is being updated (a sign at the
    changed field, and aria-busy on the region that will be replaced), and stops once it is."""
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="NG", paymentChannel="bank", currency="local")
    settle(frame)
    throttle(page, frame)
    frame.locator("select[name=network]").select_option("CELO")
    busy = frame.evaluate("""() => {
      const step = document.getElementById('step');
      const field = document.getElementById('field-network-wrap');
      const label = field.querySelector('label');
      const sign = getComputedStyle(label, '::after');
      return {region: step.getAttribute('aria-busy'),
              field: field.classList.contains('htmx-request'),
              sign: sign.content !== 'none' && sign.display !== 'none' && sign.width !== '0px'};
    }""")
    assert busy == {"region": "true", "field": True, "sign": True}
    settle(frame)
    assert frame.evaluate("() => document.getElementById('step').getAttribute('aria-busy')") \
        is None
    assert frame.evaluate("""() => getComputedStyle(
      document.querySelector('#field-network-wrap label'), '::after').content""") == "none"


def test_a_press_before_the_page_has_finished_loading_still_sends_once(page, shop):
    """A page is usable from DOMContentLoaded, but its load event can come much later: an image
    still on its way (a merchant's logo, on a weak signal). A "Continue" pressed meanwhile is on
    its way when the load event comes, and a second press must still send nothing: the load
    event's pageshow is not a page back from the browser's cache."""
    held_image = Held(page, "**/held-image.png")
    held_post = Held(page, "**/wallet", method="POST")
    # As the checkout's own <img> would: the image is in the page before its scripts run.
    page.add_init_script("""document.addEventListener('readystatechange', () => {
      if (document.readyState !== 'interactive') return;
      const img = document.createElement('img');
      img.src = '/held-image.png';
      img.alt = '';
      document.body.appendChild(img);
    });""")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.goto(shop.launch_url(countryIsoCode="NG", paymentChannel="bank", network="CELO",
                              asset="USDT", currency="local", amount=5000),
              wait_until="domcontentloaded")
    page.wait_for_function("() => window.htmx && document.readyState === 'interactive'")
    page.locator("input[name=address]").fill(ADDRESS)
    page.locator("input[name=email]").fill("buyer@example.com")
    page.get_by_role("button", name="Continue").click()
    page.wait_for_function("() => document.querySelector('form[aria-busy=true]')")
    assert len(posts) == 1, posts

    # The image arrives: the page has loaded, with the form still on its way.
    held_image.first(page).fulfill(status=204)
    page.wait_for_function("() => document.readyState === 'complete'")
    # A second post would leave at once, before a request the page sends after the press.
    with page.expect_request("**/after-the-second-press"):
        page.evaluate("""() => { [...document.querySelectorAll('button[type=submit]')]
          .find((b) => b.form && b.form.action.endsWith('/wallet')).click();
          fetch('/after-the-second-press').catch(() => {}); }""")
    assert len(posts) == 1, posts

    held_post.first(page).continue_()
    page.wait_for_function("() => document.title === 'Review your order'")
