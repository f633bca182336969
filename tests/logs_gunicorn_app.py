"""The checkout app that the access log test of ``tests/test_logs.py`` runs under gunicorn: the
embedded sandbox, its database named by ``CHECKOUT_TEST_DATABASE_URL``."""
from __future__ import annotations

import os

from flask import Flask

from checkout import Checkout

from .gunicorn_support import mark_ready
from .support.sandbox_clock import MANUAL


def create() -> Flask:
    app = Flask("gunicorn_logs_host")
    app.config.update(CHECKOUT_DATABASE_URL=os.environ["CHECKOUT_TEST_DATABASE_URL"],
                      CHECKOUT_WEBHOOK_BACKGROUND=False, CHECKOUT_SANDBOX=dict(MANUAL))
    Checkout(app)
    mark_ready()                    # this worker has its app: it is about to take requests
    return app
