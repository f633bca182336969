"""A PostgreSQL server that stops answering (every process of it stopped with SIGSTOP: the kernel
still takes connections and bytes, nothing comes back) costs a request at most its time for the
database (checkout.store.availability), never a worker for ever: a webhook sender gets its 503 and
sends again, a user our "try again in a moment" page, a probe its answer; nothing is acknowledged
that was not stored. Once one wait has run out, the next requests are answered at once."""
from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from checkout.store import REQUEST_DATABASE_TIME
from checkout.webhooks.store import events_table

from .. import postgres
from ..conftest import make_app
from ..support.waiting import wait_for
from .helpers import WEBHOOK_PATH, order_payload, signed_webhook

pytestmark = pytest.mark.postgres

# What a user, a sender or a probe may wait: the request's time for the database, and a second
# for the rest of its work on a loaded machine.
BOUND = REQUEST_DATABASE_TIME + 1.0


@pytest.fixture
def cluster():
    cluster = postgres.Cluster()
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
        # The database is known down now: the next ones are answered at once.
        started = time.monotonic()
        page = client.get("/checkout/onramp")
        html = page.get_data(as_text=True)
        assert page.status_code == 503 and "We cannot reach our records right now" in html
        assert page.headers["Retry-After"] == "5"
        assert client.get("/checkout/healthz").status_code == 503
        assert post(refused).status_code == 503
        assert time.monotonic() - started < BOUND
    finally:
        cluster.thaw()
    # The 503'd delivery comes again (the sender retries) and is taken once the process has
    # tried the database again; stored once, whether or not the thawed server went on to finish
    # the INSERT it had been sent (then the second one is a copy).
    wait_for(lambda: post(refused).status_code == 200, timeout=10, interval=0.2)
    assert stored(app) == 2
    assert client.get("/checkout/healthz").status_code == 200
