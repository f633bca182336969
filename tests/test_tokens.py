"""Token contracts and EIP-681 payment requests: every entry sane, every request exact or absent."""
from __future__ import annotations

import re
from decimal import Decimal, localcontext

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkout.addresses import EVM_NETWORKS, eip55_checksum
from checkout.tokens import Token, chain_id, payment_uri, token, tokens

RECIPIENT = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"      # EIP-55 test vector
# Off-ramp deposits on EVM networks (upstream /api/offramp/assets and the utility list's
# off-ramp set): each needs a contract, else the deposit page has no payment request.
OFFRAMP_EVM_PAIRS = [
    ("POLYGON", "USDC"), ("CELO", "USDC"), ("ETHEREUM", "USDC"), ("AVALANCHE", "USDC"),
    ("BASE", "USDC"), ("POLYGON", "USDT"), ("AVALANCHE", "USDT"), ("CELO", "USDT"),
    ("ETHEREUM", "USDT"), ("CELO", "CUSD"), ("CELO", "CKES"), ("CELO", "CGHS"),
]
URI = re.compile(r"ethereum:(0x[0-9a-fA-F]{40})@(\d+)/transfer\?address=(0x[0-9a-fA-F]{40})"
                 r"&uint256=(\d+)")
ALL = [*tokens(), *tokens(testnet=True)]


@pytest.mark.parametrize("entry", ALL, ids=lambda t: f"{t.network}-{t.asset}-{t.chain_id}")
def test_every_contract_is_eip55_checksummed(entry: Token):
    # A mistyped character in a copied address breaks its checksum.
    assert re.fullmatch(r"0x[0-9a-fA-F]{40}", entry.contract)
    assert eip55_checksum(entry.contract) == entry.contract


@pytest.mark.parametrize("entry", ALL, ids=lambda t: f"{t.network}-{t.asset}-{t.chain_id}")
def test_every_entry_is_sane(entry: Token):
    assert entry.network in EVM_NETWORKS
    assert entry.decimals == (18 if entry.asset in {"CUSD", "CKES", "CGHS"} else 6)
    assert entry.chain_id == chain_id(entry.network, testnet=entry in tokens(testnet=True))
    assert token(entry.network, entry.asset, testnet=entry in tokens(testnet=True)) == entry


def test_contracts_are_unique_per_chain_and_apart_between_mainnet_and_testnet():
    for table in (tokens(), tokens(testnet=True)):
        keys = [(t.chain_id, t.contract.lower()) for t in table]
        assert len(keys) == len(set(keys))
    mainnet_chains = {t.chain_id for t in tokens()}
    assert mainnet_chains.isdisjoint({t.chain_id for t in tokens(testnet=True)})


@pytest.mark.parametrize(("network", "expected", "testnet_expected"), [
    ("ETHEREUM", 1, 11155111), ("POLYGON", 137, 80002), ("CELO", 42220, 11142220),
    ("AVALANCHE", 43114, 43113), ("BASE", 8453, 84532),
])
def test_chain_ids(network, expected, testnet_expected):
    assert chain_id(network) == expected
    assert chain_id(network, testnet=True) == testnet_expected


def test_chain_id_of_a_network_outside_the_table():
    assert chain_id("SOLANA") is None
    assert chain_id("DOGECOIN", testnet=True) is None


@pytest.mark.parametrize(("network", "asset"), OFFRAMP_EVM_PAIRS)
def test_every_offramp_pair_on_an_evm_network_has_a_mainnet_contract(network, asset):
    assert token(network, asset) is not None


def test_polygon_usdc_is_native_not_bridged():
    assert token("POLYGON", "USDC").contract == "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"
    assert token("POLYGON", "USDC_E") is None


@pytest.mark.parametrize(("network", "asset"), [("ETHEREUM", "USDT"), ("POLYGON", "USDT"),
                                                ("AVALANCHE", "USDT"), ("CELO", "USDT")])
def test_no_testnet_entry_where_the_issuer_publishes_none(network, asset):
    assert token(network, asset) is not None
    assert token(network, asset, testnet=True) is None


def test_payment_uri_for_10_5_usdc_on_polygon():
    assert payment_uri("POLYGON", "USDC", RECIPIENT, Decimal("10.5")) == (
        "ethereum:0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359@137/transfer"
        "?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&uint256=10500000")


