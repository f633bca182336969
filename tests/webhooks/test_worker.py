"""``flask checkout worker``: the background work in a process of its own, for hosts whose web
processes keep no threads. Killed (kill -9) in the middle of sending signals, it leaves nothing
stuck: another worker takes what it had claimed once its lease is over, each signal once."""
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

pytestmark = pytest.mark.postgres

ORDERS = 12


def start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    flask = str(Path(sys.executable).with_name("flask"))
    return subprocess.Popen([flask, "--app", "tests.webhooks.worker_app:create", "checkout",
                             "worker"], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _all_dispatched(app) -> bool:
    from sqlalchemy import select

    from checkout.store.tables import signal_log_table
    from checkout.webhooks.store import DISPATCHED

    with app.extensions["checkout"].engine.connect() as conn:
        states = set(conn.execute(select(signal_log_table.c.state)).scalars())
    return states == {DISPATCHED}


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
