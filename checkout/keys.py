"""The keys the checkout derives from ``CHECKOUT_LAUNCH_SECRET``: one place says how.

The launch secret signs launch tokens (HS256) as it is. Everything else the checkout keys with it
gets a key of its own, derived with a label naming its one purpose (review digests, order view and
receipt tokens, the rate limiter's session keys): a key made for one purpose can never stand for
another, nor for the launch secret itself.
"""
from __future__ import annotations

import hashlib
import hmac


def secret_bytes(secret: str | bytes) -> bytes:
    """The launch secret as the bytes every key is made from (text is taken as UTF-8)."""
    return secret.encode() if isinstance(secret, str) else bytes(secret)


def derived_key(secret: str | bytes, purpose: bytes) -> bytes:
    """A key of its own for ``purpose`` (a label, e.g. ``b"checkout review digest v1"``):
    HMAC-SHA256 of the label under the launch secret."""
    return hmac.new(secret_bytes(secret), purpose, hashlib.sha256).digest()
