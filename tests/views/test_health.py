"""``/healthz``: the upstream check is cached (no amplification), the database check is live."""
from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy.exc import OperationalError

from checkout.errors import UpstreamUnavailable
from checkout.readiness import ReadinessCache
from checkout.state import get_state


@pytest.fixture
def upstream_calls(app, monkeypatch):
    """Counts upstream readiness calls; ``calls.fail = True`` makes the upstream unavailable."""
    with app.app_context():
        client = get_state().upstream
    original = client.onramp_assets

    class Calls(list):
        fail = False
        delay = 0.0

    calls = Calls()

    def counted(*args, **kwargs):
        calls.append(1)
        time.sleep(calls.delay)
        if calls.fail:
            raise UpstreamUnavailable("down")
        return original(*args, **kwargs)

    monkeypatch.setattr(client, "onramp_assets", counted)
    return calls


def test_many_hits_make_one_upstream_call(app, client, upstream_calls):
    for _ in range(10):
        response = client.get("/checkout/healthz")
        assert response.status_code == 200
        assert response.get_json()["checks"] == {"database": "ok", "upstream": "ok"}
    assert len(upstream_calls) == 1


def test_the_answer_is_refreshed_after_the_cache_time(app, client, upstream_calls):
    now = [1000.0]
    app.extensions["checkout"].readiness = ReadinessCache(clock=lambda: now[0])
    assert client.get("/checkout/healthz").status_code == 200
    upstream_calls.fail = True
    now[0] += 29
    assert client.get("/checkout/healthz").status_code == 200          # still the cached answer
    now[0] += 2
    response = client.get("/checkout/healthz")
    assert response.status_code == 503
    assert response.get_json()["checks"]["upstream"] == "unavailable"
    assert len(upstream_calls) == 2


def test_cache_time_is_configurable(config):
    from tests.conftest import make_app
    app = make_app({**config, "CHECKOUT_HEALTH_CACHE_SECONDS": 0})
    with app.app_context():
        client = get_state().upstream
    calls = []
    original = client.onramp_assets
    client.onramp_assets = lambda *a, **kw: (calls.append(1), original(*a, **kw))[1]
    for _ in range(3):
        app.test_client().get("/checkout/healthz")
    assert len(calls) == 3


def test_the_database_check_stays_live(app, client, upstream_calls, monkeypatch):
    assert client.get("/checkout/healthz").status_code == 200
    with app.app_context():
        engine = get_state().engine

    def down(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("database down"))

    monkeypatch.setattr(engine, "connect", down)
    response = client.get("/checkout/healthz")
    assert response.status_code == 503
    assert response.get_json()["checks"] == {"database": "unavailable", "upstream": "ok"}
    assert len(upstream_calls) == 1


def test_one_caller_refreshes_at_a_time(app, upstream_calls):
    upstream_calls.delay = 0.2
    statuses = []

    def hit():
        statuses.append(app.test_client().get("/checkout/healthz").status_code)

    threads = [threading.Thread(target=hit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 8
    assert len(upstream_calls) == 1


def test_an_expired_answer_is_served_while_another_caller_refreshes():
    now = [0.0]
    cache = ReadinessCache(clock=lambda: now[0])
    assert cache.get(30, lambda: "ok") == "ok"
    now[0] = 31.0
    started, release = threading.Event(), threading.Event()

    def slow_check():
        started.set()
        release.wait(5)
        return "unavailable"

    refresher = threading.Thread(target=cache.get, args=(30, slow_check))
    refresher.start()
    assert started.wait(5)
    # Meanwhile another caller is not queued behind the refresh and makes no call of its own.
    assert cache.get(30, lambda: pytest.fail("a second refresh")) == "ok"
    release.set()
    refresher.join()
    assert cache.get(30, lambda: pytest.fail("cached")) == "unavailable"
