"""The embedded sandbox: checked at start-up, built on its first call."""
from __future__ import annotations

import pytest

from checkout.errors import ConfigurationError

from .conftest import make_app


@pytest.mark.parametrize(("setting", "named"), [
    ({"SANDBOX_OUTCOME": "maybe"}, "SANDBOX_OUTCOME must be"),
    ({"SANDBOX_WEBHOOK_SECRET": None}, "SANDBOX_WEBHOOK_SECRET must not be empty"),
    ({"SANDBOX_WEBHOOK_SECRET": ""}, "SANDBOX_WEBHOOK_SECRET must not be empty"),
    ({"SANDBOX_CLIENT_SECRET": "%%%not-base64"}, "SANDBOX_CLIENT_SECRET: .* not valid Base64"),
    ({"SANDBOX_WEBHOOK_EVENTS": 5}, "SANDBOX_WEBHOOK_EVENTS must be a list"),
])
def test_a_wrong_sandbox_setting_fails_at_start_up_naming_it(config, setting, named):
    """Everything the sandbox would refuse when it is built is refused when the host starts:
    it is built only on its first call, mid-checkout, where a refusal would be a broken page."""
    config["CHECKOUT_SANDBOX"] = setting
    with pytest.raises(ConfigurationError, match=f"CHECKOUT_SANDBOX: {named}"):
        make_app(config)


def test_a_wrong_sandbox_setting_is_refused_before_the_database_is_touched(config, tmp_path):
    fresh = tmp_path / "never-made.sqlite3"
    config["CHECKOUT_DATABASE_URL"] = f"sqlite:///{fresh}"
    config["CHECKOUT_SANDBOX"] = {"SANDBOX_OUTCOME": "maybe"}
    with pytest.raises(ConfigurationError, match="CHECKOUT_SANDBOX: SANDBOX_OUTCOME"):
        make_app(config)
    assert not fresh.exists()


def test_sandbox_settings_that_are_not_a_dict_are_named(config):
    config["CHECKOUT_SANDBOX"] = "SANDBOX_OUTCOME=expire"
    with pytest.raises(ConfigurationError, match="CHECKOUT_SANDBOX must be a dict"):
        make_app(config)


def test_a_credential_the_sandbox_refuses_is_named_by_the_hosts_key(config):
    config["CHECKOUT_CLIENT_SECRET"] = "%%%not-base64"
    with pytest.raises(ConfigurationError, match=r"^CHECKOUT_CLIENT_SECRET .*not valid Base64") \
            as refused:
        make_app(config)
    assert "%%%" not in str(refused.value)           # never the secret itself


def test_it_is_built_on_its_first_call_and_once(app):
    embedded = app.extensions["checkout"].embedded_sandbox
    assert not embedded.built                   # an app that never calls the upstream: never built
    client = app.test_client()
    # A page that asks the upstream nothing (not the health check: it starts a background check
    # of the upstream, which builds it as soon as that thread runs).
    assert client.get("/checkout/s/no-such-session/").status_code == 404
    assert not embedded.built
    upstream = app.extensions["checkout"].upstream
    with app.app_context():
        assert upstream.util_countries()        # the first call builds it, and it answers
    assert embedded.built
    first = embedded.app
    with app.app_context():
        upstream.util_countries()
    assert embedded.app is first
