"""The client against the sandbox upstream, every endpoint, with request signing on.

Each test runs twice: in process (``mount_wsgi_app``, how the checkout embeds the sandbox) and over
real HTTP on loopback (tests.support.live_server), so both paths are held to the same contract:
the same URLs, headers and signatures, the same statuses and error classes.
"""
from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from decimal import Decimal

import pytest
from flask import Flask

from checkout import errors
from checkout.sandbox import create_app
from checkout.sandbox.credentials import CLIENT_ID as SANDBOX_CLIENT_ID
from checkout.sandbox.credentials import CLIENT_SECRET as SANDBOX_CLIENT_SECRET
from checkout.upstream import (
    AssetPair,
    Limits,
    OfframpOrder,
    OnrampOrder,
    TransferInstructions,
    UpstreamClient,
)
from checkout.upstream.inprocess import mount_wsgi_app

from ..support.live_server import LiveServer
from ..support.sandbox_clock import MANUAL, advance

EMBEDDED = "http://sandbox.checkout.invalid"
CELO_ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"        # EIP-55 checksummed
TX_HASH = "0x" + "ab" * 32
KE_PHONE = "254110611756"


def sandbox_config(**overrides: object) -> dict:
    return {"SANDBOX_CLIENT_ID": SANDBOX_CLIENT_ID, "SANDBOX_CLIENT_SECRET": SANDBOX_CLIENT_SECRET,
            **MANUAL, "SANDBOX_USER_ENDPOINTS": True, **overrides}


class Served:
    """A sandbox app reachable at ``base_url`` by clients made with ``client()``."""

    def __init__(self, app: Flask, mode: str) -> None:
        self.app, self.mode = app, mode
        self._server = LiveServer(app) if mode == "http" else None
        self.base_url = self._server.origin if self._server is not None else EMBEDDED

    def client(self, *, client_id: str = SANDBOX_CLIENT_ID,
               client_secret: str | None = SANDBOX_CLIENT_SECRET) -> UpstreamClient:
        client = UpstreamClient(self.base_url, client_id=client_id, client_secret=client_secret,
                                timeout=(2.0, 10.0), retries=0)
        if self.mode == "in-process":
            mount_wsgi_app(client.http, self.base_url, self.app)
        return client

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()
        self.app.extensions["sandbox"].shutdown()


def serve(mode: str, **config: object) -> Served:
    return Served(create_app(sandbox_config(**config)), mode)


@pytest.fixture(scope="module", params=["in-process", "http"])
def sandbox(request) -> Iterator[Served]:
    served = serve(request.param)
    yield served
    served.close()


@pytest.fixture
def client(sandbox) -> Iterator[UpstreamClient]:
    with sandbox.client() as client:
        yield client


def reference() -> str:
    return f"contract-{uuid.uuid4().hex[:12]}"


def ke_mobile_money_order(client: UpstreamClient, *, order_params: str | None = None,
                          outcome: str | None = None) -> OnrampOrder:
    quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local",
                                     amount=Decimal("1300"), country_iso_code="KE",
                                     payment_channel="mobile_money", carrier_code="SAFARICOM",
                                     sandbox_outcome=outcome)
    return client.onramp_create_order(
        quote_id=quote.quote_id, network="CELO", asset="USDT", amount=Decimal("1300"),
        currency="local", email="buyer@example.com", user_ip="203.0.113.9",
        address=CELO_ADDRESS, order_params=order_params,
        extra_fields={"phoneNumber": KE_PHONE})


# -- authentication --------------------------------------------------------------------------


def test_signed_requests_are_accepted(client):
    pairs = client.onramp_assets()
    assert AssetPair(network="CELO", asset="CKES") in pairs


@pytest.mark.parametrize("credentials", [
    {"client_id": "somebody-else"},
    {"client_secret": "d3JvbmctY2xpZW50LXNlY3JldA"},                # a different key
    {"client_secret": None},                                         # unsigned
])
def test_bad_credentials_are_an_auth_error(sandbox, credentials):
    with sandbox.client(**credentials) as client:
        with pytest.raises(errors.UpstreamAuthError) as info:
            client.onramp_assets()
    assert info.value.status == 401
    assert SANDBOX_CLIENT_SECRET not in repr(info.value)


