"""A merchant's shop under real gunicorn (the shipped settings), with the checkout mounted and its
upstream at ``CHECKOUT_TEST_UPSTREAM`` (the fault proxy in front of a standalone sandbox): what
``tests/test_resilience_gunicorn.py`` and ``bench/slow_upstream.py`` serve."""
from __future__ import annotations

import os

from flask import Flask

from checkout import Checkout

from .gunicorn_support import mark_ready

CLIENT_ID = "merchant-resilience-1"
CLIENT_SECRET = "cmVzaWxpZW5jZS1jbGllbnQtc2VjcmV0LWJ5dGVzLTAx"
WEBHOOK_SECRET = "resilience-webhook-secret"


def create() -> Flask:
    app = Flask("resilience_shop")

    @app.get("/")
    def home() -> str:
        """The shop's own page: no checkout code runs for it."""
        return "<!doctype html><title>Shop</title><h1>Welcome to the shop</h1>"

    app.config.update(
        CHECKOUT_DATABASE_URL=os.environ["CHECKOUT_TEST_DATABASE_URL"],
        CHECKOUT_API_BASE_URL=os.environ["CHECKOUT_TEST_UPSTREAM"],
        CHECKOUT_CLIENT_ID=CLIENT_ID, CHECKOUT_CLIENT_SECRET=CLIENT_SECRET,
        CHECKOUT_WEBHOOK_SECRET=WEBHOOK_SECRET, CHECKOUT_LAUNCH_SECRET="l" * 40,
        CHECKOUT_PUBLIC_URL=os.environ["CHECKOUT_TEST_PUBLIC_URL"],
        CHECKOUT_WEBHOOK_BACKGROUND=False, CHECKOUT_TESTNET=True,
        # The breaker as shipped, unless the bench asks to see the checkout without one.
        CHECKOUT_BREAKER_MIN_CALLS=int(os.environ.get("CHECKOUT_TEST_BREAKER_MIN_CALLS", "3")),
    )
    Checkout(app)
    mark_ready()
    return app
