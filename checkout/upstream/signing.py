"""Request signing for the upstream (upstream-notes section 1): the merchant's credentials, and
the headers of each request signed with them (the signature itself: :mod:`checkout.signature`).
"""
from __future__ import annotations

import time
from typing import NoReturn

from .. import signature as signatures
from ..errors import ConfigurationError

CLIENT_ID_HEADER = "x-client-id"
TIMESTAMP_HEADER = "x-timestamp"
SIGNATURE_HEADER = "x-signature"


def decode_secret(client_secret_b64: str) -> bytes:
    """The HMAC key bytes of a Base64 client secret; a ConfigurationError (which never quotes the
    secret: it ends up in start-up logs) when it is no usable key."""
    try:
        return signatures.decode_secret(client_secret_b64)
    except signatures.InvalidSecret as exc:
        raise ConfigurationError(str(exc)) from None


def sign(client_secret_b64: str, timestamp_ms: int, endpoint: str) -> str:
    """The ``x-signature`` value for one request; ``endpoint`` is the path and query as sent."""
    return signatures.request_signature(decode_secret(client_secret_b64), timestamp_ms, endpoint)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Credentials:
    """The merchant's client id and (optional) signing key, kept out of every repr and message.

    The key is decoded once, so a malformed secret fails when the client is built, not mid-checkout.
    """

    __slots__ = ("_client_id", "_key", "_secret_text")

    def __init__(self, client_id: str, client_secret: str | None = None) -> None:
        if not client_id:
            raise ConfigurationError("the upstream client id is empty")
        self._client_id = client_id
        self._key = decode_secret(client_secret) if client_secret is not None else None
        # Kept only to scrub it from text the upstream sends back (see ``redact``).
        self._secret_text = client_secret.strip() if client_secret else None

    @property
    def signs(self) -> bool:
        return self._key is not None

    def headers(self, endpoint: str, timestamp_ms: int | None = None) -> dict[str, str]:
        """Authentication headers for one request to ``endpoint`` (path and query exactly as sent).

        Call once per attempt: a retry must carry a fresh timestamp (upstream-notes section 1).
        """
        headers = {CLIENT_ID_HEADER: self._client_id}
        if self._key is not None:
            timestamp = now_ms() if timestamp_ms is None else timestamp_ms
            headers[TIMESTAMP_HEADER] = str(timestamp)
            headers[SIGNATURE_HEADER] = signatures.request_signature(self._key, timestamp,
                                                                     endpoint)
        return headers

    def redact(self, text: str) -> str:
        """``text`` with the client id and secret blanked out.

        Applied to whatever the upstream sends back before it reaches an exception or a log: an
        error body that echoes the caller's client id must not carry it any further.
        """
        for secret in (self._client_id, self._secret_text):
            if secret:
                text = text.replace(secret, "<redacted>")
        return text

    def __repr__(self) -> str:
        return f"Credentials(client_id=<redacted>, signs={self.signs})"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:           # pickling would copy the key out of the process
        raise TypeError("Credentials cannot be pickled")
