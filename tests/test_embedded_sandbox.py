"""The embedded sandbox: checked at start-up, built on its first call."""
from __future__ import annotations

import pytest

from checkout.errors import ConfigurationError

from .conftest import make_app


def test_a_wrong_sandbox_setting_fails_at_start_up_naming_it(config):
    config["CHECKOUT_SANDBOX"] = {"SANDBOX_OUTCOME": "maybe"}
    with pytest.raises(ConfigurationError, match="CHECKOUT_SANDBOX: SANDBOX_OUTCOME must be"):
        make_app(config)


def test_it_is_built_on_its_first_call_and_once(app):
    embedded = app.extensions["checkout"].embedded_sandbox
    assert not embedded.built                   # an app that never calls the upstream: never built
    client = app.test_client()
    assert client.get("/checkout/healthz").status_code == 200
    assert not embedded.built
    upstream = app.extensions["checkout"].upstream
    with app.app_context():
        assert upstream.util_countries()        # the first call builds it, and it answers
    assert embedded.built
    first = embedded.app
    with app.app_context():
        upstream.util_countries()
    assert embedded.app is first
