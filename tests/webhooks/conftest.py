"""Fixtures of the webhook tests: an app whose dispatcher runs when the test says so."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from sqlalchemy import Engine, func, select

from checkout.webhooks.dispatcher import process_pending
from checkout.webhooks.store import events_table

from ..conftest import make_app
from .helpers import WEBHOOK_PATH, FakeUpstream, Recorder, use_upstream


class Receiver:
    """Posts deliveries to the app's webhook URL and runs the dispatcher on demand."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.client = app.test_client()

    def post(self, delivery, path: str = WEBHOOK_PATH, **kwargs):
        return self.client.post(path, data=delivery.body, headers=delivery.headers,
                                base_url="https://shop.test", **kwargs)

    def process(self):
        return process_pending(self.app)

    def count_events(self) -> int:
        with self.app.extensions["checkout"].engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(events_table)).scalar_one()


@pytest.fixture
def webhook_config(config) -> dict:
    config.update(CHECKOUT_WEBHOOK_BACKGROUND=False, CHECKOUT_WEBHOOK_FETCH_ORDERS=False)
    return config


@pytest.fixture
def app(webhook_config) -> Flask:
    return make_app(dict(webhook_config))


@pytest.fixture
def postgres_engine(webhook_config, postgres_url) -> Iterator[Engine]:
    """The engine of an app on a fresh PostgreSQL database (tables made), disposed after."""
    webhook_config["CHECKOUT_DATABASE_URL"] = postgres_url
    state = make_app(dict(webhook_config)).extensions["checkout"]
    yield state.engine
    state.close()


@pytest.fixture
def recorder(app):
    rec = Recorder(app)
    yield rec
    rec.disconnect()


@pytest.fixture
def receiver(app) -> Receiver:
    return Receiver(app)


@pytest.fixture
def fake_upstream(app) -> FakeUpstream:
    fake = FakeUpstream()
    use_upstream(app, fake)
    return fake
