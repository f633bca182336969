"""The app ``flask checkout worker`` loads in the worker tests (one per process).

Every ``order_status_changed`` it sends is appended to ``CHECKOUT_TEST_SIGNAL_LOG`` as
``pid order_id status`` when its receiver returns. With ``CHECKOUT_TEST_STALL`` naming a file,
the receiver of the process's signal number ``CHECKOUT_TEST_STALL_AFTER`` + 1 (the first by
default) makes that file and waits for ever, before it writes anything down: a process that stalls
in the middle of sending its signals, ready to be killed (kill -9) by the test. Only the first
process to get there stalls (the file is made once), so a worker started beside it does not.
With ``CHECKOUT_TEST_METRICS_TOKEN`` the app's metrics are on.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from flask import Flask

from checkout import Checkout
from checkout.signals import order_status_changed

from ..gunicorn_support import ROOT


def start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``flask checkout worker`` on this module's app, in a process of its own."""
    flask = str(Path(sys.executable).with_name("flask"))
    return subprocess.Popen([flask, "--app", "tests.webhooks.worker_app:create", "checkout",
                             "worker"], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def create() -> Flask:
    app = Flask("worker_host")
    app.config.update(
        CHECKOUT_DATABASE_URL=os.environ["CHECKOUT_TEST_DATABASE_URL"],
        CHECKOUT_WEBHOOK_BACKGROUND=False, CHECKOUT_WEBHOOK_FETCH_ORDERS=False,
        CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2, CHECKOUT_SIGNAL_LEASE=2,
        CHECKOUT_RECONCILE_PER_MINUTE=0,
        CHECKOUT_METRICS_TOKEN=os.environ.get("CHECKOUT_TEST_METRICS_TOKEN"),
    )
    Checkout(app)
    log_path = os.environ["CHECKOUT_TEST_SIGNAL_LOG"]
    stall = os.environ.get("CHECKOUT_TEST_STALL")
    stall_after = int(os.environ.get("CHECKOUT_TEST_STALL_AFTER", "0"))
    returned = []           # the receivers of this process that returned

    @order_status_changed.connect_via(app)
    def write_down(sender, order_id, status, **kwargs):
        if stall and len(returned) == stall_after and _first_to_stall(stall):
            threading.Event().wait()            # until killed
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{os.getpid()} {order_id} {status}\n".encode())
        finally:
            os.close(fd)
        returned.append(order_id)

    return app


def _first_to_stall(path: str) -> bool:
    """Make the stall file, holding this process's id; False if another process made it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)
    return True