def test_no_log_line_anywhere_carries_the_credentials(sandbox, caplog):
    caplog.set_level(logging.DEBUG)               # every logger: ours, urllib3's, werkzeug's
    with sandbox.client() as client:
        client.onramp_order(order_id=ke_mobile_money_order(client).id)
    with sandbox.client(client_secret="d3JvbmctY2xpZW50LXNlY3JldA") as client:
        with pytest.raises(errors.UpstreamAuthError):
            client.onramp_assets()
    assert any(r.name == "checkout.upstream" for r in caplog.records)
    assert SANDBOX_CLIENT_ID not in caplog.text
    assert SANDBOX_CLIENT_SECRET not in caplog.text
    assert "d3JvbmctY2xpZW50LXNlY3JldA" not in caplog.text


def test_signature_covers_an_awkward_query(client):
    # Characters that a careless client would encode differently from what it signed.
    with pytest.raises(errors.OrderNotAvailable):
        client.onramp_order(order_params="a b+c/d?e=f&g@h~ü")


# -- on-ramp ---------------------------------------------------------------------------------


def test_onramp_reference_data(client):
    countries = {c.country_iso_code: c for c in client.onramp_payment_channels()}
    kenya = {ch.payment_channel: ch for ch in countries["KE"].payment_channels}
    assert countries["KE"].currency_iso_code == "KES"
    assert kenya["airtime"].requires_carrier and kenya["airtime"].carriers
    limits = client.onramp_limits(network="CELO", asset="USDT", country_iso_code="KE",
                                  payment_channel="mobile_money")
    assert isinstance(limits, Limits) and limits.available
    assert limits.min_usd < limits.max_usd and limits.max_crypto is not None
    closed = client.onramp_limits(network="CELO", country_iso_code="ZM", payment_channel="bank")
    assert not closed.available


def test_onramp_quote_and_order_with_stk_push(client):
    params = reference()
    quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local",
                                     amount=1300, country_iso_code="KE",
                                     payment_channel="mobile_money", carrier_code="SAFARICOM")
    assert quote.quote_id and quote.offer.currency_iso_code == "KES"
    assert quote.cashout.local_currency_amount == Decimal(1300)
    assert quote.cashout.withdraw_amount_crypto < quote.cashout.total_amount_crypto
    assert "phoneNumber" in [f.name for f in quote.offer.required_fields]

    order = client.onramp_create_order(
        quote_id=quote.quote_id, network="CELO", asset="USDT", amount=1300, currency="local",
        email="buyer@example.com", user_ip="203.0.113.9", address=CELO_ADDRESS,
        order_params=params, extra_fields={"phoneNumber": KE_PHONE})
    assert order.status == "swap_initiated" and order.order_params == params
    assert order.updated_at and order.expires_at and order.expires_at > order.updated_at
    assert order.transfer_instructions.type == TransferInstructions.STK_PUSH
    assert order.transfer_instructions.intermediate_action_attempts == 1

    assert client.onramp_order(order_id=order.id).id == order.id
    assert client.onramp_order(order_params=params).id == order.id

    # The quote is single-use.
    with pytest.raises(errors.UpstreamBadRequest):
        client.onramp_create_order(
            quote_id=quote.quote_id, network="CELO", asset="USDT", amount=1300,
            currency="local", email="buyer@example.com", user_ip="203.0.113.9",
            extra_fields={"phoneNumber": KE_PHONE})


def test_onramp_unknown_order_is_not_available(client):
    with pytest.raises(errors.OrderNotAvailable):
        client.onramp_order(order_id="000000000000000000000000")


def test_onramp_bad_input_is_a_bad_request_with_the_upstreams_message(client):
    with pytest.raises(errors.UpstreamBadRequest) as info:
        client.onramp_best_offer(network="CELO", asset="USDT", currency="local", amount=-5,
                                 country_iso_code="KE", payment_channel="mobile_money")
    assert info.value.message and info.value.path == "/api/onramp/best-offer"


