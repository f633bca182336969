"""Addresses that travel to third parties, and what they can open: one order's status, no more.

A redirect payment sends the user's browser through a payment provider's page with our return
address, and the upstream keeps that address with the order (the sandbox's console lists it). The
session id opens and controls the whole session (its wallet address, its contact details, its
forms), so it must never be in such an address. The return address carries an **order view
token** instead: the session id encrypted and authenticated (JWE, ``dir`` + ``A256GCM``) under a
key derived from the launch secret. It names nothing readable, cannot be forged or turned into
another session's, and the pages it opens (:mod:`checkout.views.status`) show that order's status
and the way back to the shop: no form, no resume link, no session id, no anti-forgery token.

A **receipt token** opens one order's receipt (:mod:`checkout.views.receipts`): the order's id,
its flow and the language it was made in, sealed the same way under a key of its own. It needs no
session, so a receipt outlives the session's seven days.

An order view token expires ``CHECKOUT_RECEIPT_DAYS`` (90 by default) after it was made: the
``exp`` claim is inside the encrypted token, so it cannot be moved. An order view token made before
tokens carried one (the session id alone) is still read: it opens nothing once its session has
ended, which is seven days at most.

A receipt's lifetime is its order's, not its link's (:func:`receipt_open`): every view of an
order's page makes a new link, and a link made on the last day must not open for another 90. A
receipt opens until ``CHECKOUT_RECEIPT_DAYS`` after its order's last change as the checkout has it
stored: for an order paid out or refunded (final: nothing changes after), after it was done;
whenever and however often its link was made. The token's own ``exp`` (the same days after it was
made) counts only for an order the checkout has no record of.

Rotating ``CHECKOUT_LAUNCH_SECRET`` retires the tokens made under the old one: a user coming back
from a payment page with one then sees "not found" (the order itself is not affected).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Flask, current_app
from joserfc import jwe, jwt
from joserfc.errors import JoseError
from joserfc.jwk import OctKey

from .inputs import is_session_id
from .keys import derived_key
from .sessions import CheckoutSession

__all__ = ["order_view_token", "session_id_of", "OrderView", "ReceiptLink", "receipt_token",
           "receipt_link_of", "receipt_open"]

ALGORITHMS = ["dir", "A256GCM"]
HEADER = {"alg": "dir", "enc": "A256GCM"}
ORDER_VIEW = b"checkout order view token v1"
RECEIPT = b"checkout receipt token v1"
MAX_TOKEN_LENGTH = 512          # ours are about 140 to 220 characters
DAY = 86400


def _key(app: Flask, purpose: bytes) -> OctKey:
    # A key of its own for each purpose: a launch token's signing key never encrypts, and an
    # order view token is never a receipt token, nor the other way round.
    return OctKey.import_key(derived_key(app.config["CHECKOUT_LAUNCH_SECRET"], purpose))


def _seal(app: Flask, purpose: bytes, claims: dict[str, Any], now: float | None) -> str:
    days = float(app.config["CHECKOUT_RECEIPT_DAYS"])
    expires = int((time.time() if now is None else now) + days * DAY)
    return jwt.encode(HEADER, {**claims, "exp": expires}, _key(app, purpose),
                      algorithms=ALGORITHMS, registry=jwe.JWERegistry(algorithms=ALGORITHMS))


def _claims(app: Flask, purpose: bytes, token: str) -> dict[str, Any] | None:
    """The claims of a token we made for ``purpose``, expired or not, else None."""
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_LENGTH:
        return None
    try:
        claims: dict[str, Any] = jwt.decode(
            token, _key(app, purpose), algorithms=ALGORITHMS,
            registry=jwe.JWERegistry(algorithms=ALGORITHMS)).claims
    except (JoseError, ValueError, TypeError):
        return None
    return claims


def _open(app: Flask, purpose: bytes, token: str) -> dict[str, Any] | None:
    """The claims of a token we made for ``purpose`` and that has not expired, else None."""
    claims = _claims(app, purpose, token)
    if claims is None:
        return None
    expires = claims.get("exp")
    if isinstance(expires, bool) or not isinstance(expires, int) or expires <= time.time():
        return None
    return claims


def order_view_token(session_id: str, app: Flask | None = None, *,
                     now: float | None = None) -> str:
    """A token that opens the order view of ``session_id``'s order, and nothing else, until
    ``CHECKOUT_RECEIPT_DAYS`` from ``now``."""
    return _seal(app or current_app, ORDER_VIEW, {"sid": session_id}, now)


def _legacy_session_id(app: Flask, token: str) -> str | None:
    """The session id of an order view token made before tokens expired (the id, bare)."""
    try:
        plain = jwe.decrypt_compact(token, _key(app, ORDER_VIEW), algorithms=ALGORITHMS).plaintext
        return (plain or b"").decode("ascii")
    except (JoseError, ValueError, TypeError, UnicodeDecodeError):
        return None


def session_id_of(token: str, app: Flask | None = None) -> str | None:
    """The session id inside an order view token, or None for anything not made by us or
    expired."""
    app = app or current_app
    claims = _open(app, ORDER_VIEW, token)
    if claims is not None:
        session_id = claims.get("sid")
    elif isinstance(token, str) and 0 < len(token) <= MAX_TOKEN_LENGTH:
        # An expired token decrypts here too, but to its claims as JSON, never a session id.
        session_id = _legacy_session_id(app, token)
    else:
        return None
    return session_id if isinstance(session_id, str) and is_session_id(session_id) else None


@dataclass(frozen=True)
class ReceiptLink:
    """What a receipt token names: one order of one flow, shown first in ``locale``;
    ``made_until``: when the token itself expires (its ``exp``: for an order the checkout has no
    record of)."""

    order_id: str
    flow: str
    locale: str | None
    made_until: int


def receipt_token(order_id: str, flow: str, locale: str | None = None,
                  app: Flask | None = None, *, now: float | None = None) -> str:
    """A token that opens the receipt of ``order_id`` (of ``flow``) for as long as
    :func:`receipt_open` says (``now``: when it is made)."""
    claims: dict[str, Any] = {"oid": order_id, "flow": flow}
    if locale:
        claims["loc"] = locale
    return _seal(app or current_app, RECEIPT, claims, now)


def receipt_link_of(token: str, app: Flask | None = None) -> ReceiptLink | None:
    """The order a receipt token names, expired or not (:func:`receipt_open` decides: the page
    saying that the link has expired speaks the link's language, not the browser's), or None for
    anything not made by us (altered: nothing of it can be read)."""
    claims = _claims(app or current_app, RECEIPT, token)
    if claims is None:
        return None
    order_id, flow, locale = claims.get("oid"), claims.get("flow"), claims.get("loc")
    expires = claims.get("exp")
    if not isinstance(order_id, str) or not order_id or not isinstance(flow, str) \
            or isinstance(expires, bool) or not isinstance(expires, int):
        return None
    return ReceiptLink(order_id, flow, locale if isinstance(locale, str) else None, expires)


def receipt_open(link: ReceiptLink, last_change: datetime | None, app: Flask | None = None, *,
                 now: float | None = None) -> bool:
    """Whether ``link``'s receipt still opens: until ``CHECKOUT_RECEIPT_DAYS`` after
    ``last_change``, its order's last change as stored (for a final order, when it was done),
    whenever the link was made; for an order the checkout has no record of (``None``), until the
    token's own expiry."""
    moment = time.time() if now is None else now
    if last_change is None:
        return link.made_until > moment
    days = float((app or current_app).config["CHECKOUT_RECEIPT_DAYS"])
    return last_change.timestamp() + days * DAY > moment


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
