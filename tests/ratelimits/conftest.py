"""Fixtures of the rate limit tests: a client that opens sessions and speaks from any address, and
a clock for the limiter's memory store (a half-hour of polling without waiting half an hour)."""
from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import limits.storage.memory
import pytest
from flask import Flask
from werkzeug.test import TestResponse

from ..launch_support import session_id_from

PREFIX = "/checkout"


class Shopper:
    """Requests from one client address (``ip``) to the app, with the sessions it opened."""

    def __init__(self, app: Flask, ip: str = "198.51.100.7") -> None:
        self.app = app
        self.ip = ip
        self.client = app.test_client()

    def at(self, ip: str) -> Shopper:
        """The same browser's requests, seen from another address."""
        other = Shopper(self.app, ip)
        other.client = self.client
        return other

    def request(self, method: str, path: str, **kwargs: Any) -> TestResponse:
        environ = {"REMOTE_ADDR": self.ip, **kwargs.pop("environ_base", {})}
        return self.client.open(PREFIX + path, method=method, environ_base=environ, **kwargs)

    def get(self, path: str, **kwargs: Any) -> TestResponse:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> TestResponse:
        return self.request("POST", path, **kwargs)

    def open_session(self, flow: str = "onramp", **query: str) -> str:
        response = self.get(f"/{flow}", query_string=query)
        assert response.status_code == 303, response.status_code
        return session_id_from(response.headers["Location"])


@pytest.fixture
def shopper(app: Flask) -> Shopper:
    return Shopper(app)


class LimiterClock:
    """The clock of Flask-Limiter's memory store: starts now, moves only when told."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def limiter_clock(monkeypatch) -> LimiterClock:
    """Moving windows over minutes and hours, without waiting: the memory store (the default)
    reads this clock; nothing else does."""
    clock = LimiterClock()
    monkeypatch.setattr(limits.storage.memory, "time", SimpleNamespace(time=clock.time))
    return clock
