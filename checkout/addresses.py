"""Wallet addresses, memos and block-explorer links, per network.

Crypto sent to a wrong address is gone, so an address is checked for the chosen network before any
order exists, checksums included:

- EVM networks: ``0x`` and 40 hex digits; a mixed-case address must carry a valid EIP-55 checksum
  (keccak-256). An all-lower or all-upper address has no checksum: it is accepted (wallets still
  produce them) and :func:`address_notice` asks the user to compare it character by character.
- Solana: base58 of a 32-byte public key.
- Stellar: StrKey ``G...``: base32 of version byte ``6 << 3``, 32 key bytes, CRC16-XModem
  (little-endian).
- TON: user-friendly base64/base64url of 36 bytes (flags, workchain, 32-byte hash, CRC16-XModem
  big-endian), or the raw ``<workchain>:<64 hex>`` form.
- Tron: base58check of 21 bytes starting ``0x41``. Algorand: base32 of a key and a 4-byte
  SHA-512/256 checksum. NEAR: implicit (64 hex) or named accounts.

Messages are user-safe and translated; they never echo the address back.
"""
from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from urllib.parse import quote, unquote, urlsplit

import base58
from Crypto.Hash import SHA512, keccak
from flask_babel import gettext as _

__all__ = [
    "AddressError", "EVM_NETWORKS", "MEMO_NETWORKS", "MAX_MEMO_BYTES", "address_notice",
    "checksummed", "explorer_tx_url", "network_has_memo", "validate_address", "validate_memo",
    "validate_transaction_hash",
]

EVM_NETWORKS = frozenset({"ETHEREUM", "POLYGON", "CELO", "BASE", "AVALANCHE", "OPTIMISM",
                          "ARBITRUM", "BNB", "LISK"})
MEMO_NETWORKS = frozenset({"STELLAR", "TON"})
# Stellar's text memo is at most 28 bytes. TON comments may be longer on chain, but the upstream
# refuses memos over 28 characters, so one limit for both keeps a bad memo from reaching creation.
MAX_MEMO_BYTES = 28

_EVM = re.compile(r"0x[0-9a-fA-F]{40}")
_BASE58 = re.compile(r"[1-9A-HJ-NP-Za-km-z]+")
_TON_RAW = re.compile(r"(0|-1):([0-9a-fA-F]{64})")
_TON_FRIENDLY = re.compile(r"[A-Za-z0-9_\-+/]{48}")
_NEAR_NAMED = re.compile(r"(?:[a-z\d]+[-_])*[a-z\d]+(?:\.(?:[a-z\d]+[-_])*[a-z\d]+)*")
_STELLAR_ACCOUNT_VERSION = 6 << 3
_TON_FLAGS = frozenset({0x11, 0x51, 0x91, 0xD1})   # bounceable / non-bounceable, +0x80 testnet


class AddressError(ValueError):
    """An address or memo that cannot be used. ``str()`` is safe to show to the user."""


def _crc16_xmodem(data: bytes) -> int:
    # binascii.crc_hqx with a zero start value is exactly CRC16-XModem (poly 0x1021).
    return binascii.crc_hqx(data, 0)


def eip55_checksum(address: str) -> str:
    """The EIP-55 mixed-case form of a ``0x`` + 40 hex address."""
    body = address[2:].lower()
    digest = keccak.new(digest_bits=256, data=body.encode("ascii")).hexdigest()
    # The digest has 64 nibbles; the first 40 set the case of the address's 40 characters.
    return "0x" + "".join(c.upper() if int(n, 16) >= 8 else c
                          for c, n in zip(body, digest, strict=False))


def checksummed(network: str, address: str) -> str:
    """An address given to us (the upstream's deposit wallet), as the user is shown it: an EVM
    address in its EIP-55 mixed-case form, which a wallet the user pastes it into checks letter
    by letter (the same 20 bytes: only the case changes); any other address as it came."""
    if network.upper() in EVM_NETWORKS and _EVM.fullmatch(address):
        return eip55_checksum(address)
    return address


