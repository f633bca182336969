"""Identical live prices within a few seconds are one upstream call; anything else is its own."""
from __future__ import annotations

import threading

import pytest

from checkout.journey.quote_cache import QuoteCache, merchant_key

from ..conftest import make_app
from ..support.clock import Clock
from ..upstream_spy import UpstreamSpy
from ..views.conftest import CORRIDORS, Flow

BEST_OFFER = "/api/onramp/best-offer"


def fetcher(calls: list):
    def fetch(label: str = "quote"):
        calls.append(label)
        return {"id": f"q{len(calls)}", "cashout": {"amount": len(calls)}}
    return fetch


def test_same_ask_within_the_time_is_one_call_then_a_new_one():
    clock, calls = Clock(), []
    fetch = fetcher(calls)
    cache = QuoteCache(5, "m1", clock=clock)
    params = {"amount": "5000", "network": "CELO", "countryIsoCode": "NG"}
    first = cache.get("onramp", params, fetch)
    assert [cache.get("onramp", dict(params), fetch) for _ in range(199)] == [first] * 199
    assert len(calls) == 1
    clock.now += 5
    assert cache.get("onramp", params, fetch)["id"] == "q2"


@pytest.mark.parametrize("other", [
    ("onramp", {"amount": "5001", "network": "CELO", "countryIsoCode": "NG"}),
    ("onramp", {"amount": "5000", "network": "POLYGON", "countryIsoCode": "NG"}),
    ("offramp", {"amount": "5000", "network": "CELO", "countryIsoCode": "NG"}),
])
def test_another_amount_corridor_or_flow_is_another_call(other):
    calls = []
    cache = QuoteCache(5, "m1", clock=Clock())
    cache.get("onramp", {"amount": "5000", "network": "CELO", "countryIsoCode": "NG"},
              fetcher(calls))
    cache.get(*other, fetcher(calls))
    assert len(calls) == 2


def test_merchants_never_share_an_entry():
    params = {"amount": "5000"}
    one = QuoteCache(5, merchant_key("https://up.example", "merchant-a"), clock=Clock())
    two = QuoteCache(5, merchant_key("https://up.example", "merchant-b"), clock=Clock())
    assert one.key("onramp", params) != two.key("onramp", params)
    assert "merchant-a" not in repr(one.key("onramp", params))


def test_a_copy_each_time():
    cache = QuoteCache(5, "m", clock=Clock())
    record = cache.get("onramp", {"amount": "1"}, fetcher([]))
    record["cashout"]["amount"] = "changed by a caller"
    assert cache.get("onramp", {"amount": "1"}, fetcher([]))["cashout"]["amount"] == 1


def test_failures_are_not_kept():
    cache, calls = QuoteCache(5, "m", clock=Clock()), []

    def failing():
        calls.append(1)
        raise RuntimeError("upstream down")

    for _ in range(2):
        with pytest.raises(RuntimeError):
            cache.get("onramp", {"amount": "1"}, failing)
    assert len(calls) == 2


def test_bounded_oldest_out_first():
    cache, calls = QuoteCache(5, "m", max_entries=3, clock=Clock()), []
    for amount in "1234":
        cache.get("onramp", {"amount": amount}, fetcher(calls))
    assert len(cache._entries) == 3
    cache.get("onramp", {"amount": "4"}, fetcher(calls))          # kept
    cache.get("onramp", {"amount": "1"}, fetcher(calls))          # gone: asked again
    assert len(calls) == 5


def test_zero_seconds_keeps_nothing():
    cache, calls = QuoteCache(0, "m", clock=Clock()), []
    for _ in range(3):
        cache.get("onramp", {"amount": "1"}, fetcher(calls))
    assert len(calls) == 3


def test_concurrent_identical_asks_wait_for_the_one_call():
    cache, calls = QuoteCache(5, "m"), []
    release = threading.Event()

    def slow():
        calls.append(1)
        release.wait(5)
        return {"id": "q"}

    asked = threading.Semaphore(0)

    class Asked(dict):
        """The price's parameters, which note each ask (the cache reads them first)."""

        def items(self):
            asked.release()
            return super().items()

    results = []
    threads = [threading.Thread(target=lambda: results.append(
        cache.get("onramp", Asked(amount="1"), slow)["id"])) for _ in range(20)]
    for thread in threads:
        thread.start()
    for _ in threads:               # every thread has asked: all but one wait on its fetch
        assert asked.acquire(timeout=5)
    release.set()
    for thread in threads:
        thread.join(5)
    assert results == ["q"] * 20 and len(calls) == 1


# -- through the live price ----------------------------------------------------------------------------

@pytest.fixture
def flow(config):
    # The cache is under test, not the limits (200 prices a minute is far over them). Nor its
    # time (tested above on a clock of the test's own): 200 pages take over the shipped 5 s on a
    # loaded machine, so here the whole test is within it.
    app = make_app({**config, "CHECKOUT_RATELIMIT_ENABLED": False,
                    "CHECKOUT_QUOTE_CACHE_SECONDS": 3600})
    flow = Flow(app, app.test_client())
    flow.start()
    return flow


def live_price(flow, amount: str):
    query = {**CORRIDORS["manual"], "network": "CELO", "asset": "USDT", "currency": "local",
             "amount": amount}
    response = flow.get("/quote", query_string=query, headers={"HX-Request": "true"})
    assert response.status_code == 200 and "You get" in response.get_data(as_text=True)
    return response


def test_200_identical_live_prices_are_one_upstream_call(flow):
    spy = UpstreamSpy(flow.app)
    pages = {live_price(flow, "5000").get_data(as_text=True) for _ in range(200)}
    assert spy.count(BEST_OFFER) == 1 and len(pages) == 1
    live_price(flow, "5000.00")                 # the same amount, written otherwise
    assert spy.count(BEST_OFFER) == 1
    live_price(flow, "5001")
    assert spy.count(BEST_OFFER) == 2


def test_another_session_shares_the_price_but_saving_asks_its_own_quote(flow):
    spy = UpstreamSpy(flow.app)
    live_price(flow, "5000")
    other = Flow(flow.app, flow.client)
    other.start()
    live_price(other, "5000")
    assert spy.count(BEST_OFFER) == 1
    # The quote an order is made from is the session's own: never one shown to another.
    other.follow(other.choose("manual", amount="5000"))
    flow.follow(flow.choose("manual", amount="5000"))
    assert spy.count(BEST_OFFER) == 3
    assert other.session.quote["id"] != flow.session.quote["id"]
