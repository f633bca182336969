"""The upstream's 429 ("too many requests with the merchant's key") is shown as our own limits are:
429 with the upstream's Retry-After, a sentence that says when to try again, and nothing asked of
the upstream again until then. Never mistaken for a "no" (a wrong code, a refused amount)."""
from __future__ import annotations

import re

import pytest

from checkout.state import get_state

from ..support.clock import Clock
from ..upstream_spy import UpstreamSpy
from .conftest import CORRIDORS
from .test_offramp import Sale

BEST_OFFER = "/api/onramp/best-offer"
BUSY = "Our payment partner is receiving too many requests right now."


@pytest.fixture
def spy(app) -> UpstreamSpy:
    return UpstreamSpy(app)


@pytest.fixture
def upstream_clock(app) -> Clock:
    """The client's wait list's clock: the upstream's wait passes when the test says so."""
    clock = Clock()
    with app.app_context():
        get_state().upstream.transport.waits.clock = clock
    return clock


def text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


def live_price(flow, amount: str):
    query = {**CORRIDORS["manual"], "network": "CELO", "asset": "USDT", "currency": "local",
             "amount": amount}
    return flow.get("/quote", query_string=query, headers={"HX-Request": "true"})


def test_the_live_price_says_when_and_asks_nothing_until_then(flow, spy, upstream_clock):
    flow.start()
    spy.too_many[BEST_OFFER] = "25"
    first = live_price(flow, "5000")
    assert first.status_code == 429 and first.headers["Retry-After"] == "25"
    assert re.search(r'id="quote-message">' + re.escape(BUSY) + r" Try again in 25 seconds\.",
                     first.get_data(as_text=True))
    upstream_clock.now += 10
    for amount in ("5001", "5002", "5003"):               # the user goes on typing
        again = live_price(flow, amount)
        assert again.status_code == 429 and again.headers["Retry-After"] == "15"
    assert spy.count(BEST_OFFER) == 1
    del spy.too_many[BEST_OFFER]
    upstream_clock.now += 15
    assert "You get" in live_price(flow, "5004").get_data(as_text=True)


def test_saving_the_amount_gets_the_wait_page_not_an_amount_error(flow, spy):
    flow.start()
    spy.too_many[BEST_OFFER] = None                         # no Retry-After: our default
    response = flow.choose("manual")
    assert response.status_code == 429 and response.headers["Retry-After"] == "30"
    body = text(response)
    assert "Please wait a moment" in body and f"{BUSY} Try again in 30 seconds." in body
    assert "Check it against the limits" not in body
    assert flow.session.quote is None


def test_a_one_time_code_is_never_called_wrong_when_it_was_not_checked(flow, spy):
    flow.to_pay("otp_stk_push")
    spy.too_many["/api/onramp/order/otp"] = "40"
    response = flow.post("/pay/otp", {"otp": "123456"})
    assert response.status_code == 429 and response.headers["Retry-After"] == "40"
    body = text(response)
    assert "not right" not in body and f"{BUSY} Try again in 40 seconds." in body
    assert spy.count("/api/onramp/order/otp", "POST") == 1
    flow.post("/pay/otp", {"otp": "123456"})
    assert spy.count("/api/onramp/order/otp", "POST") == 1     # not sent again before the time


def test_a_create_refused_for_volume_leaves_no_attempt_and_may_be_confirmed_later(
        flow, spy, upstream_clock):
    flow.start()
    review = flow.to_review("manual")
    spy.too_many["/api/onramp/order/create"] = "120"
    response = flow.create(review)
    assert response.status_code == 429 and response.headers["Retry-After"] == "120"
    assert "Try again in 2 minutes." in text(response)
    session = flow.session
    assert session.order_id is None and session.pending is None
    del spy.too_many["/api/onramp/order/create"]
    upstream_clock.now += 121
    review = flow.get("/review")
    assert flow.follow(flow.create(review)).request.path.endswith("/pay")
    assert spy.count("/api/onramp/order/create", "POST") == 2


def test_the_order_page_when_the_upstream_is_busy(flow, spy):
    flow.to_pay("manual")
    spy.too_many["/api/onramp/order"] = "3"
    response = flow.get("/pay")
    assert response.status_code == 429 and response.headers["Retry-After"] == "3"
    assert f"{BUSY} Try again in 3 seconds." in text(response)
    htmx = flow.get("/pay", headers={"HX-Request": "true"})
    assert htmx.status_code == 429 and "<html" not in htmx.get_data(as_text=True)


def test_a_transaction_hash_not_passed_on_is_kept_for_the_next_press(app, client, spy):
    sale = Sale(app, client)
    sale.to_deposit()
    spy.too_many["/api/offramp/confirm-order"] = "20"
    tx = "0x" + "ab" * 32
    response = sale.post("/deposit/sent", {"tx_hash": tx})
    assert response.status_code == 429 and "Try again in 20 seconds." in text(response)
    assert sale.session.deposit == {"hash": tx}
