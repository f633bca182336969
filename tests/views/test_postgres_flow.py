"""The flow with the checkout's tables on PostgreSQL: a whole order, and concurrent creates."""
from __future__ import annotations

import threading

import pytest

from .conftest import Flow
from .test_create import count_creates, orders_of
from .test_status import poll_until

pytestmark = pytest.mark.postgres


@pytest.fixture
def config(config, postgres_url):
    config["CHECKOUT_DATABASE_URL"] = postgres_url
    return config


def test_a_whole_order_on_postgresql(flow):
    flow.to_pay("manual")
    flow.follow(flow.post("/pay/confirm"))
    poll_until(flow, "payout_successful")
    assert flow.session.order_id and flow.session.order["id"] == flow.session.order_id


def test_concurrent_creates_make_one_order_on_postgresql(app, monkeypatch):
    flow = Flow(app, app.test_client())
    flow.start()
    review = flow.to_review()
    form = flow.confirm_form(review)
    answered: list[int] = []
    # The first create is held at the upstream until the five others have had their answer.
    calls = count_creates(flow, monkeypatch, racers=lambda: len(answered) == 5)
    barrier = threading.Barrier(6)

    def submit() -> None:
        client = app.test_client()
        barrier.wait()
        answered.append(client.post(f"{flow.base}/create",
                                    data={"csrf_token": flow.csrf, **form}).status_code)

    threads = [threading.Thread(target=submit) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(orders_of(flow)) == 1 and len(calls) == 1
