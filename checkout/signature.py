"""The two signatures the checkout and its upstream share, as pure functions: the one module the
sandbox (a neighbour of the product, see ``docs/design.md``) imports from it.

Webhooks (upstream spec 6.3): ``x-signature = hex(sha256(raw_body + hex(sha256(utf8(secret)))))``,
body first, then the lowercase hex of the secret's hash. Parsing and re-serialising the body
changes the result, so callers pass the bytes exactly as sent or received.

Requests (upstream-notes section 1): ``x-signature = Base64(HMAC-SHA256(key=Base64-decode(client
secret), msg=f"{timestamp}:{endpoint}"))``, where ``endpoint`` is the path plus the query string
exactly as sent and ``timestamp`` is Unix time in milliseconds. Secrets are accepted in standard
or URL-safe Base64, with or without padding: the two alphabets differ only in ``+/`` versus ``-_``,
so a secret can never be valid in both with a different meaning; one mixing them is refused.

Errors are plain ``ValueError`` subclasses: each side says them in its own words (the checkout's
receiver as a 401, its configuration as a ConfigurationError; the sandbox as its API's error).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_URLSAFE_TO_STANDARD = str.maketrans("-_", "+/")


class InvalidSignature(ValueError):
    """A webhook's ``x-signature`` is missing, malformed, or does not sign its body."""


class InvalidSecret(ValueError):
    """A client secret that is no usable Base64 key. Its message never quotes the secret."""


def _secret_hash_hex(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest().encode("ascii")


def sign(body: bytes, secret: str) -> str:
    """The webhook ``x-signature`` value for ``body`` (lowercase hex)."""
    return hashlib.sha256(body + _secret_hash_hex(secret)).hexdigest()


def verify(body: bytes, header: str | None, secret: str) -> None:
    """Raise :class:`InvalidSignature` unless ``header`` signs ``body`` with ``secret``.

    Hex case is not significant (some senders upper-case it); the comparison is constant-time.
    """
    if header is None or header == "":
        raise InvalidSignature("missing x-signature header")
    candidate = header.strip()
    if not _HEX64.fullmatch(candidate):
        raise InvalidSignature("malformed x-signature header")
    if not body:
        raise InvalidSignature("empty body")
    expected = sign(body, secret)
    if not hmac.compare_digest(expected.encode("ascii"), candidate.lower().encode("ascii")):
        raise InvalidSignature("signature does not match the body")


def decode_secret(client_secret_b64: str) -> bytes:
    """The HMAC key bytes of a Base64 client secret."""
    text = "".join(client_secret_b64.split())      # copy-pasted secrets often carry a newline
    if not text:
        raise InvalidSecret("the upstream client secret is empty")
    has_standard = "+" in text or "/" in text
    has_urlsafe = "-" in text or "_" in text
    if has_standard and has_urlsafe:
        raise InvalidSecret("the upstream client secret mixes standard and URL-safe Base64")
    text = text.rstrip("=").translate(_URLSAFE_TO_STANDARD)
    padded = text + "=" * (-len(text) % 4)
    try:
        key = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSecret("the upstream client secret is not valid Base64") from None
    if not key:
        raise InvalidSecret("the upstream client secret decodes to no bytes")
    return key


def request_signature(key: bytes, timestamp_ms: int | str, endpoint: str) -> str:
    """The request ``x-signature``: Base64 HMAC-SHA256 of ``"{timestamp_ms}:{endpoint}"`` under
    already-decoded key bytes. A receiver passes the timestamp as the text that was sent, never
    a number formatted again."""
    message = f"{timestamp_ms}:{endpoint}".encode()
    return base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode("ascii")
