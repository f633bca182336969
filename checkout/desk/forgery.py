"""The anti-forgery token of the desk's forms.

The desk is no checkout session (whose pages carry the session's token) and it must not depend on
how the host keeps its logins: a host may have no ``SECRET_KEY`` (no Flask session to keep a token
in), or keep its logins elsewhere. So the token is made from what every desk request has: the
staff member the host names, and a key derived from ``CHECKOUT_LAUNCH_SECRET`` for this purpose
alone. ``<issued>.<HMAC(key, name, issued)>``: it holds for :data:`MAX_AGE` seconds, and only for
the staff member it was made for. A site that makes another staff member's browser post a form
cannot know it (the pages that carry it are never framed, never cached, and go to that staff
member only), and a token seen in one staff member's page is refused in another's.
"""
from __future__ import annotations

import hashlib
import hmac

__all__ = ["MAX_AGE", "FIELD", "token_for", "is_valid"]

FIELD = "csrf_token"
PURPOSE = b"checkout desk: anti-forgery v1"
MAX_AGE = 12 * 3600         # a working day; a page left open overnight is reloaded


def _mac(launch_secret: str, staff_name: str, issued: int) -> str:
    key = hmac.new(launch_secret.encode(), PURPOSE, hashlib.sha256).digest()
    message = f"{staff_name}\x1f{issued}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def token_for(launch_secret: str, staff_name: str, now: float) -> str:
    issued = int(now)
    return f"{issued}.{_mac(launch_secret, staff_name, issued)}"


def is_valid(launch_secret: str, staff_name: str, token: str | None, now: float) -> bool:
    """Whether ``token`` was made for ``staff_name``, less than :data:`MAX_AGE` seconds ago."""
    issued_text, _, mac = (token or "").partition(".")
    if not issued_text.isdigit() or len(issued_text) > 12:
        return False
    issued = int(issued_text)
    if not 0 <= now - issued < MAX_AGE:
        return False
    return hmac.compare_digest(mac.encode(), _mac(launch_secret, staff_name, issued).encode())
