"""Wallet address checks: real addresses pass, one changed character fails, memos, explorer links."""
from __future__ import annotations

import base64
import binascii

import base58
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkout.addresses import (
    AddressError,
    address_notice,
    checksummed,
    eip55_checksum,
    explorer_tx_url,
    network_has_memo,
    validate_address,
    validate_memo,
    validate_transaction_hash,
)

# Published addresses (EIP-55 test vectors, well-known token contracts and accounts).
VALID = [
    ("ETHEREUM", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
    ("POLYGON", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"),
    ("CELO", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"),
    ("BASE", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"),
    ("LISK", "0x52908400098527886E0F7030069857D2E4169EE7"),     # all upper: no checksum
    ("SOLANA", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
    ("STELLAR", "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7"),
    ("TON", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N"),
    ("TON", "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8"),
    ("TRON", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"),
    ("ALGORAND", "VCMJKWOY5P5P7SKMZFFOCEROPJCZOTIJMNIYNUCKH7LRO45JMJP6UYBIJA"),
    ("NEAR", "alice.near"),
]


def _flip_one(address: str, index: int) -> str:
    """Change one character to another of the same alphabet class (a realistic typo)."""
    c = address[index]
    if c.isdigit():
        replacement = "2" if c != "2" else "3"
    elif c.isupper():
        replacement = "Q" if c != "Q" else "R"
    else:
        replacement = "q" if c != "q" else "r"
    return address[:index] + replacement + address[index + 1:]


@pytest.mark.parametrize(("network", "address"), VALID)
def test_published_addresses_pass(network, address):
    assert validate_address(network, address)


@pytest.mark.parametrize(("network", "address"), VALID)
def test_surrounding_whitespace_is_ignored(network, address):
    assert validate_address(network, f"  {address}\n") == validate_address(network, address)


# Solana, NEAR and raw TON addresses carry no checksum; an all-upper EVM address neither.
CHECKSUMMED = [v for v in VALID if v[0] not in ("NEAR", "LISK", "SOLANA") and ":" not in v[1]]


@pytest.mark.parametrize(("network", "address"), CHECKSUMMED)
@pytest.mark.parametrize("index", [5, 20, -3])
def test_one_changed_character_is_caught(network, address, index):
    with pytest.raises(AddressError):
        validate_address(network, _flip_one(address, index))


def test_evm_is_returned_checksummed_and_lowercase_gets_a_notice():
    lower = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
    assert validate_address("ARBITRUM", lower) == "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
    assert address_notice("ARBITRUM", lower)
    assert address_notice("ARBITRUM", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed") is None
    assert address_notice("SOLANA", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v") is None


def test_an_address_given_to_us_is_shown_checksummed_on_evm_networks_only():
    lower = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
    assert checksummed("POLYGON", lower) == "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
    assert checksummed("POLYGON", lower.upper().replace("0X", "0x")) == \
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
    solana = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    assert checksummed("SOLANA", solana) == solana
    assert checksummed("POLYGON", "not an address") == "not an address"


def test_eip55_wrong_case_in_one_letter_is_refused():
    good = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
    bad = good[:3] + good[3].upper() + good[4:]       # 'a' -> 'A'
    assert eip55_checksum(bad) == good
    with pytest.raises(AddressError, match="checksum"):
        validate_address("ETHEREUM", bad)


@pytest.mark.parametrize(("network", "address"), [
    ("ETHEREUM", ""),
    ("ETHEREUM", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe"),          # 39 hex
    ("ETHEREUM", "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),           # no 0x
    ("ETHEREUM", "0xZZAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
    ("POLYGON", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),        # Solana on an EVM chain
    ("SOLANA", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
    ("SOLANA", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vO"),       # 'O' is not base58
    ("SOLANA", "1111111111111111111111111111111"),                     # 31 bytes
    ("STELLAR", "MAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7"),
    ("STELLAR", "SAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7"),  # a secret seed!
    ("STELLAR", "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN"),
    ("TON", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2"),
    ("TON", "2:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8"),
    ("TRON", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6"),
    ("ALGORAND", "VCMJKWOY5P5P7SKMZFFOCEROPJCZOTIJMNIYNUCKH7LRO45JMJP6UYBIJB"),
    ("NEAR", "Alice..near"),
    ("DOGECOIN", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
])
def test_bad_addresses_are_refused_with_a_message(network, address):
    with pytest.raises(AddressError) as info:
        validate_address(network, address)
    assert str(info.value)
    assert address.strip() == "" or address not in str(info.value)


def _stellar_address(key: bytes) -> str:
    payload = bytes([6 << 3]) + key
    return base64.b32encode(payload + binascii.crc_hqx(payload, 0).to_bytes(2, "little")).decode()


def _ton_address(flags: int, workchain: int, account: bytes) -> str:
    body = bytes([flags, workchain]) + account
    return base64.urlsafe_b64encode(body + binascii.crc_hqx(body, 0).to_bytes(2, "big")).decode()


@pytest.mark.parametrize("key", [bytes(32), bytes(range(32)), b"\xff" * 32])
def test_stellar_encoded_keys_round_trip(key):
    address = _stellar_address(key)
    assert validate_address("STELLAR", address) == address


@pytest.mark.parametrize("flags", [0x11, 0x51, 0x91, 0xD1])
@pytest.mark.parametrize("workchain", [0x00, 0xFF])
def test_ton_friendly_flags_and_workchains(flags, workchain):
    address = _ton_address(flags, workchain, bytes(range(32)))
    assert validate_address("TON", address) == address
    standard_alphabet = address.replace("-", "+").replace("_", "/")
    assert validate_address("TON", standard_alphabet) == standard_alphabet


def test_ton_unknown_flag_is_refused():
    with pytest.raises(AddressError):
        validate_address("TON", _ton_address(0x33, 0, bytes(32)))


def test_memo_networks():
    assert network_has_memo("STELLAR") and network_has_memo("TON")
    assert not network_has_memo("POLYGON")


@pytest.mark.parametrize(("network", "memo", "expected"), [
    ("STELLAR", "  12345 ", "12345"),
    ("TON", "", ""),
    ("POLYGON", "", ""),
    ("STELLAR", "x" * 28, "x" * 28),
])
def test_good_memos(network, memo, expected):
    assert validate_memo(network, memo) == expected


@pytest.mark.parametrize(("network", "memo"), [
    ("POLYGON", "123"),                  # a memo on a chain without memos would be lost
    ("STELLAR", "x" * 29),
    ("STELLAR", "é" * 15),              # 30 bytes in UTF-8
    ("TON", "a\x00b"),
])
def test_bad_memos(network, memo):
    with pytest.raises(AddressError):
        validate_memo(network, memo)


@pytest.mark.parametrize(("network", "host"), [
    ("ETHEREUM", "etherscan.io"), ("POLYGON", "polygonscan.com"), ("CELO", "celoscan.io"),
    ("BASE", "basescan.org"), ("AVALANCHE", "snowtrace.io"),
    ("OPTIMISM", "optimistic.etherscan.io"), ("ARBITRUM", "arbiscan.io"), ("BNB", "bscscan.com"),
    ("LISK", "blockscout.lisk.com"), ("SOLANA", "solscan.io"), ("STELLAR", "stellar.expert"),
    ("TON", "tonviewer.com"),
])
def test_explorer_links(network, host):
    tx = "0x" + "ab" * 32
    url = explorer_tx_url(network, tx)
    assert url.startswith(f"https://{host}/") and url.endswith(tx)


@pytest.mark.parametrize("tx_hash", [None, "", "abc", "<script>alert(1)</script>", "a b" * 10,
                                     "../" * 10])
def test_explorer_refuses_odd_hashes(tx_hash):
    assert explorer_tx_url("ETHEREUM", tx_hash) is None


def test_explorer_unknown_network():
    assert explorer_tx_url("DOGECOIN", "ab" * 32) is None


# --- Transaction hashes -------------------------------------------------------------------------

EVM_TX = "0x" + "ab" * 32
HEX_TX = "cd" * 32


@pytest.mark.parametrize(("network", "pasted", "expected"), [
    ("POLYGON", EVM_TX, EVM_TX),
    ("ETHEREUM", EVM_TX.upper().replace("0X", "0x"), EVM_TX),
    ("BASE", f"  {EVM_TX}\n", EVM_TX),
    ("POLYGON", f"https://polygonscan.com/tx/{EVM_TX}", EVM_TX),
    ("POLYGON", f"polygonscan.com/tx/{EVM_TX}", EVM_TX),
    ("POLYGON", f"https://www.polygonscan.com/tx/{EVM_TX}?utm=1", EVM_TX),
    ("BASE", f"https://basescan.org/tx/{EVM_TX}#eventlog", EVM_TX),
    ("ETHEREUM", f"https://sepolia.etherscan.io/tx/{EVM_TX}", EVM_TX),    # another explorer
    ("CELO", f"https://celo.blockscout.com/tx/{EVM_TX}/token-transfers", EVM_TX),
    ("STELLAR", HEX_TX.upper(), HEX_TX),
    ("STELLAR", f"https://stellar.expert/explorer/public/tx/{HEX_TX}", HEX_TX),
    ("TRON", HEX_TX, HEX_TX),
    ("TRON", f"https://tronscan.org/#/transaction/{HEX_TX}", HEX_TX),
    ("TON", HEX_TX, HEX_TX),
    ("TON", f"https://tonviewer.com/transaction/{HEX_TX}", HEX_TX),
    ("TON", base64.urlsafe_b64encode(bytes.fromhex(HEX_TX)).decode(), HEX_TX),
    ("TON", base64.b64encode(bytes.fromhex(HEX_TX)).decode().rstrip("="), HEX_TX),
])
def test_good_transaction_hashes_and_links(network, pasted, expected):
    assert validate_transaction_hash(network, pasted) == expected


@given(st.binary(min_size=64, max_size=64))
def test_solana_signatures_and_their_links(raw):
    signature = base58.b58encode(raw).decode()
    assert validate_transaction_hash("SOLANA", signature) == signature
    assert validate_transaction_hash(
        "SOLANA", f"https://solscan.io/tx/{signature}?cluster=devnet") == signature
    assert validate_transaction_hash(
        "SOLANA", f"https://explorer.solana.com/tx/{signature}") == signature


@given(st.binary(min_size=32, max_size=32))
def test_near_algorand_and_ton_hashes_of_32_bytes(raw):
    near = base58.b58encode(raw).decode()
    assert validate_transaction_hash("NEAR", near) == near
    assert validate_transaction_hash("NEAR", f"https://nearblocks.io/txns/{near}") == near
    algorand = base64.b32encode(raw).decode().rstrip("=")
    assert validate_transaction_hash("ALGORAND", algorand.lower()) == algorand
    assert validate_transaction_hash("ALGORAND", f"https://allo.info/tx/{algorand}") == algorand
    for ton in (base64.urlsafe_b64encode(raw).decode(), base64.b64encode(raw).decode()):
        assert validate_transaction_hash("TON", ton) == raw.hex()


@given(st.binary(min_size=32, max_size=32))
def test_evm_hashes_in_any_case(raw):
    tx = "0x" + raw.hex()
    assert validate_transaction_hash("ARBITRUM", tx.upper().replace("0X", "0x")) == tx


def test_the_evm_message_says_what_a_hash_looks_like():
    with pytest.raises(AddressError) as info:
        validate_transaction_hash("POLYGON", HEX_TX)
    assert str(info.value) == ("This is not a transaction hash on Polygon: it starts with 0x "
                               "and has 64 more characters.")


def test_a_link_from_another_chain_is_refused():
    with pytest.raises(AddressError) as info:
        validate_transaction_hash("POLYGON", f"https://etherscan.io/tx/{EVM_TX}")
    assert str(info.value) == "This link is for a transaction on Ethereum, not on Polygon."


SOLANA_SIG = base58.b58encode(bytes(range(64))).decode()


@pytest.mark.parametrize(("network", "pasted", "needle"), [
    ("POLYGON", "", "Enter the transaction hash"),
    ("POLYGON", "   ", "Enter the transaction hash"),
    ("POLYGON", "0x" + "ab" * 600, "too long"),
    ("DOGECOIN", EVM_TX, "not supported"),
    ("POLYGON", EVM_TX[:-1], "0x"),                         # 63 hex digits
    ("POLYGON", EVM_TX + "0", "0x"),
    ("POLYGON", "0x" + "zz" * 32, "0x"),
    ("POLYGON", SOLANA_SIG, "0x"),
    ("POLYGON", "https://polygonscan.com/address/0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
     "0x"),
    ("POLYGON", "https://polygonscan.com/", "0x"),
    ("POLYGON", f"https://[polygonscan.com/tx/{EVM_TX}", "0x"),    # not a URL
    ("SOLANA", EVM_TX, "Solana"),
    ("SOLANA", SOLANA_SIG[:-1] + "O", "Solana"),            # O is not base58
    ("SOLANA", base58.b58encode(bytes(range(1, 33))).decode(), "Solana"),   # 32 bytes
    ("STELLAR", HEX_TX[:-1], "Stellar"),
    ("STELLAR", HEX_TX[:-1] + "g", "Stellar"),
    ("TRON", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "Tron"),  # an address, not a transaction
    ("TON", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", "TON"),     # an address
    ("TON", "A" * 42 + "B", "TON"),                        # non-zero padding bits
    ("ALGORAND", "A" * 51, "Algorand"),
    ("ALGORAND", "A" * 51 + "1", "Algorand"),
    ("ALGORAND", "A" * 51 + "B", "Algorand"),             # non-zero padding bits
    ("ALGORAND", "VCMJKWOY5P5P7SKMZFFOCEROPJCZOTIJMNIYNUCKH7LRO45JMJP6UYBIJA", "Algorand"),
    ("NEAR", SOLANA_SIG, "NEAR"),
    ("NEAR", "alice.near", "NEAR"),
])
def test_bad_transaction_hashes_are_refused_with_a_message(network, pasted, needle):
    with pytest.raises(AddressError) as info:
        validate_transaction_hash(network, pasted)
    assert needle in str(info.value)
    assert not pasted.strip() or pasted.strip() not in str(info.value)
