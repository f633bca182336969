"""Launch tokens: what opens a session, what gets a clear 4xx page, and the URL builders."""
from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from joserfc import jwt
from joserfc.jwk import OctKey

from checkout import Checkout
from checkout.errors import LaunchTokenError
from checkout.launch import MAX_TOKEN_LENGTH, launch_url, normalize_origin, verify_token
from checkout.state import get_state

from .conftest import make_app
from .launch_support import claims, install_flow_stub, session_count, session_id_from, sign, unsigned

SHOP = "https://shop.test"


@pytest.fixture
def app(app):
    install_flow_stub(app)
    return app


def launch(client, token):
    return client.get("/checkout/launch", query_string={"token": token})


def assert_refused(response, app, text: str, before: int = 0):
    """A clear 400 page in the chrome, saying ``text``, and no session."""
    assert response.status_code == 400
    body = response.get_data(as_text=True)
    assert text in body
    assert '<main id="checkout-main"' in body          # the checkout's chrome, not a bare error
    assert "Traceback" not in body
    assert "Location" not in response.headers
    assert session_count(app) == before


class TestValidToken:
    def test_opens_a_session_with_prefill_and_locks(self, app, client):
        token = sign(app, claims(network="celo", asset="USDC", amount=5000, currency="local",
                                 countryIsoCode="ng", lock=["network", "asset"],
                                 parentOrigin=SHOP, returnUrl=SHOP + "/basket?x=1",
                                 orderParams="basket-42", locale="fr"))
        response = launch(client, token)
        assert response.status_code == 303
        sid = session_id_from(response.headers["Location"])
        with app.app_context():
            session = get_state().sessions.get(sid)
        assert session.flow == "onramp"
        assert session.claims == {"network": "CELO", "asset": "USDC", "amount": "5000",
                                  "currency": "local", "countryIsoCode": "NG",
                                  "parentOrigin": SHOP, "returnUrl": SHOP + "/basket?x=1",
                                  "orderParams": "basket-42", "locale": "fr"}
        assert sorted(session.locked) == ["asset", "network"]
        assert session.value("network") == "CELO"
        # The token itself is not kept in the session: only its jti.
        assert token not in repr(session)

    def test_redirect_goes_to_the_session_page(self, app, client):
        response = launch(client, sign(app, claims()))
        page = client.get(response.headers["Location"])
        assert page.status_code == 200
        assert "token=" not in response.headers["Location"]

    def test_same_token_twice_returns_the_same_session(self, app, client):
        token = sign(app, claims(amount="12.50"))
        first = launch(client, token).headers["Location"]
        second = launch(client, token).headers["Location"]
        assert first == second
        assert session_count(app) == 1

    def test_two_tokens_open_two_sessions(self, app, client):
        a = launch(client, sign(app, claims())).headers["Location"]
        b = launch(client, sign(app, claims())).headers["Location"]
        assert a != b

    def test_amount_is_kept_as_an_exact_decimal_string(self, app):
        with app.app_context():
            assert verify_token(app, sign(app, claims(amount=0.1)))["amount"] == "0.1"
            assert verify_token(app, sign(app, claims(amount="1500.00")))["amount"] == "1500"

    def test_nbf_in_the_past_is_accepted(self, app):
        with app.app_context():
            verify_token(app, sign(app, claims(nbf=int(time.time()) - 5)))


