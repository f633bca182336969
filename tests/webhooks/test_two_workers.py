"""Two gunicorn workers on one PostgreSQL receive the same deliveries concurrently: each event is
processed once and each signal sent once, by database constraints (no lock is shared between the
processes). Forgeries mixed in (a newer status nobody signed, a real body under a wrong signature)
are refused and change nothing, whichever worker's batch they fall in."""
from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import requests
from sqlalchemy import select

from checkout.webhooks.store import events_table, orders_table, signal_log_table

from ..conftest import make_app
from ..gunicorn_support import gunicorn_workers
from ..support.waiting import wait_for
from .helpers import T0, history, order_payload, signed_webhook


@pytest.mark.postgres
def test_two_gunicorn_workers_process_each_event_once(webhook_config, postgres_url, tmp_path):
    # Create the tables once, before the workers start (as a deploy step would).
    webhook_config["CHECKOUT_DATABASE_URL"] = postgres_url
    app = make_app(dict(webhook_config))
    engine = app.extensions["checkout"].engine
    signal_log = tmp_path / "signals.log"
    env = {"CHECKOUT_TEST_DATABASE_URL": postgres_url, "CHECKOUT_TEST_SIGNAL_LOG": str(signal_log)}
    with gunicorn_workers("tests.webhooks.gunicorn_app:create()", env, tmp_path,
                          access_format="%(p)s %(s)s") as (port, access_log):
        rng = random.Random(7)
        finals, deliveries = {}, []
        for n in range(60):
            statuses = ["deposit_awaiting", "deposit_validating", "deposit_successful",
                        "payout_pending", "payout_successful"][: rng.randint(2, 5)]
            finals[f"g_{n}"] = statuses[-1]
            deliveries += [signed_webhook(p) for p in history(f"g_{n}", statuses)]
        # Every delivery three times, all shuffled: the copies race each other across workers.
        sends = deliveries * 3
        forged = [signed_webhook(order_payload(f"g_{n}", "refund_successful",
                                               updated_at=T0 + timedelta(days=1)),
                                 secret="not-the-webhook-secret") for n in range(0, 60, 3)]
        forged += [signed_webhook(body=d.body, secret="not-the-webhook-secret")
                   for d in deliveries[::7]]
        sends += forged
        rng.shuffle(sends)
        url = f"http://127.0.0.1:{port}/checkout/webhooks"

        def post(delivery):
            # As the upstream does: a 503 (the database busier than its places for waiting
            # requests, on a loaded machine) is sent again; only the final answer counts.
            for _attempt in range(10):
                # A new connection each time, so both workers take deliveries.
                response = requests.post(url, data=delivery.body,
                                         headers={**delivery.headers, "Connection": "close"},
                                         timeout=20, allow_redirects=False)
                if response.status_code != 503:
                    break
            return response.status_code

        with ThreadPoolExecutor(16) as pool:
            codes = Counter(pool.map(post, sends))
        assert codes == Counter({200: len(sends) - len(forged), 401: len(forged)})

        def settled():
            with engine.connect() as conn:
                states = set(conn.execute(select(events_table.c.state)).scalars())
                owed = conn.execute(select(signal_log_table.c.order_id, signal_log_table.c.status,
                                           signal_log_table.c.state)).all()
            return states == {"processed"} and {state for *_, state in owed} == {"dispatched"}, \
                owed

        # Once every signal is marked sent nothing is left to send: a signal sent twice would
        # already be in the log (each is written there before it is marked).
        wait_for(lambda: settled()[0], timeout=30)
        done, owed = settled()
        assert done
        fired = Counter(tuple(line.split()[1:]) for line in signal_log.read_text().splitlines())
        assert set(fired.values()) == {1}                 # exactly once, across both processes
        assert set(fired) == {(order_id, status) for order_id, status, _ in owed}
        assert {(o, s) for o, s in finals.items()} <= set(fired)
        assert not any(status == "refund_successful" for _, status in fired)    # no forgery
        served_by = {line.split()[0] for line in access_log.read_text().splitlines()}
        assert len(served_by) == 2                        # both workers received deliveries
        with engine.connect() as conn:
            events = conn.execute(select(events_table.c.state, events_table.c.attempts,
                                         events_table.c.duplicates)).all()
            stored = {o: s for o, s in conn.execute(select(orders_table.c.order_id,
                                                           orders_table.c.status))}
        assert len(events) == len(deliveries)
        assert {(state, attempts) for state, attempts, _ in events} == {("processed", 1)}
        assert sum(d for _, _, d in events) == 2 * len(deliveries)
        assert stored == finals
    engine.dispose()
