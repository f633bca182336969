"""The review's price clock: until when the price holds, as a time and (with JavaScript) the time
left; when it lapses the review asks for a new price before anything is confirmed."""
from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from checkout.journey import clock, quotes
from checkout.state import get_state

from .conftest import journey_settings


def amount_in(text: str) -> Decimal:
    """The number in a formatted amount ("NGN 5,250.00")."""
    return Decimal(re.sub(r"[^0-9.]", "", text))


def clock_of(html: str) -> tuple[str, datetime, str]:
    """The clock's words, its deadline, and what it asks for when the deadline passes."""
    said = re.search(r'data-testid="price-holds">([^<]+)</p>', html)
    deadline = re.search(r'data-countdown-to="([^"]+)"', html)
    asks = re.search(r'<div class="price-clock" id="price-clock" hx-get="([^"]+)" '
                     r'hx-trigger="countdown-expired"', html)
    assert said and deadline and asks, html[:3000]
    return said.group(1), datetime.fromisoformat(deadline.group(1)), asks.group(1)


def test_the_review_says_until_when_its_price_holds(app, flow):
    flow.start()
    review = flow.to_review().get_data(as_text=True)
    said, deadline, asks = clock_of(review)
    record = flow.session.quote
    max_age = app.config["CHECKOUT_QUOTE_MAX_AGE"]
    assert deadline == datetime.fromtimestamp(record["fetched_at"] + max_age, UTC)
    assert said.startswith("This price holds until ") and str(deadline.year) in said
    assert asks == f"{flow.base}/review"
    assert "deposit.js" in review          # the time left counts down with JavaScript


# The sandbox's real clock sped up (the demo's runs at 0.2): what the pace changes is the test.
@pytest.mark.parametrize("sandbox_config", [{"SANDBOX_CLOCK": "real", "SANDBOX_TIME_SCALE": 0.2},
                                            {"SANDBOX_CLOCK": "real", "SANDBOX_TIME_SCALE": 0.01}])
def test_the_clock_ends_before_the_quote_itself_whatever_the_sandboxs_pace(app, flow):
    """The demo's sandbox runs five times as fast as the service: its quotes live two minutes,
    and a clock of four showed minutes left while "Confirm" answered "The price expired". The
    price holds for CHECKOUT_QUOTE_MAX_AGE of the sandbox's time: well before the quote ends."""
    from checkout.sandbox.state import current

    flow.start()
    _said, deadline, _asks = clock_of(flow.to_review().get_data(as_text=True))
    record = flow.session.quote
    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        expires = current().orders.peek_quote(record["id"], "onramp").expires_at
    assert deadline < expires
    assert deadline.timestamp() - record["fetched_at"] == pytest.approx(
        app.config["CHECKOUT_QUOTE_MAX_AGE"] * sandbox.config["SANDBOX_TIME_SCALE"])


def test_a_lapsed_price_is_asked_again_and_the_clock_starts_again(app, flow, monkeypatch):
    flow.start()
    flow.to_review()
    first = flow.session.quote
    lapsed = first["fetched_at"] + app.config["CHECKOUT_QUOTE_MAX_AGE"] + 1
    monkeypatch.setattr(clock, "now", lambda: lapsed)
    # What the clock asks for when it reaches zero: the review's part of the page, priced anew.
    asked = {"HX-Request": "true", "HX-Trigger": "price-clock"}
    again = flow.get("/review", headers=asked).get_data(as_text=True)
    assert "<html" not in again and 'id="step"' in again
    # Said to a screen reader once (checkout.js moves it to the live region): the new price.
    said = re.search(r"<p hidden data-checkout-announce>([^<]+)</p>", again)
    assert said and said.group(1).startswith("The price was renewed: You pay ₦5,000.00")
    assert "; You get " in said.group(1) and said.group(1).endswith("\xa0USDT.")
    # Asked again before it lapses: nothing renewed, nothing to say.
    assert "data-checkout-announce" not in flow.get("/review", headers=asked).get_data(
        as_text=True)
    renewed = flow.session.quote
    assert renewed["fetched_at"] == lapsed and renewed["id"] != first["id"]
    _said, deadline, _asks = clock_of(again)
    with app.app_context():
        onramp = get_state().flows["onramp"]
    assert deadline == quotes.holds_until(renewed, onramp) and deadline.timestamp() > lapsed
    assert f'name="quote_id" value="{renewed["id"]}"' in again


def test_a_renewed_price_shows_each_amount_that_moved_before_and_now(app, flow, monkeypatch):
    """The price lapsed before "Confirm", and the new one asks more: the review says so, the old
    and the new amount side by side, before anything can be confirmed."""
    flow.start()
    review = flow.to_review()
    before = flow.session.quote["cashout"]["localCurrencyAmount"]
    with app.app_context():
        onramp = get_state().flows["onramp"]
    real = onramp.request_quote

    def dearer(params):
        record = real(params)
        cashout = dict(record["cashout"])
        cashout["localCurrencyAmount"] = str(Decimal(str(cashout["localCurrencyAmount"])) + 250)
        return {**record, "cashout": cashout}

    monkeypatch.setattr(onramp, "request_quote", dearer)
    journey_settings(app, quote_max_age=0)
    page = flow.landed(flow.create(review), "review").get_data(as_text=True)
    table = re.search(r'<table class="price-change" data-testid="price-change">(.*?)</table>',
                      page, re.S)
    assert table, page[:4000]
    rows = re.findall(r'<tr><th scope="row">([^<]+)</th><td>([^<]+)</td><td[^>]*>([^<]+)</td>',
                      table.group(1))
    assert [row[0] for row in rows] == ["You pay"]
    (_label, old, new), = rows
    assert amount_in(old) == Decimal(str(before))
    assert amount_in(new) == Decimal(str(before)) + 250
    assert flow.session.order_id is None
    # Said once: the review's next showing is the price alone.
    assert "price-change" not in flow.get("/review").get_data(as_text=True)
