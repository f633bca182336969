"""``GET {prefix}/metrics``: absent without ``CHECKOUT_METRICS_TOKEN``, and with it served only to
requests bearing the token; a token that cannot be used fails at start-up, naming the key."""
from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest
from prometheus_client import REGISTRY

from checkout.errors import ConfigurationError
from checkout.metrics import MULTIPROC_ENV

from ..conftest import make_app
from ..gunicorn_support import ROOT
from .support import PATH, TOKEN, bearer, scrape


@pytest.fixture
def config(config) -> dict:
    config["CHECKOUT_METRICS_TOKEN"] = TOKEN
    return config


def test_without_the_token_the_address_is_the_ordinary_404_page(config):
    del config["CHECKOUT_METRICS_TOKEN"]
    client = make_app(dict(config)).test_client()
    answer = client.get(PATH, headers=bearer())
    unknown = client.get("/checkout/no-such-page", headers=bearer())
    assert answer.status_code == 404 and "WWW-Authenticate" not in answer.headers
    assert answer.get_data() == unknown.get_data()
    assert answer.content_type == unknown.content_type == "text/html; charset=utf-8"


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": f"Bearer {TOKEN[:-1]}"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": "Bearer nötatoken"},
], ids=["none", "empty", "basic", "shorter", "longer", "not-ascii"])
def test_a_request_without_the_right_bearer_token_gets_401_and_no_metrics(app, headers):
    answer = app.test_client().get(PATH, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer ")
    assert "checkout_" not in answer.get_data(as_text=True)
    assert answer.headers["Cache-Control"] == "no-store"


def test_the_token_in_the_query_string_is_not_accepted(app):
    assert app.test_client().get(PATH, query_string={"token": TOKEN}).status_code == 401


def test_the_scrape_is_the_prometheus_text_format_with_the_checkouts_headers(app):
    client = app.test_client()
    client.get("/checkout/onramp")
    answer = client.get(PATH, headers=bearer())
    assert answer.status_code == 200
    assert answer.content_type == "text/plain; version=0.0.4; charset=utf-8"
    assert answer.headers["Cache-Control"] == "no-store"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    text = answer.get_data(as_text=True)
    assert "# TYPE checkout_sessions_opened_total counter" in text
    assert "# TYPE checkout_orders gauge" in text
    assert TOKEN not in text
    # A scraper that asks for OpenMetrics gets it.
    open_metrics = client.get(PATH, headers={**bearer(),
                                             "Accept": "application/openmetrics-text"})
    assert open_metrics.content_type.startswith("application/openmetrics-text")
    assert open_metrics.get_data(as_text=True).endswith("# EOF\n")


def test_two_apps_in_one_process_count_apart_and_never_in_the_global_registry(config, tmp_path):
    first = make_app(dict(config))
    second = make_app({**config, "CHECKOUT_DATABASE_URL": f"sqlite:///{tmp_path}/second.db"})
    for _ in range(3):
        first.test_client().get("/checkout/onramp")
    second.test_client().get("/checkout/offramp")
    opened = "checkout_sessions_opened_total"
    assert scrape(first.test_client()).value(opened, flow="onramp") == 3
    assert scrape(first.test_client()).value(opened, flow="offramp") == 0
    assert scrape(second.test_client()).value(opened) == 1
    assert REGISTRY.get_sample_value(opened, {"flow": "onramp", "start": "unsigned"}) is None


@pytest.mark.parametrize(("token", "problem"), [
    (12345678901234567890123456789012345, "must be a string"),
    (b"metrics-token-for-tests-0123456789abcdef", "must be a string"),
    ("short-token", "too short"),
    ("a metrics token with spaces in it, long enough", "may hold only"),
    ("metrics-token-for-tests-0123456789abcdef\n", "may hold only"),
])
def test_a_token_that_cannot_be_used_fails_at_start_up_naming_the_key(config, token, problem):
    with pytest.raises(ConfigurationError, match=problem) as failed:
        make_app({**config, "CHECKOUT_METRICS_TOKEN": token})
    assert "CHECKOUT_METRICS_TOKEN" in str(failed.value)
    assert str(token) not in str(failed.value)


@pytest.mark.parametrize("seconds", [-1, "30", None, True])
def test_a_bad_orders_cache_duration_fails_at_start_up(config, seconds):
    with pytest.raises(ConfigurationError, match="CHECKOUT_METRICS_ORDERS_CACHE_SECONDS"):
        make_app({**config, "CHECKOUT_METRICS_ORDERS_CACHE_SECONDS": seconds})


def test_under_gunicorn_without_the_multiprocess_directory_a_warning_says_why(config, caplog,
                                                                             monkeypatch):
    monkeypatch.delenv(MULTIPROC_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "gunicorn", types.ModuleType("gunicorn"))
    make_app(dict(config))
    [warning] = [r.getMessage() for r in caplog.records if r.name == "checkout.metrics"]
    assert MULTIPROC_ENV in warning and "one worker" in warning


def test_a_multiprocess_directory_that_does_not_exist_fails_at_start_up(config, tmp_path,
                                                                       monkeypatch):
    monkeypatch.setenv(MULTIPROC_ENV, str(tmp_path / "missing"))
    with pytest.raises(ConfigurationError, match=MULTIPROC_ENV):
        make_app(dict(config))


def test_a_multiprocess_directory_set_after_prometheus_client_was_imported_fails(
        config, tmp_path, monkeypatch):
    # This test process imported prometheus_client without the variable: its counts stay in
    # memory, and a scrape reading the directory would show none of them.
    monkeypatch.setenv(MULTIPROC_ENV, str(tmp_path))
    with pytest.raises(ConfigurationError, match="imported before"):
        make_app(dict(config))


def test_without_the_token_nothing_is_counted_and_prometheus_client_is_not_imported(tmp_path):
    # In a process of its own: this one imported prometheus_client long ago.
    program = (
        "import sys\n"
        "from flask import Flask\n"
        "from checkout import Checkout\n"
        "app = Flask('host', instance_path=sys.argv[1])\n"
        "app.config['CHECKOUT_DATABASE_URL'] = 'sqlite:///' + sys.argv[1] + '/c.sqlite3'\n"
        "app.config['CHECKOUT_WEBHOOK_BACKGROUND'] = False\n"
        "Checkout(app)\n"
        "client = app.test_client()\n"
        "assert client.get('/checkout/onramp').status_code == 303\n"
        "assert client.get('/checkout/metrics').status_code == 404\n"
        "assert app.extensions['checkout'].metrics.enabled is False\n"
        "print('prometheus_client' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