def test_onramp_orders_pages_and_iterator(client):
    email = f"{reference()}@example.com"
    made = []
    for _ in range(3):
        quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local",
                                         amount=1300, country_iso_code="KE",
                                         payment_channel="bank")
        made.append(client.onramp_create_order(
            quote_id=quote.quote_id, network="CELO", asset="USDT", amount=1300,
            currency="local", email=email, user_ip="203.0.113.9", address=CELO_ADDRESS).id)
    first = client.onramp_orders(limit=2, user_email=email)
    assert len(first.items) == 2 and first.next_cursor
    walked = [o.id for o in client.iter_onramp_orders(page_size=1, user_email=email)]
    assert sorted(walked) == sorted(made)


def test_onramp_manual_transfer_and_confirm(client):
    quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local", amount=1300,
                                     country_iso_code="KE", payment_channel="bank")
    order = client.onramp_create_order(quote_id=quote.quote_id, network="CELO", asset="USDT",
                                       amount=1300, currency="local",
                                       email="buyer@example.com", user_ip="203.0.113.9",
                                       address=CELO_ADDRESS)
    instructions = order.transfer_instructions
    assert instructions.type == TransferInstructions.MANUAL
    assert instructions.detail("recipientBankAccountNumber").value
    assert instructions.detail("bankTransferNarration").value
    assert client.onramp_confirm_order(order.id) is None
    assert client.onramp_order(order_id=order.id).status == "swap_buyer_confirmed"


def test_onramp_otp_then_push(client):
    quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local", amount=100,
                                     country_iso_code="GH", payment_channel="mobile_money",
                                     carrier_code="MTN")
    order = client.onramp_create_order(quote_id=quote.quote_id, network="CELO", asset="USDT",
                                       amount=100, currency="local", email="buyer@example.com",
                                       user_ip="203.0.113.9", address=CELO_ADDRESS,
                                       extra_fields={"phoneNumber": "233240000000"})
    instructions = order.transfer_instructions
    assert instructions.type == TransferInstructions.OTP_STK_PUSH
    assert instructions.otp_verified is False
    assert [f.name for f in instructions.fields_to_confirm_order] == ["otpCode"]
    with pytest.raises(errors.UpstreamBadRequest):
        client.onramp_submit_otp(order.id, "000000")
    verified = client.onramp_submit_otp(order.id, "123456")
    assert verified.transfer_instructions.otp_verified is True
    assert verified.transfer_instructions.intermediate_action_attempts == 1


def test_onramp_push_retry(sandbox):
    # A sandbox of its own, whose clock this test moves (the module's serves other tests).
    fast = serve(sandbox.mode)
    try:
        with fast.client() as client:
            order = ke_mobile_money_order(client, outcome="expire")    # never approved
            assert order.transfer_instructions.is_intermediate_action_available is False
            advance(fast.app, 30)                   # the wait before another push
            assert client.onramp_order(order_id=order.id).transfer_instructions \
                .is_intermediate_action_available
            retried = client.onramp_retry_push(order.id)
            assert retried.id == order.id
            assert retried.transfer_instructions.intermediate_action_attempts == 2
            assert retried.transfer_instructions.is_intermediate_action_available is False
    finally:
        fast.close()


def test_an_expired_quote_is_quote_expired(sandbox):
    fast = serve(sandbox.mode)
    try:
        with fast.client() as client:
            quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local",
                                             amount=1300, country_iso_code="KE",
                                             payment_channel="bank")
            advance(fast.app, 600)                  # the quote's ten minutes
            with pytest.raises(errors.QuoteExpired):
                client.onramp_create_order(
                    quote_id=quote.quote_id, network="CELO", asset="USDT", amount=1300,
                    currency="local", email="buyer@example.com", user_ip="203.0.113.9")
    finally:
        fast.close()


