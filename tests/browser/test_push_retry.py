"""The wait before another payment request may be sent to the phone (stk_push): while it counts
down the button is disabled, and when it reaches zero the button can be pressed at once. The
countdown never stands at a red "00:00" beside a button that still cannot be pressed."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from .test_offramp_e2e import sandbox_orders
from .test_onramp_e2e import confirm_order, kenyan_mpesa_past_the_phone, settle

pytestmark = pytest.mark.browser

WAIT = 4.0      # seconds left to wait when the page is shown

# Every 50 ms, what the user sees of the wait and the button (the block is re-rendered by htmx,
# so both are looked up each time).
WATCH = """() => {
  window.__seen = [];
  window.setInterval(() => {
    const button = [...document.querySelectorAll('button')]
      .find(b => b.textContent.includes('Send the request again'));
    const countdown = document.querySelector('[data-countdown-text]');
    const shown = countdown && countdown.offsetParent !== null ? countdown.textContent : null;
    const wait = countdown && countdown.closest('[data-countdown-to]');
    window.__seen.push({shown, disabled: button ? button.disabled : null,
                        colour: shown !== null ? getComputedStyle(wait).color : null});
  }, 50);
}"""


def test_the_retry_button_is_ready_when_its_countdown_ends(page, shop, monkeypatch):
    orders = sandbox_orders(shop)
    monkeypatch.setattr(orders, "default_outcome", "expire")     # the phone never approves
    frame = kenyan_mpesa_past_the_phone(shop, page, amount=1000, email="push@example.com",
                                        phone="0712345678")
    frame.wait_for_selector("text=Review your order")
    confirm_order(shop, page, frame)
    order_id = shop.wait_for_event(page, "order-created")["order"]["id"]
    with orders.lock:
        # WAIT seconds of the browser's own time (its countdown is what is tested).
        orders.get(order_id, "onramp").transfer.next_push_at = \
            datetime.now(UTC) + timedelta(seconds=WAIT)
    with frame.expect_navigation():
        frame.goto(frame.url)
    frame.wait_for_selector("[data-countdown-text]:visible")
    frame.evaluate(WATCH)
    # Until the button is enabled, and as the page is re-rendered from the server when the wait
    # is over (without JavaScript it would reload itself then: the same request).
    with page.expect_response(lambda r: r.url == frame.url and r.request.method == "GET",
                              timeout=(WAIT + 10) * 1000):
        frame.wait_for_function(
            "() => [...document.querySelectorAll('button')].some(b =>"
            " b.textContent.includes('Send the request again') && !b.disabled)",
            timeout=(WAIT + 10) * 1000)
    settle(frame)
    looked = frame.evaluate("() => window.__seen.length")
    frame.wait_for_function("(n) => window.__seen.length > n + 2", arg=looked)
    seen = frame.evaluate("() => window.__seen")
    assert any(s["shown"] and s["disabled"] for s in seen)      # it did count down
    stuck = [s for s in seen if s["shown"] == "00:00" and s["disabled"]]
    assert stuck == [], f"{len(stuck)} views of 00:00 beside a disabled button: {stuck[:3]}"
    # Nothing about a wait that ends is an error: never in the error colour.
    error = frame.evaluate("() => getComputedStyle(document.documentElement)"
                           ".getPropertyValue('--error')")
    assert error.strip()
    red = frame.evaluate("""(hex) => { const probe = document.createElement('p');
      probe.style.color = hex; document.body.append(probe);
      const c = getComputedStyle(probe).color; probe.remove(); return c; }""", error.strip())
    assert [s for s in seen if s["colour"] == red] == []
    assert seen[-1]["disabled"] is False
