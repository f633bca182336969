"""The keyed digests the desk names things by: a session by its id, and what a customer may quote
(their email and phone, their shop reference, a wallet address, a transaction hash).

A session id opens the session, and an email or a phone number is a person's: none of them is
kept anywhere new. Each is an HMAC-SHA256 under a key of its own, derived from
``CHECKOUT_LAUNCH_SECRET`` for each purpose (as :mod:`checkout.capabilities` derives its keys), so
a digest can only be matched by someone who already holds the value and the key, and a desk key
never stands for a launch token, a rate limit's key or a KYC level's. Emails and phone numbers
are digested as the KYC levels remember people (:func:`checkout.kyc.memory.person_keys`).

Rotating ``CHECKOUT_LAUNCH_SECRET`` changes every digest: orders indexed before can then be found
by their reference only, until ``flask checkout desk reindex`` indexes them again.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Iterable

import re2

from ..kyc.memory import person_keys

__all__ = ["session_key", "search_keys", "normalised"]

SESSION_KEYS = b"checkout desk: session keys v1"
SEARCH_KEYS = b"checkout desk: search keys v1"

# A hexadecimal value (an EVM address or hash, most chains' transaction ids) reads the same in
# either case: it is kept and looked up in lower case. Base58 and the like are case-sensitive.
_HEX = re2.compile(r"^(0x)?[0-9a-fA-F]+$")


@functools.lru_cache(maxsize=16)
def _key(launch_secret: str, purpose: bytes) -> str:
    raw = launch_secret.encode()
    return hmac.new(raw, purpose, hashlib.sha256).hexdigest()


def _digest(key: str, name: str) -> str:
    return hmac.new(key.encode(), name.encode(), hashlib.sha256).hexdigest()[:64]


def session_key(launch_secret: str, session_id: str) -> str:
    """How the desk names a session (its step events, its order): never its id."""
    return _digest(_key(launch_secret, SESSION_KEYS), session_id)


def normalised(value: str) -> str:
    """A quoted address, hash or reference as it is kept: trimmed, hexadecimal in lower case."""
    value = value.strip()
    return value.lower() if _HEX.match(value) else value


def search_keys(launch_secret: str, *, emails: Iterable[str | None] = (),
                phones: Iterable[str | None] = (), order_params: Iterable[str | None] = (),
                addresses: Iterable[str | None] = (),
                hashes: Iterable[str | None] = ()) -> list[str]:
    """The digests an order is found by, for each value given (phones in E.164 digits); the same
    digests a search computes of what it is asked."""
    key = _key(launch_secret, SEARCH_KEYS)
    found: list[str] = []
    for email in emails:
        found += person_keys(key, email=email)
    for phone in phones:
        found += person_keys(key, phone=phone)
    for kind, values in (("params", order_params), ("address", addresses), ("hash", hashes)):
        found += [_digest(key, f"{kind}:{normalised(value)}") for value in values
                  if value and value.strip()]
    return list(dict.fromkeys(found))