class TestRefusedTokens:
    def test_tampered_payload(self, app, client):
        header, payload, signature = sign(app, claims(amount=10)).split(".")
        other = sign(app, claims(amount=10_000)).split(".")[1]
        assert_refused(launch(client, f"{header}.{other}.{signature}"), app, "has been changed")

    def test_signed_with_another_key(self, app, client):
        token = sign(app, claims(), secret="another-merchant-secret-of-32-bytes-or-more")
        assert_refused(launch(client, token), app, "has been changed")

    def test_expired(self, app, client):
        now = int(time.time())
        token = sign(app, claims(iat=now - 1200, exp=now - 300))
        assert_refused(launch(client, token), app, "has expired")

    def test_over_long(self, app, client):
        token = sign(app, claims(orderParams="x" * 1000, memo="m" * 100, address="a" * 256,
                                 returnUrl=SHOP + "/" + "p" * 2000, parentOrigin=SHOP))
        assert len(token) > MAX_TOKEN_LENGTH
        assert_refused(launch(client, token), app, "too long")

    def test_missing_token(self, app, client):
        assert_refused(client.get("/checkout/launch"), app, "not valid")

    @pytest.mark.parametrize("token", ["abc", "a.b.c", "a.b", "....", "eyJ.eyJ.x", " "])
    def test_garbage(self, app, client, token):
        assert_refused(launch(client, token), app, "not valid")

    @pytest.mark.parametrize("missing", ["jti", "iat", "exp"])
    def test_required_claim_missing(self, app, client, missing):
        assert_refused(launch(client, sign(app, claims(**{missing: None}))), app,
                       "settings we cannot use")

    def test_lifetime_over_30_minutes(self, app, client):
        now = int(time.time())
        token = sign(app, claims(iat=now, exp=now + 30 * 60 + 1))
        assert_refused(launch(client, token), app, "settings we cannot use")

    def test_exactly_30_minutes_is_allowed(self, app, client):
        now = int(time.time())
        assert launch(client, sign(app, claims(iat=now, exp=now + 30 * 60))).status_code == 303

    def test_issued_in_the_future(self, app, client):
        now = int(time.time())
        token = sign(app, claims(iat=now + 3600, exp=now + 3900))
        assert_refused(launch(client, token), app, "settings we cannot use")

    def test_alg_none(self, app, client):
        assert_refused(launch(client, unsigned(claims())), app, "not valid")

    def test_unsigned_token_that_locks(self, app, client):
        token = unsigned(claims(network="CELO", lock=["network"]))
        assert_refused(launch(client, token), app, "not valid")

    def test_hs512_with_the_right_key(self, app, client):
        assert_refused(launch(client, sign(app, claims(), alg="HS512")), app, "not valid")

    def test_alg_header_rewritten_to_none_keeps_no_signature_check(self, app, client):
        _, payload, signature = sign(app, claims()).split(".")
        header = unsigned({}).split(".")[0]
        assert_refused(launch(client, f"{header}.{payload}.{signature}"), app, "not valid")

    def test_lock_of_an_unknown_claim(self, app, client):
        token = sign(app, claims(network="CELO", lock=["network", "rate"]))
        assert_refused(launch(client, token), app, "settings we cannot use")

    @pytest.mark.parametrize("name", ["flow", "parentOrigin", "jti", "orderParams"])
    def test_lock_of_a_claim_that_is_not_a_choice(self, app, client, name):
        token = sign(app, claims(parentOrigin=SHOP, orderParams="x", lock=[name]))
        assert_refused(launch(client, token), app, "settings we cannot use")

    def test_locked_claim_without_value(self, app, client):
        token = sign(app, claims(network="CELO", lock=["network", "asset"]))
        assert_refused(launch(client, token), app, "settings we cannot use")

    def test_lock_not_a_list(self, app, client):
        token = sign(app, claims(network="CELO", lock="network"))
        assert_refused(launch(client, token), app, "settings we cannot use")

    def test_unknown_claim(self, app, client):
        assert_refused(launch(client, sign(app, claims(rate=1))), app, "settings we cannot use")

    @pytest.mark.parametrize("bad", [
        {"flow": "swap"}, {"flow": None}, {"amount": "ten"}, {"amount": -5}, {"amount": 0},
        {"amount": True}, {"amount": "NaN"}, {"amount": "1e40"}, {"currency": "usd"},
        {"countryIsoCode": "NGA"}, {"network": "celo chain"}, {"email": "not-an-email"},
        {"phoneNumber": "call me"}, {"locale": "en;q=1"}, {"jti": "short"},
        {"network": 5}, {"address": "has space"}, {"iat": "yesterday"}, {"exp": True},
    ])
    def test_malformed_claims(self, app, client, bad):
        assert_refused(launch(client, sign(app, claims(**bad))), app, "settings we cannot use")

    def test_return_url_on_a_foreign_origin(self, app, client):
        token = sign(app, claims(parentOrigin=SHOP, returnUrl="https://evil.test/phish"))
        assert_refused(launch(client, token), app, "cannot be opened from this website")

    def test_return_url_on_an_ancestor_without_parent_origin(self, app, client):
        token = sign(app, claims(returnUrl=SHOP + "/done"))
        assert launch(client, token).status_code == 303

    def test_return_url_not_http(self, app, client):
        token = sign(app, claims(returnUrl="javascript:alert(1)"))
        assert_refused(launch(client, token), app, "settings we cannot use")

    def test_parent_origin_not_allowed(self, app, client):
        token = sign(app, claims(parentOrigin="https://evil.test"))
        assert_refused(launch(client, token), app, "cannot be opened from this website")

    @pytest.mark.parametrize("origin", ["https://shop.test/", "https://shop.test/path",
                                        "shop.test", "https://user@shop.test", "ftp://shop.test",
                                        "*"])
    def test_parent_origin_not_an_origin(self, app, client, origin):
        assert_refused(launch(client, sign(app, claims(parentOrigin=origin))), app,
                       "settings we cannot use")

    def test_error_page_does_not_echo_the_token(self, app, client):
        token = sign(app, claims(rate=1))
        body = launch(client, token).get_data(as_text=True)
        assert token not in body
        assert token.split(".")[1] not in body

    def test_developer_detail_names_the_problem(self, app):
        with app.app_context(), pytest.raises(LaunchTokenError) as info:
            verify_token(app, sign(app, claims(parentOrigin="https://evil.test")))
        assert "CHECKOUT_FRAME_ANCESTORS" in info.value.detail