def _evm(network: str, address: str) -> str:
    if not _EVM.fullmatch(address):
        raise AddressError(_("A %(network)s address is 0x followed by 40 hexadecimal characters.",
                             network=network.title()))
    body = address[2:]
    checksummed = eip55_checksum(address)
    if body not in (body.lower(), body.upper()) and address != checksummed:
        raise AddressError(_("This address has a typo: its capital letters do not match its "
                             "checksum. Copy it again from your wallet."))
    return checksummed


def _solana(address: str) -> str:
    if not 32 <= len(address) <= 44 or not _BASE58.fullmatch(address):
        raise AddressError(_("A Solana address is 32 to 44 base58 characters."))
    if len(base58.b58decode(address)) != 32:
        raise AddressError(_("This is not a Solana address. Copy it again from your wallet."))
    return address


def _stellar(address: str) -> str:
    if address.startswith("M"):
        raise AddressError(_("Use your Stellar account address (starting with G) and put the "
                             "memo in the memo field."))
    if len(address) != 56 or not address.startswith("G"):
        raise AddressError(_("A Stellar address starts with G and has 56 characters."))
    try:
        raw = base64.b32decode(address.upper())
    except (binascii.Error, ValueError):
        raise AddressError(_("A Stellar address starts with G and has 56 characters.")) from None
    payload, checksum = raw[:-2], raw[-2:]
    if (len(raw) != 35 or payload[0] != _STELLAR_ACCOUNT_VERSION
            or _crc16_xmodem(payload).to_bytes(2, "little") != checksum):
        raise AddressError(_("This address has a typo: its checksum does not match. "
                             "Copy it again from your wallet."))
    return address.upper()


