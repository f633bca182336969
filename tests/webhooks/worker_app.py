"""The app ``flask checkout worker`` loads in the worker tests (one per process).

Every ``order_status_changed`` it sends is appended to ``CHECKOUT_TEST_SIGNAL_LOG`` as
``pid order_id status``. With ``CHECKOUT_TEST_STALL`` naming a file, the receiver first writes
that file, then waits for ever, before it writes anything down: a process that stalls in the
middle of sending its signals, ready to be killed (kill -9) by the test.
"""
from __future__ import annotations

import os
import threading

from flask import Flask

from checkout import Checkout
from checkout.signals import order_status_changed


def create() -> Flask:
    app = Flask("worker_host")
    app.config.update(
        CHECKOUT_DATABASE_URL=os.environ["CHECKOUT_TEST_DATABASE_URL"],
        CHECKOUT_WEBHOOK_BACKGROUND=False, CHECKOUT_WEBHOOK_FETCH_ORDERS=False,
        CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2, CHECKOUT_SIGNAL_LEASE=2,
        CHECKOUT_RECONCILE_PER_MINUTE=0,
    )
    Checkout(app)
    log_path = os.environ["CHECKOUT_TEST_SIGNAL_LOG"]
    stall = os.environ.get("CHECKOUT_TEST_STALL")

    @order_status_changed.connect_via(app)
    def write_down(sender, order_id, status, **kwargs):
        if stall:
            with open(stall, "w") as mark:
                mark.write(str(os.getpid()))
            threading.Event().wait()            # until killed
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{os.getpid()} {order_id} {status}\n".encode())
        finally:
            os.close(fd)

    return app
