"""Strict request checking for the sandbox API: every bad input is a 400 naming the parameter.

The real upstream rejects unknown body keys and answers ``{"message": ...}`` for bad input
(upstream-notes section 2). Being at least as strict here means a merchant's integration that passes
against the sandbox does not meet its first 400 in production.
"""
from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import base58
from Crypto.Hash import keccak
from flask import Request

ONRAMP_NETWORKS = ("POLYGON", "ETHEREUM", "STELLAR", "AVALANCHE", "SOLANA", "ALGORAND", "CELO",
                   "BASE", "TON", "LISK", "ARBITRUM", "OPTIMISM", "BNB")
ONRAMP_ASSETS = ("USDC", "USDC_E", "USDT", "CUSD", "CKES")
PAYMENT_CHANNELS = ("bank", "mobile_money", "airtime", "paybill")
OFFRAMP_TYPES = ("bank", "airtime", "mobile_money", "paybill")
LEGACY_PROVIDERS = ("bank_transfer", "mobile_money", "mpesa", "carrier")
BUY_SWAP_STATUSES = ("initiated", "expired", "buyer_confirmed", "seller_confirmation_pending",
                     "seller_confirmation_failed", "seller_confirmed", "seller_rejected")
WITHDRAWAL_STATUSES = ("pending", "complete", "failed")
PAYMENT_TYPES = ("CRYPTO_WALLET", "VIRTUAL_WALLET")

EVM_NETWORKS = frozenset({"POLYGON", "ETHEREUM", "AVALANCHE", "CELO", "BASE", "LISK", "ARBITRUM",
                          "OPTIMISM", "BNB"})
# Networks whose transfers carry a memo; a memo for any other network would be silently lost.
MEMO_NETWORKS = frozenset({"STELLAR", "TON"})
MAX_MEMO_LENGTH = 28        # Stellar's text memo limit; TON comments fit comfortably too

_EMAIL = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+")
_EVM_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_EVM_HASH = re.compile(r"0x[0-9a-fA-F]{64}")
_BASE58 = re.compile(r"[1-9A-HJ-NP-Za-km-z]+")


class ApiError(Exception):
    """An answer other than 200, carrying the JSON body the upstream would send."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("message") or body.get("code") or str(status))
        self.status = status
        self.body = body


class InvalidRequest(ApiError):
    """400 ``{"message": ...}``."""

    def __init__(self, message: str) -> None:
        super().__init__(400, {"message": message})


class OrderNotAvailable(ApiError):
    """404 ``{"code": "ORDER_NOT_AVAILABLE"}``, as the upstream answers for any unknown order."""

    def __init__(self) -> None:
        super().__init__(404, {"code": "ORDER_NOT_AVAILABLE"})


# -- query strings --------------------------------------------------------------------------------

class Query:
    """The query string of one request, read parameter by parameter.

    Unknown parameters are ignored (the upstream does), but a repeated one is refused: which of two
    values was meant is ambiguous, and a merchant's signing bug often shows up exactly that way.
    """

    def __init__(self, request: Request) -> None:
        self._args = request.args

    def _one(self, name: str) -> str | None:
        values = self._args.getlist(name)
        if len(values) > 1:
            raise InvalidRequest(f"{name} must be given once")
        if not values:
            return None
        return values[0]

    @overload
    def text(self, name: str, *, required: Literal[True]) -> str: ...
    @overload
    def text(self, name: str, *, required: bool = False) -> str | None: ...
    def text(self, name: str, *, required: bool = False) -> str | None:
        value = self._one(name)
        if value is None or value == "":
            if required:
                raise InvalidRequest(f"{name} is required")
            return None
        return value

    @overload
    def choice(self, name: str, allowed: Iterable[str], *, required: Literal[True]) -> str: ...
    @overload
    def choice(self, name: str, allowed: Iterable[str], *, required: bool = False) -> str | None: ...
    def choice(self, name: str, allowed: Iterable[str], *, required: bool = False) -> str | None:
        value = self.text(name, required=required)
        if value is not None:
            check_choice(name, value, allowed)
        return value

    @overload
    def number(self, name: str, *, required: Literal[True]) -> float: ...
    @overload
    def number(self, name: str, *, required: bool = False) -> float | None: ...
    def number(self, name: str, *, required: bool = False) -> float | None:
        value = self.text(name, required=required)
        if value is None:
            return None
        return positive_number(name, value)

    def boolean(self, name: str, default: bool) -> bool:
        value = self.text(name)
        if value is None:
            return default
        if value not in ("true", "false"):
            raise InvalidRequest(f"{name} must be true or false")
        return value == "true"

    def limit(self) -> int:
        """``limit``: required, an integer from 1 to 100 (spec section 8)."""
        value = self.text("limit", required=True)
        if not re.fullmatch(r"[0-9]{1,4}", value) or not 1 <= int(value) <= 100:
            raise InvalidRequest("limit must be an integer from 1 to 100")
        return int(value)

    @overload
    def country(self, name: str, *, required: Literal[True]) -> str: ...
    @overload
    def country(self, name: str, *, required: bool = False) -> str | None: ...
    def country(self, name: str, *, required: bool = False) -> str | None:
        value = self.text(name, required=required)
        if value is not None and not re.fullmatch(r"[A-Z]{2}", value):
            raise InvalidRequest(f"{name} must be an ISO 3166-1 alpha-2 country code")
        return value


def check_choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    if not isinstance(value, str) or value not in allowed:
        raise InvalidRequest(f"{name} must be one of: {', '.join(allowed)}")
    return value


def positive_number(name: str, value: Any) -> float:
    """A finite number greater than zero, from JSON or from a query-string text."""
    if isinstance(value, bool):
        raise InvalidRequest(f"{name} must be a number")
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", value.strip()) or value != value.strip():
            raise InvalidRequest(f"{name} must be a number")
        value = float(value)
    if not isinstance(value, (int, float)):
        raise InvalidRequest(f"{name} must be a number")
    try:
        finite = math.isfinite(value)
    except OverflowError:           # an integer too large for a float
        finite = False
    if not finite:
        raise InvalidRequest(f"{name} must be a finite number")
    if value <= 0:
        raise InvalidRequest(f"{name} must be greater than 0")
    return float(value)


# -- JSON bodies ----------------------------------------------------------------------------------

def form_or_json(request: Request) -> dict[str, Any]:
    """The body of a console action: a browser's form, or a JSON object from a test or a script."""
    if request.is_json:
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            raise InvalidRequest("the body must be a JSON object")
        return data
    return request.form.to_dict()


