"""``flask checkout worker``: the background work in a process of its own, for hosts whose web
processes keep no threads. Killed (kill -9) in the middle of sending signals, it leaves nothing
stuck: another worker takes what it had claimed once its lease is over, each signal once. A
signal whose receiver has returned is never sent again: a death repeats at most the one in
flight."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ..conftest import make_app
from ..gunicorn_support import ROOT
from ..support.waiting import wait_for
from .conftest import Receiver
from .helpers import order_payload, signed_webhook
from .worker_app import start_worker

ORDERS = 12


def _all_dispatched(app) -> bool:
    from sqlalchemy import select

    from checkout.store.tables import signal_log_table
    from checkout.webhooks.store import DISPATCHED

    with app.extensions["checkout"].engine.connect() as conn:
        states = set(conn.execute(select(signal_log_table.c.state)).scalars())
    return states == {DISPATCHED}


@pytest.mark.postgres
def test_a_worker_killed_while_sending_leaves_nothing_stuck(config, postgres_url, tmp_path):
    config.update(CHECKOUT_DATABASE_URL=postgres_url, CHECKOUT_WEBHOOK_BACKGROUND=False,
                  CHECKOUT_WEBHOOK_FETCH_ORDERS=False)
    web = Receiver(make_app(dict(config)))          # a web process that only stores deliveries
    for n in range(ORDERS):
        assert web.post(signed_webhook(order_payload(f"ord_{n}", "deposit_validating"))
                        ).status_code == 200
    signals, stall = tmp_path / "signals.log", tmp_path / "stalled"
    env = {"CHECKOUT_TEST_DATABASE_URL": postgres_url, "CHECKOUT_TEST_SIGNAL_LOG": str(signals)}
    first = start_worker({**env, "CHECKOUT_TEST_STALL": str(stall)})
    try:
        wait_for(stall.exists, timeout=30)        # it has claimed signals and is sending one
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    second = start_worker(env)
    try:
        wait_for(lambda: signals.exists() and
                 len(signals.read_text().splitlines()) >= ORDERS, timeout=30)
        # Every signal marked sent in the database: nothing is left that could be sent again.
        wait_for(lambda: _all_dispatched(web.app), timeout=30)
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(20) == 0                 # a clean stop on SIGTERM
    sent = Counter(tuple(line.split()[1:]) for line in signals.read_text().splitlines())
    assert sent == Counter({(f"ord_{n}", "deposit_validating"): 1 for n in range(ORDERS)})
    assert {line.split()[0] for line in signals.read_text().splitlines()} == {str(second.pid)}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request, config) -> str:
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url")
    return config["CHECKOUT_DATABASE_URL"]


def test_a_dead_workers_returned_receivers_are_not_called_again(config, database_url, tmp_path):
    # Two workers side by side; the one sending signals is killed (kill -9) after five of its
    # receivers returned, while the sixth is running. The other takes over once the lease is
    # over: the five are never sent again, the sixth (in flight, never returned) is.
    config.update(CHECKOUT_DATABASE_URL=database_url, CHECKOUT_WEBHOOK_BACKGROUND=False,
                  CHECKOUT_WEBHOOK_FETCH_ORDERS=False)
    web = Receiver(make_app(dict(config)))
    for n in range(ORDERS):
        assert web.post(signed_webhook(order_payload(f"ord_{n}", "payout_successful"))
                        ).status_code == 200
    signals, stall = tmp_path / "signals.log", tmp_path / "stalled"
    env = {"CHECKOUT_TEST_DATABASE_URL": database_url, "CHECKOUT_TEST_SIGNAL_LOG": str(signals),
           "CHECKOUT_TEST_STALL": str(stall), "CHECKOUT_TEST_STALL_AFTER": "5"}
    workers = [start_worker(env), start_worker(env)]
    try:
        killed = int(wait_for(lambda: stall.exists() and stall.read_text(), timeout=30))
        dying, = (worker for worker in workers if worker.pid == killed)
        dying.send_signal(signal.SIGKILL)
        dying.wait(10)
        wait_for(lambda: signals.exists() and
                 len(signals.read_text().splitlines()) >= ORDERS, timeout=30)
        wait_for(lambda: _all_dispatched(web.app), timeout=30)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                assert worker.wait(20) == 0
    lines = [line.split() for line in signals.read_text().splitlines()]
    returned = Counter((order_id, status) for _, order_id, status in lines)
    assert returned == Counter({(f"ord_{n}", "payout_successful"): 1 for n in range(ORDERS)})
    assert sum(pid == str(killed) for pid, *_ in lines) == 5


@pytest.mark.postgres
def test_once_does_one_round_and_exits(config, postgres_url, tmp_path):
    config.update(CHECKOUT_DATABASE_URL=postgres_url, CHECKOUT_WEBHOOK_BACKGROUND=False,
                  CHECKOUT_WEBHOOK_FETCH_ORDERS=False)
    web = Receiver(make_app(dict(config)))
    assert web.post(signed_webhook(order_payload("ord_once", "deposit_validating"))
                    ).status_code == 200
    signals = tmp_path / "signals.log"
    flask = str(Path(sys.executable).with_name("flask"))
    done = subprocess.run([flask, "--app", "tests.webhooks.worker_app:create", "checkout",
                           "worker", "--once"], cwd=ROOT, capture_output=True, timeout=60,
                          env={**os.environ, "CHECKOUT_TEST_DATABASE_URL": postgres_url,
                               "CHECKOUT_TEST_SIGNAL_LOG": str(signals)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert signals.read_text().split()[1:] == ["ord_once", "deposit_validating"]
