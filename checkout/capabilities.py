"""Addresses that travel to third parties, and what they can open: one order's status, no more.

A redirect payment sends the user's browser through a payment provider's page with our return
address, and the upstream keeps that address with the order (the sandbox's console lists it). The
session id opens and controls the whole session (its wallet address, its contact details, its
forms), so it must never be in such an address. The return address carries an **order view
token** instead: the session id encrypted and authenticated (JWE, ``dir`` + ``A256GCM``) under a
key derived from the launch secret. It names nothing readable, cannot be forged or turned into
another session's, and the pages it opens (:mod:`checkout.views.status`) show that order's status
and the way back to the shop: no form, no resume link, no session id, no anti-forgery token.

Rotating ``CHECKOUT_LAUNCH_SECRET`` retires the tokens made under the old one: a user coming back
from a payment page with one then sees "not found" (the order itself is not affected).
"""
from __future__ import annotations

import hashlib
import hmac
from typing import Any

from flask import Flask, current_app
from joserfc import jwe
from joserfc.errors import JoseError
from joserfc.jwk import OctKey

from .inputs import is_session_id
from .sessions import CheckoutSession

__all__ = ["order_view_token", "session_id_of", "OrderView"]

ALGORITHMS = ["dir", "A256GCM"]
HEADER = {"alg": "dir", "enc": "A256GCM"}
PURPOSE = b"checkout order view token v1"
MAX_TOKEN_LENGTH = 512          # ours are about 140 characters


def _key(app: Flask) -> OctKey:
    secret = app.config["CHECKOUT_LAUNCH_SECRET"]
    raw = secret.encode() if isinstance(secret, str) else bytes(secret)
    # A key of its own, derived for this one purpose: a launch token's signing key never
    # encrypts, and this key never signs.
    return OctKey.import_key(hmac.new(raw, PURPOSE, hashlib.sha256).digest())


def order_view_token(session_id: str, app: Flask | None = None) -> str:
    """A token that opens the order view of ``session_id``'s order, and nothing else."""
    return jwe.encrypt_compact(HEADER, session_id.encode(), _key(app or current_app),
                               algorithms=ALGORITHMS)


def session_id_of(token: str, app: Flask | None = None) -> str | None:
    """The session id inside an order view token, or None for anything not made by us."""
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_LENGTH:
        return None
    try:
        plain = jwe.decrypt_compact(token, _key(app or current_app),
                                    algorithms=ALGORITHMS).plaintext
    except (JoseError, ValueError, TypeError):
        return None
    try:
        session_id = (plain or b"").decode("ascii")
    except UnicodeDecodeError:
        return None
    return session_id if is_session_id(session_id) else None


class OrderView:
    """What the order view's pages may read of a session: its flow, its choices and its order.
    Never its id, its anti-forgery token or its contact details."""

    def __init__(self, session: CheckoutSession) -> None:
        self._session = session

    @property
    def flow(self) -> str:
        return self._session.flow

    @property
    def order_id(self) -> str | None:
        return self._session.order_id

    def value(self, name: str) -> Any:
        return self._session.value(name)
