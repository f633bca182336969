"""The funnel: sessions that reached each step of each flow, read from the metrics after walking
both flows; and the step-viewed event each step's page carries for the merchant's page."""
from __future__ import annotations

import re

import pytest

from ..views.conftest import Flow
from ..views.test_offramp import Sale
from .support import TOKEN, scrape

FUNNEL = "checkout_funnel_sessions_total"


@pytest.fixture
def config(config) -> dict:
    config.update(CHECKOUT_METRICS_TOKEN=TOKEN)
    return config


def test_the_funnel_counts_each_session_once_at_each_step_it_reached(app, client):
    buyer = Flow(app, client)
    buyer.start()
    buyer.to_pay()
    buyer.get("/wallet")                    # back to a step seen already: not counted again
    buyer.get("/pay")
    seller = Sale(app, app.test_client())
    seller.start()
    seller.to_deposit()
    quitter = Flow(app, app.test_client())
    quitter.start()                         # saw the amount, went no further

    seen = scrape(client)
    assert {step: seen.value(FUNNEL, flow="onramp", step=step)
            for step in ("choose", "wallet", "review", "pay")} == \
        {"choose": 2, "wallet": 1, "review": 1, "pay": 1}
    assert {step: seen.value(FUNNEL, flow="offramp", step=step)
            for step in ("choose", "payout", "payee", "wallet", "review", "deposit")} == \
        {"choose": 1, "payout": 1, "payee": 1, "wallet": 1, "review": 1, "deposit": 1}
    assert seen.label_values("step") >= {"choose", "wallet", "review", "pay", "payout"}


def test_a_part_of_a_page_is_no_step_viewed(app, client):
    buyer = Flow(app, client)
    buyer.start()
    for _ in range(3):
        buyer.get("/choose", query_string={"countryIsoCode": "KE"},
                  headers={"HX-Request": "true"})
    assert scrape(client).value(FUNNEL, flow="onramp", step="choose") == 1


def test_each_steps_page_names_its_flow_and_step_and_nothing_else(app, client):
    """checkout.js tells a framing merchant's page (step-viewed) what <main> names."""
    buyer = Flow(app, client)
    html = buyer.start().get_data(as_text=True)
    main = re.search(r'<main id="checkout-main"[^>]*>', html)
    assert main, html[:3000]
    assert re.findall(r'data-checkout-(\w+)="([^"]*)"', main.group(0)) == [
        ("flow", "onramp"), ("step", "choose")]


def test_without_metrics_the_session_is_not_written_for_the_funnel(config):
    from ..conftest import make_app

    config.pop("CHECKOUT_METRICS_TOKEN")
    app = make_app(config)
    buyer = Flow(app, app.test_client())
    buyer.start()
    assert "reached" not in buyer.session.data