class Body:
    """A JSON object body whose keys must all be in ``allowed`` (unknown keys are refused upstream)."""

    def __init__(self, request: Request, allowed: Iterable[str]) -> None:
        raw = request.get_data(cache=True)
        if request.mimetype != "application/json":
            raise InvalidRequest("the body must be JSON (Content-Type: application/json)")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise InvalidRequest("the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise InvalidRequest("the body must be a JSON object")
        allowed = set(allowed)
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InvalidRequest(f"unknown field(s) in body: {', '.join(unknown)}")
        self.data: dict[str, Any] = data

    @overload
    def text(self, name: str, *, required: Literal[True], max_length: int = 512) -> str: ...
    @overload
    def text(self, name: str, *, required: bool = False, max_length: int = 512) -> str | None: ...
    def text(self, name: str, *, required: bool = False, max_length: int = 512) -> str | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise InvalidRequest(f"{name} is required")
            return None
        if not isinstance(value, str):
            raise InvalidRequest(f"{name} must be a string")
        if value.strip() == "":
            raise InvalidRequest(f"{name} must not be empty")
        if len(value) > max_length:
            raise InvalidRequest(f"{name} is too long (at most {max_length} characters)")
        return value

    @overload
    def choice(self, name: str, allowed: Iterable[str], *, required: Literal[True]) -> str: ...
    @overload
    def choice(self, name: str, allowed: Iterable[str], *, required: bool = False) -> str | None: ...
    def choice(self, name: str, allowed: Iterable[str], *, required: bool = False) -> str | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise InvalidRequest(f"{name} is required")
            return None
        return check_choice(name, value, allowed)

    @overload
    def number(self, name: str, *, required: Literal[True]) -> float: ...
    @overload
    def number(self, name: str, *, required: bool = False) -> float | None: ...
    def number(self, name: str, *, required: bool = False) -> float | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise InvalidRequest(f"{name} is required")
            return None
        if isinstance(value, str):
            raise InvalidRequest(f"{name} must be a JSON number")
        return positive_number(name, value)

    @overload
    def mapping(self, name: str, *, required: Literal[True]) -> dict[str, str]: ...
    @overload
    def mapping(self, name: str, *, required: bool = False) -> dict[str, str] | None: ...
    def mapping(self, name: str, *, required: bool = False) -> dict[str, str] | None:
        """An object of string values (offer required fields, extra fields)."""
        value = self.data.get(name)
        if value is None:
            if required:
                raise InvalidRequest(f"{name} is required")
            return None
        if not isinstance(value, dict):
            raise InvalidRequest(f"{name} must be an object")
        if len(value) > 50:
            raise InvalidRequest(f"{name} has too many fields")
        for key, item in value.items():
            if not isinstance(item, str):
                raise InvalidRequest(f"{name}.{key} must be a string")
            if len(key) > 64 or len(item) > 256:
                raise InvalidRequest(f"{name}.{key[:64]} is too long")
        return dict(value)

    @overload
    def email(self, name: str, *, required: Literal[True]) -> str: ...
    @overload
    def email(self, name: str, *, required: bool = False) -> str | None: ...
    def email(self, name: str, *, required: bool = False) -> str | None:
        value = self.text(name, required=required, max_length=254)
        if value is not None and not _EMAIL.fullmatch(value):
            raise InvalidRequest(f"{name} must be an email address")
        return value

    @overload
    def ipv4(self, name: str, *, required: Literal[True]) -> str: ...
    @overload
    def ipv4(self, name: str, *, required: bool = False) -> str | None: ...
    def ipv4(self, name: str, *, required: bool = False) -> str | None:
        value = self.text(name, required=required, max_length=15)
        if value is not None:
            try:
                ipaddress.IPv4Address(value)
            except ValueError:
                raise InvalidRequest(f"{name} must be an IPv4 address") from None
        return value

    def url(self, name: str) -> str | None:
        value = self.text(name, max_length=2048)
        if value is not None and not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
            raise InvalidRequest(f"{name} must be an absolute http(s) URL")
        return value


# -- wallet addresses -----------------------------------------------------------------------------

def _crc16_xmodem(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def _evm_checksum_ok(address: str) -> bool:
    """EIP-55: an all-lower or all-upper address has no checksum; a mixed-case one must match it."""
    body = address[2:]
    if body == body.lower() or body == body.upper():
        return True
    digest = keccak.new(digest_bits=256, data=body.lower().encode("ascii")).hexdigest()
    return all(
        (char.upper() if int(nibble, 16) >= 8 else char.lower()) == char
        for char, nibble in zip(body, digest, strict=False)
    )


def _stellar_ok(address: str) -> bool:
    if len(address) != 56 or not address.startswith("G"):
        return False
    try:
        raw = base64.b32decode(address)
    except (binascii.Error, ValueError):
        return False
    payload, checksum = raw[:-2], raw[-2:]
    return payload[0] == 6 << 3 and _crc16_xmodem(payload).to_bytes(2, "little") == checksum


def _solana_ok(address: str) -> bool:
    if not 32 <= len(address) <= 44 or not _BASE58.fullmatch(address):
        return False
    return len(base58.b58decode(address)) == 32


def _ton_ok(address: str) -> bool:
    if re.fullmatch(r"-?[01]:[0-9a-fA-F]{64}", address):    # raw form: workchain:account
        return True
    if len(address) != 48:
        return False
    try:
        raw = base64.urlsafe_b64decode(address.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 36 and _crc16_xmodem(raw[:34]).to_bytes(2, "big") == raw[34:]


def _algorand_ok(address: str) -> bool:
    return re.fullmatch(r"[A-Z2-7]{58}", address) is not None


def check_address(name: str, network: str, address: str) -> str:
    """Refuse an address that cannot belong to ``network``: crypto sent there would be lost."""
    if network in EVM_NETWORKS:
        valid = bool(_EVM_ADDRESS.fullmatch(address)) and _evm_checksum_ok(address)
    elif network == "STELLAR":
        valid = _stellar_ok(address)
    elif network == "SOLANA":
        valid = _solana_ok(address)
    elif network == "TON":
        valid = _ton_ok(address)
    elif network == "ALGORAND":
        valid = _algorand_ok(address)
    else:
        valid = False
    if not valid:
        raise InvalidRequest(f"{name} is not a valid {network} address")
    return address


def check_memo(network: str, memo: str | None) -> str | None:
    if memo is None:
        return None
    if network not in MEMO_NETWORKS:
        raise InvalidRequest(f"memo is not supported on {network}")
    if len(memo) > MAX_MEMO_LENGTH:
        raise InvalidRequest(f"memo is too long (at most {MAX_MEMO_LENGTH} characters)")
    return memo


def check_transaction_hash(name: str, value: str) -> str:
    # Off-ramp deposits are only accepted on EVM networks (spec 2.1), whose hashes are 32 bytes hex.
    if not _EVM_HASH.fullmatch(value):
        raise InvalidRequest(f"{name} must be a transaction hash (0x followed by 64 hex digits)")
    return value


def require_known(name: str, value: str | None, known: Mapping[str, Any] | Iterable[str]) -> None:
    if value is not None and value not in known:
        raise InvalidRequest(f"{name} is not supported: {value}")
