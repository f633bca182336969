"""The reference-data cache: time to live, stale copies on failure, one load at a time, per app."""
from __future__ import annotations

import logging
import threading
import time
from decimal import Decimal

import pytest

from checkout.errors import UpstreamTimeout
from checkout.reference import OnrampCatalog, TTLCache
from checkout.state import state_of
from checkout.upstream.breaker import note_used
from checkout.upstream.types import AssetPair, Limits

from ..conftest import make_app
from ..support import outage
from ..support.clock import Clock
from ..support.waiting import wait_for


def test_entries_live_for_the_ttl():
    clock = Clock(0.0)
    cache = TTLCache(10, clock=clock)
    loads = []
    load = lambda: loads.append(1) or len(loads)       # noqa: E731
    assert cache.get("k", load) == 1
    clock.now = 9.9
    assert cache.get("k", load) == 1
    clock.now = 10.0
    assert cache.get("k", load) == 2


def test_a_failed_refresh_serves_the_old_copy_for_a_while_then_fails():
    clock = Clock(0.0)
    cache = TTLCache(10, clock=clock)
    cache.get("k", lambda: "old")

    def down():
        raise UpstreamTimeout("timeout")

    clock.now = 50
    assert cache.get("k", down) == "old"
    clock.now = 100
    with pytest.raises(UpstreamTimeout):
        cache.get("k", down)


def test_serving_the_old_copy_is_logged_once_per_outage_not_per_page(caplog):
    clock = Clock(0.0)
    cache = TTLCache(10, clock=clock)
    cache.get(("onramp-countries",), lambda: "old")
    up = [False]

    def load():
        if not up[0]:
            raise UpstreamTimeout("timeout")
        return "new"

    clock.now = 11
    with caplog.at_level(logging.INFO, logger="checkout.reference"):
        for _page in range(50):
            assert cache.get(("onramp-countries",), load) == "old"
        up[0] = True
        assert cache.get(("onramp-countries",), load) == "new"
        clock.now = 22                                  # a second outage: said again
        up[0] = False
        assert cache.get(("onramp-countries",), load) == "new"
        assert cache.get(("onramp-countries",), load) == "new"
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "reference data refresh failed; serving the cached copy until the upstream answers "
        "again: onramp-countries",
        "reference data refreshed again: onramp-countries",
        "reference data refresh failed; serving the cached copy until the upstream answers "
        "again: onramp-countries"]


def test_nothing_cached_and_upstream_down_raises():
    with pytest.raises(UpstreamTimeout):
        TTLCache(10).get("k", lambda: (_ for _ in ()).throw(UpstreamTimeout("t")))


class Arrivals(str):
    """A key that notes each thread that looked it up (every ask hashes it first)."""

    threads: set[int]

    def __hash__(self) -> int:
        self.threads.add(threading.get_ident())
        return super().__hash__()


def test_one_load_per_key_when_many_threads_ask_at_once():
    cache = TTLCache(60)
    loads = []
    key = Arrivals("k")
    key.threads = set()
    answer = threading.Event()

    def slow_load():
        loads.append(1)
        answer.wait(10)                 # the upstream answers once every thread has asked
        return "value"

    def ask():
        assert cache.get(key, slow_load) == "value"

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    wait_for(lambda: len(key.threads) == 8 and loads)
    answer.set()
    for thread in threads:
        thread.join()
    assert len(loads) == 1


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def onramp_assets(self):
        self.calls.append("assets")
        return [AssetPair(network="CELO", asset="USDT"), AssetPair(network="CELO", asset="CKES"),
                AssetPair(network="SOLANA", asset="USDC")]

    def onramp_limits(self, **kwargs):
        self.calls.append(f"limits:{kwargs['country_iso_code']}")
        zero = Decimal(0)
        return Limits(min_usd=zero, max_usd=zero, min_local_currency=zero,
                      max_local_currency=zero, min_crypto=zero, max_crypto=zero)


