"""Counts kept in a real Redis server: shared by two gunicorn workers (and two apps), keyed apart
from a host's own limiter, with no session id in any key; and when the store is down, the checkout
fails open (counting in each process's memory) rather than refusing anyone."""
from __future__ import annotations

import json
import logging
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis as redis_client
import requests

from ..conftest import make_app
from ..gunicorn_support import free_port, gunicorn_workers
from ..launch_support import session_id_from
from ..redis_server import RedisServer
from .conftest import Shopper

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def redis_url(redis) -> str:
    """The run's Redis server, emptied for this test."""
    redis_client.Redis.from_url(redis.url).flushdb()
    return redis.url


def redis_keys(url: str) -> list[str]:
    return sorted(key.decode() for key in redis_client.Redis.from_url(url).keys("*"))


def test_two_apps_on_one_store_share_the_counts(config, tmp_path, redis_url):
    one = make_app({**config, "CHECKOUT_RATELIMIT_STORAGE_URI": redis_url,
                    "CHECKOUT_RATELIMITS": {"open_per_ip": "3/minute"}})
    two = make_app({**config, "_instance_path": str(tmp_path / "two"),
                    "CHECKOUT_DATABASE_URL": f"sqlite:///{tmp_path}/two.sqlite3",
                    "CHECKOUT_RATELIMIT_STORAGE_URI": redis_url,
                    "CHECKOUT_RATELIMITS": {"open_per_ip": "3/minute"}})
    Shopper(one).open_session()
    Shopper(two).open_session()
    Shopper(one).open_session()
    assert Shopper(two).get("/onramp").status_code == 429
    assert Shopper(one).get("/onramp").status_code == 429


def test_keys_hold_no_session_id_and_stay_apart_from_the_hosts(config, redis_url):
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address

    app = make_app({**config, "CHECKOUT_RATELIMIT_STORAGE_URI": redis_url})
    host_limiter = Limiter(get_remote_address, app=app, storage_uri=redis_url,
                           default_limits=["100/minute"])

    @app.get("/basket")
    def basket():
        return "basket"

    shopper = Shopper(app)
    session = shopper.open_session()
    for path in ("/", "/quote?amount=5", "/status/live"):
        shopper.get(f"/s/{session}{path}")
    app.test_client().get("/basket")
    keys = redis_keys(redis_url)
    ours = [k for k in keys if k.startswith("checkout-ratelimits:LIMITER/checkout/")]
    theirs = [k for k in keys if k.startswith("LIMITS:")]
    assert ours and theirs and len(ours) + len(theirs) == len(keys)
    assert not any(session in key for key in keys)
    assert {k.split("/")[3] for k in ours} >= {"page_per_session", "quote_per_session",
                                               "poll_per_session", "open_per_ip"}
    app.extensions["checkout"].ratelimits.reset()
    assert redis_keys(redis_url) == theirs                   # ours cleared, the host's kept
    assert host_limiter.storage.check()


def test_a_store_that_cannot_be_reached_fails_open_and_still_counts_per_process(config,
                                                                                 caplog):
    down = f"redis://127.0.0.1:{free_port()}/0"           # nothing listens there
    app = make_app({**config, "CHECKOUT_RATELIMIT_STORAGE_URI": down,
                    "CHECKOUT_RATELIMITS": {"open_per_ip": "3/minute"}})
    caplog.set_level(logging.WARNING)
    shopper = Shopper(app)
    started = time.monotonic()
    for _ in range(3):
        shopper.open_session()                              # users can still start and pay
    assert time.monotonic() - started < 5
    assert shopper.get("/onramp").status_code == 429          # counted in this process
    warnings = [r for r in caplog.records if "falling back to in-memory" in r.getMessage()]
    assert len(warnings) == 1                                 # one warning, not one per request


def test_the_store_going_down_mid_way(config):
    server = RedisServer()
    server.start()
    try:
        app = make_app({**config, "CHECKOUT_RATELIMIT_STORAGE_URI": server.url,
                        "CHECKOUT_RATELIMITS": {"open_per_ip": "5/minute"}})
        shopper = Shopper(app)
        shopper.open_session()
        assert redis_keys(server.url)
        server.stop()
        started = time.monotonic()
        # Counting starts again in this process's memory: five more, then the limit.
        for _ in range(5):
            shopper.open_session()
        assert time.monotonic() - started < 5
        assert shopper.get("/onramp").status_code == 429
    finally:
        server.remove()


@pytest.mark.postgres
def test_two_gunicorn_workers_hold_one_limit(config, postgres_url, redis_url, tmp_path):
    # Tables first, once, as a deploy step would.
    make_app({**config, "CHECKOUT_DATABASE_URL": postgres_url})
    limits = {"open_per_ip": "20/minute", "quote_per_session": "15/minute"}
    env = {"CHECKOUT_TEST_DATABASE_URL": postgres_url, "CHECKOUT_TEST_REDIS_URL": redis_url,
           "CHECKOUT_TEST_RATELIMITS": json.dumps(limits)}
    with gunicorn_workers("tests.ratelimits.gunicorn_app:create()", env, tmp_path,
                          access_format="%(p)s %(s)s %(U)s") as (port, access_log):
        base = f"http://127.0.0.1:{port}/checkout"

        def get(path):
            # A new connection each time, so that both workers take requests.
            response = requests.get(base + path, headers={"Connection": "close"},
                                    allow_redirects=False, timeout=20)
            return response.status_code, response.headers.get("Location")

        with ThreadPoolExecutor(8) as pool:
            opened = list(pool.map(get, ["/onramp"] * 60))
        assert Counter(code for code, _ in opened) == Counter({303: 20, 429: 40})
        session_id = session_id_from(next(location for code, location in opened
                                          if code == 303))
        with ThreadPoolExecutor(8) as pool:
            priced = list(pool.map(get, [f"/s/{session_id}/quote?amount={n}"
                                         for n in range(40)]))
        assert Counter(code for code, _ in priced) == Counter({200: 15, 429: 25})
        served = [line.split() for line in access_log.read_text().splitlines()]
        # Both workers answered the hammered address, and together let exactly 20 through.
        assert len({pid for pid, _status, path in served if path == "/checkout/onramp"}) == 2
        assert not any(session_id in key for key in redis_keys(redis_url))