def _ton(address: str) -> str:
    raw_match = _TON_RAW.fullmatch(address)
    if raw_match:
        return f"{raw_match.group(1)}:{raw_match.group(2).lower()}"
    if not _TON_FRIENDLY.fullmatch(address):
        raise AddressError(_("A TON address has 48 characters (for example EQ... or UQ...)."))
    try:
        raw = base64.urlsafe_b64decode(address.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        raise AddressError(_("A TON address has 48 characters (for example EQ... or UQ...).")) \
            from None
    if (len(raw) != 36 or raw[0] not in _TON_FLAGS or raw[1] not in (0x00, 0xFF)
            or _crc16_xmodem(raw[:34]).to_bytes(2, "big") != raw[34:]):
        raise AddressError(_("This address has a typo: its checksum does not match. "
                             "Copy it again from your wallet."))
    return address


def _tron(address: str) -> str:
    try:
        raw = base58.b58decode_check(address)
    except ValueError:
        raise AddressError(_("This is not a Tron address (it starts with T and has 34 "
                             "characters).")) from None
    if len(raw) != 21 or raw[0] != 0x41:
        raise AddressError(_("This is not a Tron address (it starts with T and has 34 "
                             "characters)."))
    return address


def _algorand(address: str) -> str:
    message = _("An Algorand address has 58 capital letters and digits.")
    if not re.fullmatch(r"[A-Z2-7]{58}", address):
        raise AddressError(message)
    try:
        raw = base64.b32decode(address + "======")
    except (binascii.Error, ValueError):
        raise AddressError(message) from None
    key, checksum = raw[:32], raw[32:]
    # The last character carries two padding bits: only the canonical spelling is accepted.
    canonical = base64.b32encode(raw).decode().rstrip("=")
    if canonical != address or SHA512.new(key, truncate="256").digest()[-4:] != checksum:
        raise AddressError(_("This address has a typo: its checksum does not match. "
                             "Copy it again from your wallet."))
    return address


def _near(address: str) -> str:
    lowered = address.lower()
    if re.fullmatch(r"[0-9a-f]{64}", lowered):
        return lowered
    if 2 <= len(address) <= 64 and _NEAR_NAMED.fullmatch(address):
        return address
    raise AddressError(_("This is not a NEAR account (for example name.near)."))


_VALIDATORS = {
    "SOLANA": _solana, "STELLAR": _stellar, "TON": _ton, "TRON": _tron,
    "ALGORAND": _algorand, "NEAR": _near,
}


def validate_address(network: str, address: str) -> str:
    """Return ``address`` normalised for ``network`` or raise :class:`AddressError`.

    EVM addresses come back in their EIP-55 checksummed form, so what the user reviews is what a
    wallet shows.
    """
    address = (address or "").strip()
    if not address:
        raise AddressError(_("Enter the wallet address that receives the crypto."))
    if len(address) > 128:
        raise AddressError(_("This is too long to be a wallet address."))
    if network in EVM_NETWORKS:
        return _evm(network, address)
    validator = _VALIDATORS.get(network)
    if validator is None:
        raise AddressError(_("This network is not supported."))
    return validator(address)


def address_notice(network: str, address: str) -> str | None:
    """A warning to show beside a valid address that carries no checksum, else ``None``."""
    if network in EVM_NETWORKS and _EVM.fullmatch(address or ""):
        body = address[2:]
        if body in (body.lower(), body.upper()) and any(c.isalpha() for c in body):
            # The review shows it checksummed (capitals where EIP-55 puts them), while the
            # user's wallet may show it all lower case: say that case is not what to compare.
            return _("This address has no checksum, so a typo cannot be detected. We show it "
                     "with capitals added as a check; ignoring capitals, compare it with your "
                     "wallet character by character.")
    return None


def network_has_memo(network: str) -> bool:
    """Whether transfers on ``network`` can carry a memo (Stellar memo text, TON comment)."""
    return network in MEMO_NETWORKS


def validate_memo(network: str, memo: str | None) -> str:
    """Return the cleaned memo ('' for none) or raise :class:`AddressError`."""
    memo = (memo or "").strip()
    if not memo:
        return ""
    if not network_has_memo(network):
        raise AddressError(_("This network does not use a memo: leave it empty."))
    if len(memo.encode("utf-8")) > MAX_MEMO_BYTES:
        raise AddressError(_("A memo is at most %(limit)s characters.", limit=MAX_MEMO_BYTES))
    if any(ord(c) < 32 for c in memo):
        raise AddressError(_("A memo cannot contain control characters."))
    return memo


_EXPLORERS = {
    "ETHEREUM": "https://etherscan.io/tx/{}",
    "POLYGON": "https://polygonscan.com/tx/{}",
    "CELO": "https://celoscan.io/tx/{}",
    "BASE": "https://basescan.org/tx/{}",
    "AVALANCHE": "https://snowtrace.io/tx/{}",
    "OPTIMISM": "https://optimistic.etherscan.io/tx/{}",
    "ARBITRUM": "https://arbiscan.io/tx/{}",
    "BNB": "https://bscscan.com/tx/{}",
    "LISK": "https://blockscout.lisk.com/tx/{}",
    "SOLANA": "https://solscan.io/tx/{}",
    "STELLAR": "https://stellar.expert/explorer/public/tx/{}",
    "TON": "https://tonviewer.com/transaction/{}",
    "TRON": "https://tronscan.org/#/transaction/{}",
    "ALGORAND": "https://allo.info/tx/{}",
    "NEAR": "https://nearblocks.io/txns/{}",
}
# The same explorers' test networks (what the upstream's sandbox environments run on); a network
# without a well-known public testnet explorer gets no link rather than a mainnet one.
_TESTNET_EXPLORERS = {
    "ETHEREUM": "https://sepolia.etherscan.io/tx/{}",
    "POLYGON": "https://amoy.polygonscan.com/tx/{}",
    "CELO": "https://celo-sepolia.blockscout.com/tx/{}",
    "BASE": "https://sepolia.basescan.org/tx/{}",
    "AVALANCHE": "https://testnet.snowtrace.io/tx/{}",
    "OPTIMISM": "https://sepolia-optimism.etherscan.io/tx/{}",
    "ARBITRUM": "https://sepolia.arbiscan.io/tx/{}",
    "BNB": "https://testnet.bscscan.com/tx/{}",
    "SOLANA": "https://solscan.io/tx/{}?cluster=devnet",
    "STELLAR": "https://stellar.expert/explorer/testnet/tx/{}",
    "TON": "https://testnet.tonviewer.com/transaction/{}",
}
# Transaction hashes are hex, base58, base32 or base64url: anything else is not linked.
_HASH = re.compile(r"[A-Za-z0-9_\-]{16,128}|0x[0-9a-fA-F]{64}")


def explorer_tx_url(network: str, tx_hash: str | None, *, testnet: bool = False) -> str | None:
    """The block-explorer page of transaction ``tx_hash`` on ``network`` (its test network when
    ``testnet``), or ``None``."""
    template = (_TESTNET_EXPLORERS if testnet else _EXPLORERS).get(network)
    if not template or not tx_hash or not _HASH.fullmatch(tx_hash):
        return None
    return template.format(quote(tx_hash, safe=""))


# --- Transaction hashes ------------------------------------------------------------------------
# After paying, a user may paste the hash of their transfer so that it can be traced. They often
# copy the explorer's link instead of the bare hash, so a link is accepted and the hash taken out
# of it. Only the shape is checked here: whether the transaction exists is the chain's business.

_EVM_TX = re.compile(r"0x[0-9a-fA-F]{64}")
_HEX_TX = re.compile(r"(?:0x)?([0-9a-fA-F]{64})")
_TON_BASE64_TX = re.compile(r"[A-Za-z0-9_\-+/]{43}=?")
# A pasted link: a scheme, or a host name (it has a dot; base64 hashes have none) before a slash.
_LINK = re.compile(r"[a-z][a-z0-9+.\-]*://|[^/]*\.[^/]*/", re.IGNORECASE)
# Path words that explorers put right before the hash (etherscan /tx/, nearblocks /txns/,
# tonviewer /transaction/, tronscan /#/transaction/).
_TX_PATH_WORDS = frozenset({"tx", "txs", "txn", "txns", "transaction", "transactions"})
_EXPLORER_HOSTS = {urlsplit(url).hostname: network
                   for explorers in (_EXPLORERS, _TESTNET_EXPLORERS)
                   for network, url in explorers.items()}
_MAX_TX_INPUT = 512


def _evm_tx(network: str, value: str) -> str:
    if not _EVM_TX.fullmatch(value):
        raise AddressError(_("This is not a transaction hash on %(network)s: it starts with 0x "
                             "and has 64 more characters.", network=network.title()))
    return value.lower()


def _solana_tx(value: str) -> str:
    # A transaction is named by its first signature: base58 of 64 bytes.
    if not 64 <= len(value) <= 88 or not _BASE58.fullmatch(value) \
            or len(base58.b58decode(value)) != 64:
        raise AddressError(_("This is not a Solana transaction signature: it has 64 to 88 "
                             "letters and digits (base58)."))
    return value


def _bare_hex(value: str) -> str | None:
    # Stellar, Tron and TON explorers print 64 bare hex digits; a 0x added by a wallet is dropped.
    match = _HEX_TX.fullmatch(value)
    return match.group(1).lower() if match else None


def _stellar_tx(value: str) -> str:
    tx_hash = _bare_hex(value)
    if tx_hash is None:
        raise AddressError(_("This is not a Stellar transaction hash: it has 64 characters, "
                             "digits and the letters a to f."))
    return tx_hash


def _tron_tx(value: str) -> str:
    tx_hash = _bare_hex(value)
    if tx_hash is None:
        raise AddressError(_("This is not a Tron transaction hash: it has 64 characters, digits "
                             "and the letters a to f."))
    return tx_hash


def _ton_tx(value: str) -> str:
    # TON explorers show the 32-byte hash in hex (tonviewer) or in base64/base64url (toncenter,
    # tonscan). Both name the same bytes, so both come back as hex, the form tonviewer links to.
    tx_hash = _bare_hex(value)
    if tx_hash is not None:
        return tx_hash
    message = _("This is not a TON transaction hash: it has 64 characters (digits and the "
                "letters a to f) or 44 in base64.")
    if not _TON_BASE64_TX.fullmatch(value):
        raise AddressError(message)
    body = value.replace("+", "-").replace("/", "_").rstrip("=")
    try:
        raw = base64.urlsafe_b64decode(body + "=")
    except (binascii.Error, ValueError):
        raise AddressError(message) from None
    if len(raw) != 32 or base64.urlsafe_b64encode(raw).decode().rstrip("=") != body:
        raise AddressError(message)     # the last character carries two padding bits
    return raw.hex()


def _algorand_tx(value: str) -> str:
    # A transaction ID is base32 (unpadded) of a 32-byte SHA-512/256 digest: 52 characters.
    message = _("This is not an Algorand transaction ID: it has 52 capital letters and digits.")
    value = value.upper()
    if not re.fullmatch(r"[A-Z2-7]{52}", value):
        raise AddressError(message)
    if base64.b32encode(base64.b32decode(value + "====")).decode().rstrip("=") != value:
        raise AddressError(message)     # the last character carries four padding bits
    return value


def _near_tx(value: str) -> str:
    # base58 of a 32-byte hash.
    if not 32 <= len(value) <= 44 or not _BASE58.fullmatch(value) \
            or len(base58.b58decode(value)) != 32:
        raise AddressError(_("This is not a NEAR transaction hash: it has 43 or 44 letters and "
                             "digits (base58)."))
    return value


_TX_VALIDATORS: dict[str, Callable[[str], str]] = {
    "SOLANA": _solana_tx, "STELLAR": _stellar_tx, "TRON": _tron_tx, "TON": _ton_tx,
    "ALGORAND": _algorand_tx, "NEAR": _near_tx,
}


def _hash_from_link(network: str, link: str) -> str:
    """The hash inside a pasted explorer link (``https://polygonscan.com/tx/0x...``)."""
    try:
        parts = urlsplit(link if "://" in link else f"https://{link}")
        host = (parts.hostname or "").removeprefix("www.")
    except ValueError:      # a broken host such as "[::1"
        return ""
    other = _EXPLORER_HOSTS.get(host)
    if other is not None and other != network:
        # The link names its chain. Every EVM chain has the same hash format, so only the link
        # can tell that the user copied a transaction from another chain.
        raise AddressError(_("This link is for a transaction on %(other)s, not on %(network)s.",
                             other=other.title(), network=network.title()))
    # tronscan keeps its route in the fragment (#/transaction/<hash>).
    segments = [unquote(s) for s in f"{parts.path}/{parts.fragment}".split("/") if s.strip()]
    for word, following in zip(segments, segments[1:], strict=False):
        if word.lower() in _TX_PATH_WORDS:
            return following
    return segments[-1] if segments else ""


def validate_transaction_hash(network: str, value: str) -> str:
    """Return the hash of a transaction on ``network``, or raise :class:`AddressError`.

    ``value`` is what the user pasted: the hash itself, or a block-explorer link to the
    transaction. Hex hashes come back lower case (EVM with ``0x``; Stellar, Tron and TON
    without), Algorand IDs upper case, base58 ones (Solana, NEAR) as given.
    """
    value = (value or "").strip()
    if not value:
        raise AddressError(_("Enter the transaction hash, or paste the link to the transaction "
                             "from a block explorer."))
    if len(value) > _MAX_TX_INPUT:
        raise AddressError(_("This is too long to be a transaction hash."))
    if network not in EVM_NETWORKS and network not in _TX_VALIDATORS:
        raise AddressError(_("This network is not supported."))
    if _LINK.match(value):
        value = _hash_from_link(network, value).strip()
    if network in EVM_NETWORKS:
        return _evm_tx(network, value)
    return _TX_VALIDATORS[network](value)
