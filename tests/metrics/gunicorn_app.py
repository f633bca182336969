"""The checkout app that the two-worker metrics test runs under gunicorn (one per worker): the
embedded sandbox, its database named by ``CHECKOUT_TEST_DATABASE_URL``, metrics on."""
from __future__ import annotations

import os

from flask import Flask

from checkout import Checkout

from ..gunicorn_support import mark_ready
from ..support.sandbox_clock import MANUAL


def create() -> Flask:
    app = Flask("gunicorn_metrics_host")
    app.config.update(
        CHECKOUT_DATABASE_URL=os.environ["CHECKOUT_TEST_DATABASE_URL"],
        CHECKOUT_METRICS_TOKEN=os.environ["CHECKOUT_TEST_METRICS_TOKEN"],
        CHECKOUT_WEBHOOK_BACKGROUND=False,
        CHECKOUT_SANDBOX=dict(MANUAL),
        # The test opens sessions from one address as fast as it can.
        CHECKOUT_RATELIMIT_ENABLED=False,
    )
    Checkout(app)
    mark_ready()                    # this worker has its app: it is about to take requests
    return app
