"""The review's price clock: until when the price holds, as a time and (with JavaScript) the time
left; when it lapses the review asks for a new price before anything is confirmed."""
from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal

from checkout.journey import clock, quotes


def amount_in(text: str) -> Decimal:
    """The number in a formatted amount ("NGN 5,250.00")."""
    return Decimal(re.sub(r"[^0-9.]", "", text))


def clock_of(html: str) -> tuple[str, datetime, str]:
    """The clock's words, its deadline, and what it asks for when the deadline passes."""
    said = re.search(r'data-testid="price-holds">([^<]+)</p>', html)
    deadline = re.search(r'data-countdown-to="([^"]+)"', html)
    asks = re.search(r'<div class="price-clock" hx-get="([^"]+)" hx-trigger="countdown-expired"',
                     html)
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


def test_a_lapsed_price_is_asked_again_and_the_clock_starts_again(app, flow, monkeypatch):
    flow.start()
    flow.to_review()
    first = flow.session.quote
    lapsed = first["fetched_at"] + app.config["CHECKOUT_QUOTE_MAX_AGE"] + 1
    monkeypatch.setattr(clock, "now", lambda: lapsed)
    # What the clock asks for when it reaches zero: the review's part of the page, priced anew.
    again = flow.get("/review", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "<html" not in again and 'id="step"' in again
    renewed = flow.session.quote
    assert renewed["fetched_at"] == lapsed and renewed["id"] != first["id"]
    _said, deadline, _asks = clock_of(again)
    assert deadline == quotes.holds_until(renewed) and deadline.timestamp() > lapsed
    assert f'name="quote_id" value="{renewed["id"]}"' in again


def test_a_renewed_price_shows_each_amount_that_moved_before_and_now(app, flow, monkeypatch):
    """The price lapsed before "Confirm", and the new one asks more: the review says so, the old
    and the new amount side by side, before anything can be confirmed."""
    from checkout.state import get_state

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
    app.config["CHECKOUT_QUOTE_MAX_AGE"] = 0
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
