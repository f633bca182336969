"""The upstream's health in the metrics: its breakers (open now, and outages counted once each)."""
from __future__ import annotations

import pytest

from checkout.state import get_state
from checkout.upstream.breaker import Admission, Breakers, BreakerSettings, breaker_told

from .support import TOKEN, scrape


@pytest.fixture
def config(config) -> dict:
    config["CHECKOUT_METRICS_TOKEN"] = TOKEN
    return config


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


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