def test_payment_uri_for_an_18_decimal_token_has_no_exponent():
    assert payment_uri("CELO", "CKES", RECIPIENT, Decimal("1500")) == (
        "ethereum:0x456a3D042C0DbD3db53D5489e98dFb038553B0d0@42220/transfer"
        "?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&uint256=1500000000000000000000")


def test_payment_uri_on_a_testnet_names_the_testnet_contract_and_chain():
    assert payment_uri("BASE", "USDC", RECIPIENT, Decimal("1"), testnet=True) == (
        "ethereum:0x036CbD53842c5426634e7929541eC2318f3dCF7e@84532/transfer"
        "?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&uint256=1000000")
    assert payment_uri("POLYGON", "USDT", RECIPIENT, Decimal("1"), testnet=True) is None


def test_payment_uri_checksums_a_lower_case_recipient():
    uri = payment_uri("ETHEREUM", "USDT", RECIPIENT.lower(), Decimal("2"))
    assert uri.endswith(f"?address={RECIPIENT}&uint256=2000000")


def test_trailing_zeros_beyond_the_decimals_are_fine():
    assert payment_uri("POLYGON", "USDC", RECIPIENT, Decimal("10.500000000")).endswith(
        "&uint256=10500000")
    assert payment_uri("POLYGON", "USDC", RECIPIENT, Decimal("1E+2")).endswith(
        "&uint256=100000000")


@pytest.mark.parametrize("amount", [
    Decimal("10.0000001"),      # 7 decimals on a 6-decimal token
    Decimal("0.0000001"),
    Decimal("0"), Decimal("-0"), Decimal("-5"),
    Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"), Decimal("-Infinity"),
    Decimal("1E+80"),           # beyond uint256
    Decimal("1E-999999"),
    10.5,                       # a float is not an exact amount
    "10.5",
])
def test_payment_uri_refuses_bad_amounts(amount):
    assert payment_uri("POLYGON", "USDC", RECIPIENT, amount) is None


@pytest.mark.parametrize(("network", "asset"), [
    ("POLYGON", "USDC_E"),      # bridged USDC: not in the table
    ("BASE", "USDT"),
    ("ARBITRUM", "USDC"),       # an EVM network without entries
    ("SOLANA", "USDC"),         # not EVM: EIP-681 does not apply
    ("TRON", "USDT"),
    ("TON", "USDT"),
    ("STELLAR", "USDC"),
    ("polygon", "usdc"),        # the upstream's names are upper case
])
def test_payment_uri_refuses_unknown_pairs_and_non_evm_networks(network, asset):
    assert payment_uri(network, asset, RECIPIENT, Decimal("10")) is None


@pytest.mark.parametrize("recipient", [
    "",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD",                  # checksum broken
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe",                   # 39 hex digits
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",                # a Solana address
    "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",                  # the token contract itself
    "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359",
])
def test_payment_uri_refuses_unusable_recipients(recipient):
    assert payment_uri("POLYGON", "USDC", recipient, Decimal("10")) is None


def _parse(uri: str) -> tuple[str, int, str, int]:
    match = URI.fullmatch(uri)
    assert match, uri
    return match.group(1), int(match.group(2)), match.group(3), int(match.group(4))


@given(entry=st.sampled_from(ALL), units=st.integers(min_value=1, max_value=10**30),
       testnet=st.booleans())
def test_base_units_are_exact_for_every_token(entry, units, testnet):
    found = token(entry.network, entry.asset, testnet=testnet)
    if found is None:
        return
    with localcontext() as ctx:
        ctx.prec = 100                  # exact: 31 digits at most
        amount = Decimal(units) / Decimal(10) ** found.decimals
    contract, chain, recipient, parsed = _parse(payment_uri(
        found.network, found.asset, RECIPIENT, amount, testnet=testnet))
    assert (contract, chain, recipient) == (found.contract, found.chain_id, RECIPIENT)
    assert parsed == units


@given(entry=st.sampled_from(ALL), units=st.integers(min_value=1, max_value=10**20),
       extra=st.integers(min_value=1, max_value=9))
def test_an_amount_finer_than_the_token_is_refused(entry, units, extra):
    # units + extra/10 base units: one more decimal place than the token has.
    with localcontext() as ctx:
        ctx.prec = 100
        amount = Decimal(units * 10 + extra) / Decimal(10) ** (entry.decimals + 1)
    testnet = entry in tokens(testnet=True)
    assert payment_uri(entry.network, entry.asset, RECIPIENT, amount, testnet=testnet) is None
