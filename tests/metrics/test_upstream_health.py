"""The upstream's health in the metrics: its breakers (open now, and outages counted once each)
and the readiness gauges, true at every scrape."""
from __future__ import annotations

import pytest

from checkout.errors import UpstreamUnavailable
from checkout.state import get_state
from checkout.upstream.breaker import Admission, Breakers, BreakerSettings, breaker_told

from ..conftest import make_app
from ..support.clock import Clock
from ..support.waiting import wait_for
from .support import TOKEN, scrape


@pytest.fixture
def config(config) -> dict:
    config["CHECKOUT_METRICS_TOKEN"] = TOKEN
    return config


def test_a_scrape_tells_the_readiness_of_a_worker_never_probed(app):
    """No /healthz probe ever reached this process: the gauges say what a check finds now, not
    0 (a scrape of a worker never probed read 0 while its readiness said ok)."""
    seen = scrape(app.test_client())
    assert seen.value("checkout_upstream_ready") == 1
    assert seen.value("checkout_ratelimit_store_up") == 1


def test_the_ready_gauge_follows_the_upstream_at_each_scrape(config, monkeypatch):
    app = make_app({**config, "CHECKOUT_HEALTH_CACHE_SECONDS": 0})
    with app.app_context():
        upstream = get_state().upstream
    real = upstream.probe
    client = app.test_client()
    assert scrape(client).value("checkout_upstream_ready") == 1

    def down() -> None:
        raise UpstreamUnavailable("down")

    monkeypatch.setattr(upstream, "probe", down)
    wait_for(lambda: "checkout_upstream_ready 0.0" in scrape(client).text)
    monkeypatch.setattr(upstream, "probe", real)
    wait_for(lambda: "checkout_upstream_ready 1.0" in scrape(client).text)


def test_an_outage_is_counted_once_whatever_its_failed_trials(app):
    with app.app_context():
        metrics = get_state().metrics
    clock = Clock()
    breakers = Breakers(BreakerSettings(min_calls=3, open_for=5), clock=clock,
                        on_change=breaker_told(metrics.upstream_breaker))
    kenya = breakers.get("onramp_prices", "KE/mobile_money")
    for _ in range(3):
        kenya.record(False)
    for _trial in range(5):
        clock.now += 5
        assert kenya.allow() is Admission.TRIAL
        kenya.record(False)
    during = scrape(app.test_client())
    assert during.value("checkout_upstream_breaker_opened_total", family="onramp_prices") == 1
    assert during.value("checkout_upstream_breaker", family="onramp_prices", state="open") == 1
    clock.now += 5
    assert kenya.allow() is Admission.TRIAL
    kenya.record(True)
    after = scrape(app.test_client())
    assert after.value("checkout_upstream_breaker_opened_total", family="onramp_prices") == 1
    assert after.value("checkout_upstream_breaker", family="onramp_prices") == 0
