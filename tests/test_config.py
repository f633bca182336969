"""Start-up configuration: a missing or weak setting fails in Checkout(app), naming the key."""
from __future__ import annotations

import pytest
from flask import Flask

from checkout import Checkout
from checkout.errors import ConfigurationError

REAL_UPSTREAM = {
    "CHECKOUT_API_BASE_URL": "https://api.exchange.example",
    "CHECKOUT_CLIENT_ID": "merchant-id",
    "CHECKOUT_WEBHOOK_SECRET": "merchant-webhook-secret",
    "CHECKOUT_LAUNCH_SECRET": "m" * 32,
    "CHECKOUT_PUBLIC_URL": "https://pay.shop.example",
}


def build(tmp_path, **config) -> Flask:
    app = Flask("host_site", instance_path=str(tmp_path / "instance"))
    app.config.update(CHECKOUT_DATABASE_URL=f"sqlite:///{tmp_path}/c.sqlite3", **config)
    Checkout(app)
    return app


@pytest.mark.parametrize("key", ["CHECKOUT_CLIENT_ID", "CHECKOUT_WEBHOOK_SECRET",
                                 "CHECKOUT_LAUNCH_SECRET"])
def test_missing_key_is_named_at_start_up_outside_the_sandbox(tmp_path, key):
    config = {k: v for k, v in REAL_UPSTREAM.items() if k != key}
    with pytest.raises(ConfigurationError, match=key):
        build(tmp_path, **config)


@pytest.mark.parametrize("empty", ["", None])
def test_empty_key_counts_as_missing(tmp_path, empty):
    with pytest.raises(ConfigurationError, match="CHECKOUT_LAUNCH_SECRET"):
        build(tmp_path, **{**REAL_UPSTREAM, "CHECKOUT_LAUNCH_SECRET": empty})


def test_short_launch_secret_is_refused(tmp_path):
    with pytest.raises(ConfigurationError, match="at least 32 bytes") as info:
        build(tmp_path, **{**REAL_UPSTREAM, "CHECKOUT_LAUNCH_SECRET": "s" * 31})
    assert "s" * 31 not in str(info.value)   # the message names the key, never the value


@pytest.mark.parametrize("value", ["false", "0", 0, None])
def test_an_on_off_setting_that_is_not_a_bool_is_refused_before_the_database_is_touched(
        tmp_path, value):
    # "false" from an environment variable would otherwise upgrade a database meant to be refused.
    with pytest.raises(ConfigurationError, match="CHECKOUT_DATABASE_AUTO_UPGRADE must be True or"):
        build(tmp_path, CHECKOUT_DATABASE_AUTO_UPGRADE=value)
    assert not (tmp_path / "c.sqlite3").exists()


def test_complete_configuration_starts(tmp_path):
    app = build(tmp_path, **REAL_UPSTREAM)
    assert app.extensions["checkout"].sandbox is None


@pytest.mark.parametrize("trusted", [{"CHECKOUT_PUBLIC_URL": "https://pay.shop.example"},
                                     {"SERVER_NAME": "pay.shop.example"},
                                     {"TRUSTED_HOSTS": ["pay.shop.example"]}])
def test_outside_the_sandbox_a_trusted_public_address_is_required(tmp_path, trusted):
    config = {k: v for k, v in REAL_UPSTREAM.items() if k != "CHECKOUT_PUBLIC_URL"}
    with pytest.raises(ConfigurationError, match="CHECKOUT_PUBLIC_URL.*SERVER_NAME.*TRUSTED_HOSTS"):
        build(tmp_path, **config)
    build(tmp_path, **config, **trusted)


@pytest.mark.parametrize("public_url", ["pay.shop.example", "https://pay.shop.example/checkout",
                                        "https://pay.shop.example?x=1", "ftp://pay.shop.example",
                                        "http://pay.shop.example", "https://u:p@pay.shop.example"])
def test_a_public_url_must_be_an_https_origin(tmp_path, public_url):
    with pytest.raises(ConfigurationError, match="CHECKOUT_PUBLIC_URL must"):
        build(tmp_path, **{**REAL_UPSTREAM, "CHECKOUT_PUBLIC_URL": public_url})


def test_sandbox_needs_no_credentials(tmp_path):
    app = build(tmp_path)
    assert app.extensions["checkout"].sandbox is not None
    assert len(app.config["CHECKOUT_LAUNCH_SECRET"]) >= 32


@pytest.mark.parametrize("ancestors", ["https://shop.test", [1]])
def test_frame_ancestors_must_be_a_list_of_strings(tmp_path, ancestors):
    with pytest.raises(ConfigurationError, match="CHECKOUT_FRAME_ANCESTORS"):
        build(tmp_path, CHECKOUT_FRAME_ANCESTORS=ancestors)


def test_a_create_grace_shorter_than_a_create_can_last_is_refused(tmp_path):
    """A create is only looked up for the grace period: shorter than twice the longest a create
    call may wait, a second one could be sent while the upstream still works on the first."""
    with pytest.raises(ConfigurationError, match="CHECKOUT_CREATE_GRACE"):
        build(tmp_path, CHECKOUT_HTTP_TIMEOUT=(3.05, 20.0))
    build(tmp_path, CHECKOUT_HTTP_TIMEOUT=(3.05, 20.0), CHECKOUT_CREATE_GRACE=50)


