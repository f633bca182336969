"""Merchant authentication of ``/api/*`` requests (spec 5, upstream-notes 1).

Every request must carry the merchant's ``x-client-id``. The spec lists no header for the on-ramp
confirm and OTP endpoints, but the notes say every request carries it, and an unauthenticated endpoint
that moves an order forward would let anyone who learns an order id confirm it: the sandbox requires
the header there too.

When the sandbox has a client secret, requests must also carry ``x-timestamp`` (Unix milliseconds,
within 60 s of now) and ``x-signature`` = Base64(HMAC-SHA256(key=Base64-decode(secret),
msg="{timestamp}:{path and query exactly as received}")). The path is taken from the raw request URI
so that a client which re-orders or re-encodes its query after signing fails here as it would
upstream.
"""
from __future__ import annotations

import hmac
import time
from typing import Any
from urllib.parse import quote

from flask import Flask, Response, jsonify, request

from ..signature import decode_secret, request_signature

TIMESTAMP_TOLERANCE_MS = 60_000
SIGNATURE_INVALID = "Signature is invalid"


def _unauthorized(message: str) -> Response:
    response = jsonify(message=message)
    response.status_code = 401
    return response


def raw_endpoint(environ: dict[str, Any]) -> str:
    """The path and query string of the request exactly as the client sent them."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if raw:
        if raw.startswith(("http://", "https://")):     # absolute-form request target
            raw = "/" + raw.split("/", 3)[3] if raw.count("/") >= 3 else "/"
        return raw
    # WSGI decoded the path (as latin-1); re-encoding it restores what a well-behaved client sent.
    path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    path = quote(path.encode("latin-1"), safe="/:@!$&'()*+,;=-._~")
    query = environ.get("QUERY_STRING", "")
    return f"{path}?{query}" if query else path


def init_app(app: Flask) -> None:
    client_id: str = app.config["SANDBOX_CLIENT_ID"]
    secret = app.config.get("SANDBOX_CLIENT_SECRET")
    # Decoded once: a malformed secret fails when the sandbox starts, not on the first request.
    key = decode_secret(secret) if secret else None

    @app.before_request
    def authenticate() -> Response | None:
        if not request.path.startswith("/api/"):
            return None
        # The upstream answers every credential failure with this one body (notes 2): a missing or
        # wrong client id reads as the signature failure merchants will meet in production.
        given = request.headers.get("x-client-id", "")
        if not given or not hmac.compare_digest(given.encode("utf-8"), client_id.encode("utf-8")):
            return _unauthorized(SIGNATURE_INVALID)
        if key is None:
            return None
        timestamp = request.headers.get("x-timestamp", "")
        sent_signature = request.headers.get("x-signature", "")
        if not timestamp.isdigit() or not sent_signature:
            return _unauthorized(SIGNATURE_INVALID)
        if abs(time.time_ns() // 1_000_000 - int(timestamp)) > TIMESTAMP_TOLERANCE_MS:
            return _unauthorized(SIGNATURE_INVALID)
        # The timestamp is signed as the text that was sent, not as a re-formatted number.
        expected = request_signature(key, timestamp, raw_endpoint(request.environ))
        if not hmac.compare_digest(expected.encode("ascii"), sent_signature.encode("utf-8")):
            return _unauthorized(SIGNATURE_INVALID)
        return None