def test_catalog_answers_from_one_call_per_kind_and_corridor():
    client = FakeClient()
    catalog = OnrampCatalog(client, TTLCache(60))
    assert catalog.networks() == ["CELO", "SOLANA"]
    assert catalog.assets("CELO") == ["CKES", "USDT"]
    assert catalog.supports("CELO", "CKES") and not catalog.supports("SOLANA", "USDT")
    for _ in range(3):
        limits = catalog.limits(network="CELO", asset="USDT", country="ZM", channel="bank")
    assert not limits.available                     # every limit 0: shown as unavailable
    assert client.calls == ["assets", "limits:ZM"]


def test_each_app_has_its_own_catalog_with_its_ttl(config):
    one = make_app(dict(config, CHECKOUT_REFERENCE_TTL=5))
    config = dict(config, CHECKOUT_DATABASE_URL=config["CHECKOUT_DATABASE_URL"] + "-2",
                  CHECKOUT_REFERENCE_TTL=7)
    two = make_app(config)
    first = state_of(one).flows["onramp"].catalog()
    assert state_of(one).flows["onramp"].catalog() is first and first.cache.ttl == 5
    assert state_of(two).flows["onramp"].catalog() is not first
    assert state_of(two).flows["onramp"].catalog().cache.ttl == 7


def test_a_page_that_would_wait_behind_a_failing_refresh_gets_the_last_copy():
    """The breaker not closed, another page's refresh under way (its one trial, which may hang):
    a page that has a copy, however past its time, is given it at once, not an error page."""
    from checkout import errors
    from checkout.upstream.breaker import Breaker, BreakerSettings, note_used

    clock = Clock(0.0)
    breaker = Breaker(BreakerSettings(min_calls=1, open_for=60))
    cache = TTLCache(10, clock=clock)
    cache.get("k", lambda: "old")
    clock.now = 50
    loading, release = threading.Event(), threading.Event()

    def hanging():
        note_used(breaker)                  # its call goes through the breaker
        loading.set()
        release.wait(5)
        raise UpstreamTimeout("timeout")

    def other_page() -> None:
        with pytest.raises(UpstreamTimeout):   # too old by then: its own page's error
            cache.get("k", hanging)

    other = threading.Thread(target=other_page)
    other.start()
    try:
        assert loading.wait(5)
        breaker.record(False)
        assert cache.get("k", hanging) == "old" and cache.expired("k")
        clock.now = 100                     # ten times the TTL: too old to be shown
        with pytest.raises(errors.UpstreamCircuitOpen):
            cache.get("k", hanging)
    finally:
        release.set()
        other.join()


@pytest.mark.parametrize("how", ["breaker open", "refresh under way"])
def test_the_amount_step_in_an_outage_shows_the_last_reference_data_and_says_so(app, flow, how):
    """Reloads of the first step while the upstream does not answer and the reference data's
    time is over: the form from the last copy, with a notice, never a "try again" page."""
    flow.start()
    with app.app_context():
        state = state_of(app)
    catalog = state.flows["onramp"].catalog()
    ttl = catalog.cache.ttl
    catalog.cache.clock = lambda: time.monotonic() + ttl + 1       # every copy past its time
    release = threading.Event()
    other = None
    if how == "refresh under way":
        loading = threading.Event()

        def hanging():
            # Its call goes through the reference data's breaker, as the real one's would.
            note_used(state.upstream.transport.breakers.get("onramp_reference"))
            loading.set()
            release.wait(10)
            raise UpstreamTimeout("timeout")

        other = threading.Thread(target=lambda: catalog.cache.get(catalog.countries_key,
                                                                  hanging))
        other.start()
        assert loading.wait(5)
    outage.upstream_down(state.upstream)
    try:
        page = flow.get("/choose")
        html = page.get_data(as_text=True)
        assert page.status_code == 200, html[:2000]
        assert 'data-testid="reference-out-of-date"' in html
        assert "Our payment partner is not answering right now. These choices are the last " \
               "they gave us" in html
        assert 'name="countryIsoCode"' in html and 'value="NG"' in html
    finally:
        release.set()
        if other is not None:
            other.join()
    # Back, with fresh data: no notice.
    outage.upstream_back(state.upstream)
    catalog.cache.clock = time.monotonic
    catalog.cache.clear()
    assert 'data-testid="reference-out-of-date"' not in flow.get("/choose").get_data(
        as_text=True)