@pytest.mark.parametrize("days", [0, -1, "365", True, None, float("inf"), float("nan"), 3651,
                                  1e6])
def test_the_days_kyc_levels_are_remembered_must_be_a_positive_number(tmp_path, days):
    with pytest.raises(ConfigurationError, match="CHECKOUT_KYC_REMEMBER_DAYS"):
        build(tmp_path, CHECKOUT_KYC_REMEMBER_DAYS=days)


@pytest.mark.parametrize("base", ["http://api.exchange.example", "http://10.0.0.5:8080",
                                  "ftp://api.exchange.example", "api.exchange.example"])
def test_cleartext_upstream_is_refused_at_start_up(tmp_path, base):
    # The client id (and signed requests) would cross the network in cleartext.
    with pytest.raises(ConfigurationError, match="CHECKOUT_API_BASE_URL"):
        build(tmp_path, **{**REAL_UPSTREAM, "CHECKOUT_API_BASE_URL": base})


@pytest.mark.parametrize("base", ["http://127.0.0.1:9", "http://127.8.0.1", "http://localhost:5000",
                                  "http://[::1]:8080", "https://api.exchange.example"])
def test_https_or_loopback_upstream_is_accepted(tmp_path, base):
    app = build(tmp_path, **{**REAL_UPSTREAM, "CHECKOUT_API_BASE_URL": base})
    assert app.config["CHECKOUT_API_BASE_URL"] == base


def test_cleartext_upstream_can_be_allowed_explicitly(tmp_path):
    app = build(tmp_path, **{**REAL_UPSTREAM, "CHECKOUT_API_BASE_URL": "http://exchange.internal",
                             "CHECKOUT_ALLOW_INSECURE_UPSTREAM": True})
    assert app.config["CHECKOUT_ALLOW_INSECURE_UPSTREAM"] is True


def test_new_defaults_are_declared():
    from checkout.config import DEFAULTS
    assert DEFAULTS["CHECKOUT_CREATE_GRACE"] == 40
    assert DEFAULTS["CHECKOUT_HEALTH_CACHE_SECONDS"] == 30
    assert DEFAULTS["CHECKOUT_ALLOW_INSECURE_UPSTREAM"] is False


ENDLESS = float("inf")


@pytest.mark.parametrize("key, value", [
    ("CHECKOUT_REQUEST_BUDGET", ENDLESS),
    ("CHECKOUT_CREATE_GRACE", ENDLESS),
    ("CHECKOUT_BREAKER_RESET_SECONDS", ENDLESS),
    ("CHECKOUT_BREAKER_RESET_SECONDS", float("nan")),
    ("CHECKOUT_BREAKER_WINDOW_SECONDS", ENDLESS),
    ("CHECKOUT_HTTP_TIMEOUT", (3.05, ENDLESS)),
    ("CHECKOUT_UPSTREAM_TIMEOUTS", {"read": (ENDLESS, 10.0)}),
])
def test_an_endless_wait_is_refused_at_start_up(tmp_path, key, value):
    """inf is "above 0" but no number of seconds: a socket cannot be given it as a timeout
    (OverflowError, at the first upstream call made outside a page's budget), and a page's
    budget or a breaker's pause of inf is none. NaN is no number at all."""
    with pytest.raises(ConfigurationError, match=key):
        build(tmp_path, **{key: value})


def test_the_breakers_settings_of_an_earlier_release_are_refused_naming_what_replaces_them(
        tmp_path):
    """CHECKOUT_BREAKER_FAILURES counted failures in a row: read as anything else it would not
    mean what its operator meant, and ignored it would seem to hold."""
    with pytest.raises(ConfigurationError, match="CHECKOUT_BREAKER_FAILURES is no longer read.*"
                       "CHECKOUT_BREAKER_MIN_CALLS.*CHECKOUT_BREAKER_FAILURE_RATIO"):
        build(tmp_path, CHECKOUT_BREAKER_FAILURES=2)


@pytest.mark.parametrize(("key", "value"), [
    ("CHECKOUT_BREAKER_FAILURE_RATIO", 0), ("CHECKOUT_BREAKER_FAILURE_RATIO", 1.5),
    ("CHECKOUT_BREAKER_FAILURE_RATIO", "half"), ("CHECKOUT_BREAKER_MIN_CALLS", 0),
    ("CHECKOUT_BREAKER_MIN_CALLS", 2.5), ("CHECKOUT_BREAKER_WINDOW_SECONDS", -1),
])
def test_a_breaker_setting_that_is_not_one_is_refused_at_start_up(tmp_path, key, value):
    with pytest.raises(ConfigurationError, match=key):
        build(tmp_path, **{key: value})


def test_the_breakers_are_built_from_their_settings(tmp_path):
    app = build(tmp_path, CHECKOUT_BREAKER_MIN_CALLS=10, CHECKOUT_BREAKER_FAILURE_RATIO=0.25,
                CHECKOUT_BREAKER_WINDOW_SECONDS=60, CHECKOUT_BREAKER_RESET_SECONDS=2)
    settings = app.extensions["checkout"].upstream.transport.breakers.settings
    assert (settings.min_calls, settings.failure_ratio, settings.window, settings.open_for) == (
        10, 0.25, 60.0, 2.0)
