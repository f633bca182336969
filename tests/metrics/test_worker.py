"""What a ``flask checkout worker`` counts (the signals it sends, the reconciler's checks) is in
the web app's scrape, when both are given the same ``PROMETHEUS_MULTIPROC_DIR``: also when the
worker was started first, or runs on while the web server restarts. When it stops its counts
stay, its live gauges go."""
from __future__ import annotations

import logging
import signal

import requests

from ..conftest import make_app
from ..gunicorn_support import gunicorn_workers
from ..support.waiting import wait_for
from ..webhooks.helpers import WEBHOOK_PATH, order_payload, signed_webhook
from ..webhooks.worker_app import start_worker
from .support import PATH, TOKEN, Scrape, bearer

CHANGES = "checkout_order_status_changes_total"


def test_a_workers_counts_reach_the_web_apps_metrics(config, tmp_path):
    database = config["CHECKOUT_DATABASE_URL"]
    directory = tmp_path / "multiproc"
    directory.mkdir()
    env = {"CHECKOUT_TEST_DATABASE_URL": database, "CHECKOUT_TEST_METRICS_TOKEN": TOKEN,
           "CHECKOUT_TEST_SIGNAL_LOG": str(tmp_path / "signals.log"),
           "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    worker = start_worker(env)
    try:
        # The worker runs first (as while the web server restarts): a delivery stored meanwhile
        # is processed by it, and it counts the signal it sent in the directory.
        earlier = signed_webhook(order_payload("ord_v", "payout_successful"))
        stored = make_app({**config, "CHECKOUT_WEBHOOK_BACKGROUND": False}).test_client().post(
            WEBHOOK_PATH, data=earlier.body, headers=earlier.headers, base_url="https://shop.test")
        assert stored.status_code == 200
        wait_for(lambda: (directory / f"counter_{worker.pid}.db").exists(), timeout=30)
        with gunicorn_workers("tests.metrics.gunicorn_app:create()", env, tmp_path,
                              access_format="%(s)s", workers=1, shipped_settings=True) as (
                                  port, _):
            base = f"http://127.0.0.1:{port}"
            delivery = signed_webhook(order_payload("ord_w", "payout_successful"))
            assert requests.post(base + WEBHOOK_PATH, data=delivery.body,
                                 headers=delivery.headers, timeout=20).status_code == 200

            def counted() -> float:
                scrape = requests.get(base + PATH, headers=bearer(), timeout=20)
                assert scrape.status_code == 200
                return Scrape(scrape.text).value(CHANGES, status="payout_successful")

            # The web app sends no signal (CHECKOUT_WEBHOOK_BACKGROUND is False there): the
            # worker did, both times, and its counts (the one from before the web server
            # started included) are in the web app's scrape.
            assert wait_for(lambda: counted() == 2, timeout=30)
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(20) == 0
    assert (directory / f"counter_{worker.pid}.db").exists()        # its counts stay
    assert list(directory.glob(f"gauge_live*_{worker.pid}.db")) == []


def test_a_worker_without_the_shared_directory_says_its_counts_stay_in_it(
        config, monkeypatch, caplog):
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    app = make_app({**config, "CHECKOUT_METRICS_TOKEN": TOKEN,
                    "CHECKOUT_WEBHOOK_BACKGROUND": False})
    with caplog.at_level(logging.WARNING, logger="checkout.metrics"):
        done = app.test_cli_runner().invoke(args=["checkout", "worker", "--once"])
    assert done.exit_code == 0, done.output
    # Said once by the worker (a web process says its own, when gunicorn was imported before).
    said = [record.getMessage() for record in caplog.records if record.name == "checkout.metrics"]
    assert said.count(
        "CHECKOUT_METRICS_TOKEN is set but PROMETHEUS_MULTIPROC_DIR is not: this process's "
        "counts (signals sent, reconciler checks, upstream calls) never reach the web "
        "processes' metrics; give it the directory the web server uses (see the README, "
        "Metrics)") == 1, said
