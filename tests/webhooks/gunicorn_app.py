"""The checkout app that the two-worker test runs under gunicorn (one per worker process).

Settings come from the environment; every ``order_status_changed`` a worker sends is appended to
a shared file as ``pid order_id status``, so the test sees what both processes did. With
``CHECKOUT_TEST_READY_LOG`` set, each worker appends its pid there once its app is built.
"""
from __future__ import annotations

import os

from flask import Flask

from checkout import Checkout
from checkout.signals import order_status_changed

from ..gunicorn_support import mark_ready


def create() -> Flask:
    app = Flask("gunicorn_host")
    app.config.update(
        CHECKOUT_DATABASE_URL=os.environ["CHECKOUT_TEST_DATABASE_URL"],
        CHECKOUT_WEBHOOK_FETCH_ORDERS=False,
        CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2,
    )
    Checkout(app)
    log_path = os.environ["CHECKOUT_TEST_SIGNAL_LOG"]

    @order_status_changed.connect_via(app)
    def write_down(sender, order_id, status, **kwargs):
        line = f"{os.getpid()} {order_id} {status}\n".encode()
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)      # one write with O_APPEND: lines of two processes never mix
        finally:
            os.close(fd)

    mark_ready()                    # this worker has its app: it is about to take requests
    return app