def test_too_many_wrong_codes_expire_the_order(client):
    quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local", amount=100,
                                     country_iso_code="GH", payment_channel="mobile_money",
                                     carrier_code="MTN")
    order = client.onramp_create_order(quote_id=quote.quote_id, network="CELO", asset="USDT",
                                       amount=100, currency="local", email="buyer@example.com",
                                       user_ip="203.0.113.9",
                                       extra_fields={"phoneNumber": "233240000000"})
    raised = []
    while not raised or not isinstance(raised[-1], errors.OrderExpired):
        assert len(raised) < 5, raised
        with pytest.raises(errors.UpstreamBadRequest) as info:
            client.onramp_submit_otp(order.id, "999999")
        raised.append(info.value)
    # The order is dead: not QuoteExpired, which would invite the caller to quote again.
    assert not any(isinstance(e, errors.QuoteExpired) for e in raised)
    assert not any(isinstance(e, errors.OrderExpired) for e in raised[:-1])
    assert client.onramp_order(order_id=order.id).status == "swap_expired"


# -- legacy on-ramp --------------------------------------------------------------------------


def test_legacy_family(client):
    assert AssetPair(network="CELO", asset="USDT") in client.legacy_assets()
    providers = {p.country_iso_code: p for p in client.legacy_providers()}
    kenya = {p.name: p for p in providers["KE"].providers}
    assert kenya and all(p.limits for p in kenya.values())
    quick = client.legacy_providers(include_limits=False, network="CELO")
    assert quick and all(not p.limits for c in quick for p in c.providers)
    provider = next(iter(kenya))
    limits = client.legacy_limits(network="CELO", asset="USDT", country="KE", provider=provider)
    assert limits.crypto_limits.max > limits.crypto_limits.min
    price = client.legacy_price(network="CELO", asset="USDT", currency="local", amount=1300,
                                country="KE", provider=provider)
    assert price.quote_id and price.local_currency_amount == Decimal(1300)

    params = reference()
    order = ke_mobile_money_order(client, order_params=params)
    legacy = client.legacy_order(order_id=order.id)
    assert legacy.id == order.id and legacy.wallet_type == "CELO"
    assert legacy.buy_swap.status == "initiated"
    assert client.legacy_order(order_params=params).id == order.id
    page = client.legacy_orders(limit=100, wallet_address=CELO_ADDRESS)
    assert order.id in [o.id for o in page.items]
    assert any(o.id == order.id for o in client.iter_legacy_orders(wallet_address=CELO_ADDRESS))


# -- off-ramp, channel-based -----------------------------------------------------------------


def test_offramp_channel_family(client):
    countries = {c.country_iso_code: c for c in client.offramp_payment_channels()}
    assert "paybill" in [ch.payment_channel for ch in countries["KE"].payment_channels]
    assert AssetPair(network="CELO", asset="USDT") in client.offramp_assets()
    limits = client.offramp_limits(payment_channel="mobile_money", country_iso_code="KE",
                                   network="CELO", asset="USDT")
    assert limits.available and limits.min_crypto is None
    quote = client.offramp_best_offer(amount=10, currency="usd", country_iso_code="KE",
                                      payment_channel="mobile_money", network="CELO",
                                      asset="USDT")
    assert quote.quote_id and quote.offer_id is None
    assert quote.offer.payment_channel == "mobile_money"
    assert quote.cashout.local_currency_amount > 0
    page = client.offramp_orders(limit=5, payment_channel="mobile_money")
    assert page.items == [] or isinstance(page.items[0], OfframpOrder)


# -- off-ramp, type-based --------------------------------------------------------------------