class TestNormalizeOrigin:
    @pytest.mark.parametrize("value, expected", [
        ("https://Shop.Test", "https://shop.test"),
        ("https://shop.test:443", "https://shop.test"),
        ("http://127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("http://localhost:80", "http://localhost"),
        ("https://shop.test/a", None), ("https://shop.test?x", None), ("data:,x", None),
        ("https://shop.test:99999", None), ("", None),
    ])
    def test_origins(self, value, expected):
        assert normalize_origin(value) == expected


class TestUnsignedStart:
    def test_onramp_opens_a_new_session_each_time(self, app, client):
        first = client.get("/checkout/onramp")
        second = client.get("/checkout/onramp")
        assert first.status_code == second.status_code == 303
        assert first.headers["Location"] != second.headers["Location"]
        with app.app_context():
            session = get_state().sessions.get(session_id_from(first.headers["Location"]))
        assert session.flow == "onramp" and session.locked == [] and session.jti is None

    def test_onramp_ignores_prefill_in_the_query_string(self, app, client):
        response = client.get("/checkout/onramp?network=CELO&lock=network&locale=sw")
        with app.app_context():
            session = get_state().sessions.get(session_id_from(response.headers["Location"]))
        assert session.claims == {"locale": "sw"}
        assert session.locked == []

    def test_offramp_opens_an_unsigned_sale(self, app, client):
        response = client.get("/checkout/offramp")
        assert response.status_code == 303
        with app.app_context():
            session = get_state().sessions.get(session_id_from(response.headers["Location"]))
        assert session.flow == "offramp" and session.locked == []
        body = client.get(response.headers["Location"]).get_data(as_text=True)
        assert "Sell crypto" in body and '<main id="checkout-main"' in body

    def test_an_offramp_token_opens_a_sale(self, app, client):
        response = launch(client, sign(app, claims(flow="offramp", currency="usd")))
        assert response.status_code == 303
        assert "Sell crypto" in client.get(response.headers["Location"]).get_data(as_text=True)


class TestLocksThatNeedTheirScope:
    """A locked amount is a number in a currency (local money: of one country); a locked address
    or memo is on a network."""

    @pytest.mark.parametrize("locked, implied", [
        (["amount"], ["amount", "countryIsoCode", "currency"]),
        (["address"], ["address", "network"]),
        (["memo"], ["memo", "network"]),
        (["address", "memo", "amount"],
         ["address", "amount", "countryIsoCode", "currency", "memo", "network"]),
    ])
    def test_lock_implies_its_scope(self, app, locked, implied):
        with app.app_context():
            url = launch_url(app, "onramp", amount="100", currency="local", network="STELLAR",
                             countryIsoCode="NG", address="GABC", memo="42", lock=locked)
            verified = verify_token(app, parse_qs(urlsplit(url).query)["token"][0])
        assert verified["lock"] == sorted(implied)

    def test_session_of_an_amount_lock_has_the_currency_locked(self, app, client):
        token = sign(app, claims(amount="100", currency="local", countryIsoCode="NG",
                                 lock=["amount"]))
        response = launch(client, token)
        assert response.status_code == 303
        with app.app_context():
            session = get_state().sessions.get(session_id_from(response.headers["Location"]))
        assert sorted(session.locked) == ["amount", "countryIsoCode", "currency"]

    def test_a_locked_crypto_amount_leaves_the_country_free(self, app):
        with app.app_context():
            url = launch_url(app, "onramp", amount="10", currency="crypto", lock=["amount"])
            verified = verify_token(app, parse_qs(urlsplit(url).query)["token"][0])
        assert verified["lock"] == ["amount", "currency"]

    def test_an_address_is_kept_with_its_checksum_when_the_network_is_known(self, app):
        lower = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
        with app.app_context():
            url = launch_url(app, "onramp", network="CELO", address=lower, lock=["address"])
            verified = verify_token(app, parse_qs(urlsplit(url).query)["token"][0])
        assert verified["address"] == "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

    @pytest.mark.parametrize("extra, locked, needed", [
        ({"amount": "100"}, ["amount"], "currency"),
        ({"amount": "100", "currency": "local"}, ["amount"], "countryIsoCode"),
        ({"address": "0xabc"}, ["address"], "network"),
        ({"memo": "42"}, ["memo"], "network"),
    ])
    def test_lock_without_its_scope_is_refused(self, app, client, extra, locked, needed):
        token = sign(app, claims(**extra, lock=locked))
        assert_refused(launch(client, token), app, "settings we cannot use")
        with app.app_context(), pytest.raises(LaunchTokenError) as info:
            launch_url(app, "onramp", **extra, lock=locked)
        assert f"needs a {needed} claim" in info.value.detail


class TestLaunchUrl:
    def test_path_with_a_fresh_15_minute_token(self, app):
        with app.app_context():
            url = launch_url(app, "onramp", network="CELO", lock=["network"])
            token = parse_qs(urlsplit(url).query)["token"][0]
            verified = verify_token(app, token)
        assert url.startswith("/checkout/launch?token=")
        assert verified["exp"] - verified["iat"] == 15 * 60
        assert verified["lock"] == ["network"]
        assert len(verified["jti"]) >= 16

    def test_each_call_has_its_own_jti(self, app):
        with app.app_context():
            a = verify_token(app, parse_qs(urlsplit(launch_url(app, "onramp")).query)["token"][0])
            b = verify_token(app, parse_qs(urlsplit(launch_url(app, "onramp")).query)["token"][0])
        assert a["jti"] != b["jti"]

    def test_base_url_and_external(self, app):
        with app.app_context():
            assert launch_url(app, "onramp", _base_url="http://localhost:5000/").startswith(
                "http://localhost:5000/checkout/launch?token=")
            assert launch_url(app, "onramp", _external=True).startswith(
                "http://shop.test/checkout/launch?token=")
        # In a request with a forged Host: still the public address, never the Host.
        with app.test_request_context("/", headers={"Host": "evil.example"}):
            assert launch_url(app, "onramp", _external=True).startswith(
                "http://shop.test/checkout/launch?token=")
        app.config.update(CHECKOUT_PUBLIC_URL="https://pay.shop.example")
        with app.test_request_context("/", headers={"Host": "evil.example"}):
            assert launch_url(app, "onramp", _external=True).startswith(
                "https://pay.shop.example/checkout/launch?token=")

    def test_extension_method(self, app):
        with app.test_request_context("/"):
            url = Checkout.launch_url("onramp", amount=5)
        assert url.startswith("/checkout/launch?token=")

    def test_refuses_claims_it_would_not_accept(self, app):
        with app.app_context(), pytest.raises(LaunchTokenError):
            launch_url(app, "onramp", lock=["network"])
        with app.app_context(), pytest.raises(ValueError):
            launch_url(app, "onramp", _ttl=31 * 60)

    def test_url_opens_a_session(self, app, client):
        with app.app_context():
            url = launch_url(app, "onramp", parentOrigin=SHOP)
        assert client.get(url).status_code == 303


class TestCli:
    def test_prints_a_working_url(self, app, client):
        runner = app.test_cli_runner()
        result = runner.invoke(args=[
            "checkout", "launch-url", "--flow", "onramp", "--network", "CELO", "--asset", "USDC",
            "--amount", "5000", "--currency", "local", "--country", "NG", "--lock", "network",
            "--lock", "asset", "--parent-origin", SHOP, "--return-url", SHOP + "/back",
            "--color-scheme", "dark", "--base-url", "http://localhost:5000"])
        assert result.exit_code == 0, result.output
        url = result.output.strip()
        assert url.startswith("http://localhost:5000/checkout/launch?token=")
        token = parse_qs(urlsplit(url).query)["token"][0]
        with app.app_context():
            verified = verify_token(app, token)
        assert verified["countryIsoCode"] == "NG" and verified["lock"] == ["asset", "network"]
        assert verified["colorScheme"] == "dark"
        assert client.get(urlsplit(url).path + "?" + urlsplit(url).query).status_code == 303

    def test_explains_a_token_that_would_be_refused(self, app):
        result = app.test_cli_runner().invoke(args=[
            "checkout", "launch-url", "--flow", "onramp", "--lock", "memo"])
        assert result.exit_code == 2
        assert "every locked claim needs a value" in result.output

    def test_prints_an_absolute_url_on_the_public_address_when_one_is_set(self, config):
        config["CHECKOUT_PUBLIC_URL"] = "https://pay.shop.test"
        app = make_app(dict(config))
        result = app.test_cli_runner().invoke(args=["checkout", "launch-url", "--flow", "onramp"])
        assert result.exit_code == 0, result.output
        assert result.output.startswith("https://pay.shop.test/checkout/launch?token="), \
            result.output
        # Nothing configured: a path, and --external says what it needs.
        config.pop("CHECKOUT_PUBLIC_URL")
        config.pop("SERVER_NAME")
        bare = make_app(dict(config))
        path = bare.test_cli_runner().invoke(args=["checkout", "launch-url", "--flow", "onramp"])
        assert path.exit_code == 0 and path.output.startswith("/checkout/launch?token=")
        refused = bare.test_cli_runner().invoke(args=["checkout", "launch-url", "--flow", "onramp",
                                                      "--external"])
        assert refused.exit_code == 2 and "CHECKOUT_PUBLIC_URL or SERVER_NAME" in refused.output

    def test_ttl_is_in_seconds_as_in_python(self, app):
        runner = app.test_cli_runner()
        result = runner.invoke(args=["checkout", "launch-url", "--flow", "onramp", "--ttl", "600"])
        assert result.exit_code == 0, result.output
        token = parse_qs(urlsplit(result.output.strip()).query)["token"][0]
        with app.app_context():
            verified = verify_token(app, token)
        assert verified["exp"] - verified["iat"] == 600
        with app.app_context():
            from_python = verify_token(app, parse_qs(urlsplit(
                launch_url(app, "onramp", _ttl=600)).query)["token"][0])
        assert from_python["exp"] - from_python["iat"] == 600
        # A value written in minutes, as the option once took, is refused rather than read as
        # seconds (a token that dies in 15 s).
        old = runner.invoke(args=["checkout", "launch-url", "--flow", "onramp", "--ttl", "15"])
        assert old.exit_code == 2 and "60<=x<=1800" in old.output
        helped = runner.invoke(args=["checkout", "launch-url", "--help"])
        assert "seconds until the token expires" in " ".join(helped.output.split())

    def test_never_prints_the_secret(self, app):
        result = app.test_cli_runner().invoke(args=["checkout", "launch-url", "--flow", "onramp"])
        assert app.config["CHECKOUT_LAUNCH_SECRET"] not in result.output


def test_verify_uses_hs256_only_even_if_the_key_would_fit_others(app):
    key = OctKey.import_key(app.config["CHECKOUT_LAUNCH_SECRET"].encode())
    for alg in ("HS384", "HS512"):
        token = jwt.encode({"alg": alg}, claims(), key, algorithms=[alg])
        with app.app_context(), pytest.raises(LaunchTokenError):
            verify_token(app, token)
