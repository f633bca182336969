"""The checkout app that the two-worker rate limit test runs under gunicorn (one per worker).

Settings come from the environment: the database, the shared Redis store and the limits (JSON).
With ``CHECKOUT_TEST_READY_LOG`` set, each worker appends its pid there once its app is built.
"""
from __future__ import annotations

import json
import os

from flask import Flask

from checkout import Checkout

from ..gunicorn_support import mark_ready


def create() -> Flask:
    app = Flask("gunicorn_ratelimit_host")
    app.config.update(
        CHECKOUT_DATABASE_URL=os.environ["CHECKOUT_TEST_DATABASE_URL"],
        CHECKOUT_RATELIMIT_STORAGE_URI=os.environ["CHECKOUT_TEST_REDIS_URL"],
        CHECKOUT_RATELIMITS=json.loads(os.environ["CHECKOUT_TEST_RATELIMITS"]),
        CHECKOUT_WEBHOOK_BACKGROUND=False,
    )
    Checkout(app)
    mark_ready()                    # this worker has its app: it is about to take requests
    return app
