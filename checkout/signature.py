"""Webhook signatures exactly as upstream spec 6.3: pure functions over the raw body bytes.

``x-signature = hex(sha256(raw_body + hex(sha256(utf8(secret)))))``: body first, then the lowercase
hex of the secret's hash. Parsing and re-serialising the body changes the result, so callers must
pass the bytes exactly as sent or received.
"""
from __future__ import annotations

import hashlib
import hmac
import re

from .errors import WebhookSignatureError

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def _secret_hash_hex(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest().encode("ascii")


def sign(body: bytes, secret: str) -> str:
    """The ``x-signature`` value for ``body`` (lowercase hex)."""
    return hashlib.sha256(body + _secret_hash_hex(secret)).hexdigest()


def verify(body: bytes, header: str | None, secret: str) -> None:
    """Raise :class:`WebhookSignatureError` unless ``header`` signs ``body`` with ``secret``.

    Hex case is not significant (some senders upper-case it); the comparison is constant-time.
    """
    if header is None or header == "":
        raise WebhookSignatureError("missing x-signature header")
    candidate = header.strip()
    if not _HEX64.fullmatch(candidate):
        raise WebhookSignatureError("malformed x-signature header")
    if not body:
        raise WebhookSignatureError("empty body")
    expected = sign(body, secret)
    if not hmac.compare_digest(expected.encode("ascii"), candidate.lower().encode("ascii")):
        raise WebhookSignatureError("signature does not match the body")
