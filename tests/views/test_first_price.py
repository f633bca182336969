"""The first price of a session costs one round trip to the upstream, as later ones do: what it
needs besides the quote (countries and assets, the corridor's limits) is asked at the same time,
not one call after another (bench/proxy_overhead.py measures it over HTTP)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from checkout.state import get_state

from .conftest import CORRIDORS

DRAFT = {**CORRIDORS["manual"], "network": "CELO", "asset": "USDT", "currency": "local"}


def upstream(flow) -> Any:
    with flow.app.app_context():
        return get_state().upstream


def meet(monkeypatch, client: Any, *names: str) -> threading.Barrier:
    """Each of the client's calls ``names`` waits, before it is sent, until all of them are
    under way: asked one after the other, the first never gets past the barrier (it breaks)."""
    barrier = threading.Barrier(len(names), timeout=10)
    for name in names:
        real = getattr(client, name)

        def waiting(*args: Any, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
            barrier.wait()
            return _real(*args, **kwargs)

        monkeypatch.setattr(client, name, waiting)
    return barrier


def test_the_first_price_asks_the_corridors_limits_and_the_quote_at_the_same_time(flow,
                                                                                  monkeypatch):
    flow.start()                                # the page: no corridor chosen, no limits yet
    barrier = meet(monkeypatch, upstream(flow), "onramp_limits", "onramp_best_offer")
    html = flow.get("/quote", query_string={**DRAFT, "amount": "5000"},
                    headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "You pay" in html and "₦5,000.00" in html
    assert not barrier.broken


def test_a_price_asked_beside_the_limits_is_dropped_when_the_amount_is_outside_them(flow,
                                                                                   monkeypatch):
    flow.start()
    client = upstream(flow)
    offers = []
    real = client.onramp_best_offer

    def offer(**kwargs: Any) -> Any:
        offers.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(client, "onramp_best_offer", offer)
    for _ in range(2):
        html = flow.get("/quote", query_string={**DRAFT, "amount": "99999999"},
                        headers={"HX-Request": "true"}).get_data(as_text=True)
        assert "The maximum is ₦" in html and "You pay" not in html    # what the user sees
    # Asked once, with the limits; once they are known, an amount outside them asks nothing.
    assert len(offers) == 1
    assert flow.session.quote is None and flow.session.answers == {}


@pytest.mark.parametrize("name", ["onramp", "offramp"])
def test_the_first_page_asks_countries_and_assets_at_the_same_time(app, client, monkeypatch,
                                                                   name):
    from .conftest import Flow

    flow = Flow(app, client, name)
    calls = {"onramp": ("onramp_payment_channels", "onramp_assets"),
             "offramp": ("offramp_countries", "offramp_wallets")}[name]
    barrier = meet(monkeypatch, upstream(flow), *calls)
    page = flow.start()
    assert page.status_code == 200 and "Nigeria" in page.get_data(as_text=True)
    assert not barrier.broken
