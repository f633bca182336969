"""A PostgreSQL server that stops answering (every process of it stopped with SIGSTOP: the kernel
still takes connections and bytes, nothing comes back) costs each request a few seconds, never a
worker for ever: a webhook sender gets its 503 and sends again, a user our error page, a probe
its answer; nothing is acknowledged that was not stored."""
from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from checkout.store import DATABASE_WAIT
from checkout.webhooks.store import events_table

from ..conftest import make_app
from .helpers import WEBHOOK_PATH, order_payload, signed_webhook
from .pgcluster import StoppableCluster

pytestmark = pytest.mark.postgres

# A wait on the database is bounded by DATABASE_WAIT (and a second of margin on our side).
BOUND = DATABASE_WAIT + 1.0 + 2.0


@pytest.fixture
def cluster():
    cluster = StoppableCluster()
    cluster.start()
    yield cluster
    cluster.thaw()
    cluster.remove()


def stored(app) -> int:
    with app.extensions["checkout"].engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(events_table)).scalar_one()


def test_a_frozen_database_costs_each_request_seconds_and_loses_nothing(config, cluster):
    config.update(CHECKOUT_DATABASE_URL=cluster.url, CHECKOUT_WEBHOOK_BACKGROUND=False,
                  CHECKOUT_WEBHOOK_FETCH_ORDERS=False,
                  PROPAGATE_EXCEPTIONS=False)       # the user's page, as in production
    app = make_app(dict(config))
    client = app.test_client()

    def post(delivery):
        return client.post(WEBHOOK_PATH, data=delivery.body, headers=delivery.headers,
                           base_url="https://shop.test")

    assert post(signed_webhook(order_payload("o1"))).status_code == 200
    assert client.get("/checkout/onramp").status_code == 303     # a session: the pool warmed
    refused = signed_webhook(order_payload("o2"))
    cluster.freeze()
    try:
        started = time.monotonic()
        answer = post(refused)
        assert answer.status_code == 503 and answer.headers["Retry-After"] == "1"
        assert time.monotonic() - started < BOUND
        started = time.monotonic()
        page = client.get("/checkout/onramp")
        assert page.status_code >= 500 and "<html" in page.get_data(as_text=True)
        assert time.monotonic() - started < 2 * BOUND        # a pool wait, then a new connection
        started = time.monotonic()
        assert client.get("/checkout/healthz").status_code == 503
        assert time.monotonic() - started < 2 * BOUND
    finally:
        cluster.thaw()
    # The 503'd delivery comes again and is taken; stored once, whether or not the thawed server
    # went on to finish the INSERT it had been sent (then the second one is a copy).
    assert post(refused).status_code == 200
    assert stored(app) == 2
    assert client.get("/checkout/healthz").status_code == 200