def test_offramp_typed_family(client):
    countries = {c.country_iso_code: c for c in client.offramp_countries()}
    assert "mobile_money" in [t.type for t in countries["KE"].offramp_types]
    assert AssetPair(network="CELO", asset="USDT") in client.offramp_wallets()
    assert client.offramp_typed_limits(type="mobile_money", country="KE").available

    quote = client.offramp_typed_best_offer(amount=10, currency="usd", country="KE",
                                            type="mobile_money", network="CELO", asset="USDT")
    assert quote.offer_id and quote.quote_id is None and quote.offer.type == "mobile_money"
    fields = {"phoneNumber": KE_PHONE}
    details = client.offramp_validate_fields(offer_id=quote.offer_id, required_fields=fields)
    assert details and all(d.label and d.value for d in details)

    params = reference()
    order = client.offramp_create_order(offer_id=quote.offer_id, payment_type="CRYPTO_WALLET",
                                        network="CELO", asset="USDT", address=CELO_ADDRESS,
                                        currency="usd", amount=10, ip="203.0.113.9",
                                        order_params=params, required_fields=fields)
    assert order.status == "initiated" and order.offer_id == quote.offer_id
    assert order.to_address and order.expires_at and order.expires_at > order.created_at
    assert order.cashout.usd_amount == Decimal(10)

    confirmed = client.offramp_confirm_order(order_id=order.id, hash=TX_HASH)
    assert confirmed.hash == TX_HASH and confirmed.status != "initiated"
    assert [s.status for s in confirmed.status_history][0] == "initiated"
    with pytest.raises(errors.UpstreamBadRequest):
        client.offramp_confirm_order(order_id=order.id, hash=TX_HASH)    # only while initiated

    assert client.offramp_order(order.id).id == order.id
    found = list(client.iter_offramp_orders(page_size=2, order_params=params,
                                            payment_type="CRYPTO_WALLET"))
    assert [o.id for o in found] == [order.id]


def test_offramp_unknown_order(client):
    with pytest.raises((errors.OrderNotAvailable, errors.UpstreamNotFound)):
        client.offramp_order("000000000000000000000000")


# -- utility ---------------------------------------------------------------------------------


def test_util_family(client):
    assert client.check_address(f"0x{uuid.uuid4().hex}{uuid.uuid4().hex[:8]}") is False
    countries = {c.country_iso_code: c for c in client.util_countries()}
    kenya = countries["KE"]
    assert kenya.basic_documents and kenya.kyc_rules.onramp
    assert any(rule.max == Decimal("Infinity") for rule in kenya.kyc_rules.onramp)
    carriers = {c.country_iso_code: c for c in client.util_carriers()}
    assert carriers["NG"].carriers
    assets = client.util_assets()
    assert any(a.network == "TRON" and a.can_offramp for a in assets)


# -- user and KYC ----------------------------------------------------------------------------


KE_ID_FIELDS = {"first_name": "Wanjiru", "last_name": "Mwangi", "dob": "1990-01-31T00:00:00.000Z",
                "email": "wanjiru@example.com", "id_number": "12345678"}


def fields_for(document) -> dict[str, str]:
    """Values for every field the document asks for, so the submission is complete."""
    names = [field.name for field in document.required_fields]
    assert set(names) <= set(KE_ID_FIELDS), names
    return {name: KE_ID_FIELDS[name] for name in names}


def test_user_family(client):
    email = f"{reference()}@example.com"
    tokens = client.user_tokens(email=email, country_iso_code="KE")
    assert tokens.access_token.count(".") == 2 and tokens.refresh_token
    status = client.user_kyc_status(email=email, country_iso_code="KE")
    document = next(d for d in status.basic_documents if d.value == "NATIONAL_ID")
    assert document.id and document.required_fields
    assert client.user_kyc_submit(email=email, document_id=document.id,
                                  user_fields=fields_for(document)) is True


def test_user_endpoints_are_off_by_default(sandbox):
    off = serve(sandbox.mode, SANDBOX_USER_ENDPOINTS=False)
    try:
        with off.client() as client, pytest.raises(errors.FeatureNotAvailable):
            client.user_tokens(email="buyer@example.com", country_iso_code="KE")
    finally:
        off.close()


def test_kyc_family(client):
    phone = "2547" + str(uuid.uuid4().int)[:8]
    state = client.kyc_state(phone_number=phone)
    assert state.document_types and not state.passed_kyc
    document = next(d for d in state.document_types if d.value == "NATIONAL_ID")
    assert client.kyc_submit(phone=phone, id_type=document.value,
                             user_fields=fields_for(document)) is True
