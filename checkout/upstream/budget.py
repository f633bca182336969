"""How long the upstream may keep a page waiting: per kind of call, and per page.

- **Per kind of call**, its own ``(connect, read)`` timeouts (:data:`DEFAULT_TIMEOUTS`): reference
  data and prices are quick to answer or not worth waiting for; an order's creation does real
  work upstream and gets longer, since giving up on it early leaves its outcome unknown.
- **Per page**, one budget for every call it makes, retries and their pauses included
  (``CHECKOUT_REQUEST_BUDGET``): a call is given at most what is left, and none is sent once too
  little is left to be worth it. With the shipped gunicorn settings (``checkout.gunicorn_config``)
  no checkout request can outlive the worker's timeout, whatever the upstream does.

The page's budget lives in a context variable that the checkout's blueprint sets for each of its
requests (:func:`begin`, :func:`end`) and that :mod:`.transport` reads: calls made outside a
request (the webhook dispatcher, the CLI) have the per-kind timeouts only.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from contextvars import ContextVar, Token

REFERENCE, PRICE, READ, WRITE = "reference", "price", "read", "write"
KINDS = (REFERENCE, PRICE, READ, WRITE)

Timeout = tuple[float, float]
DEFAULT_TIMEOUTS: Mapping[str, Timeout] = {
    REFERENCE: (2.0, 5.0),      # countries, channels, assets, limits, carriers
    PRICE: (2.0, 8.0),          # best offers, prices
    READ: (2.0, 8.0),           # orders, order lists, a user's KYC standing
    WRITE: (3.05, 12.0),        # create, confirm, codes, KYC documents, field checks
}

# Below this many seconds left, a call is not sent: its answer could not arrive in time.
MIN_USEFUL = 0.5

_deadline: ContextVar[float | None] = ContextVar("checkout_upstream_deadline", default=None)


def kind_of(method: str, path: str) -> str:
    """The kind of an upstream call, from its method and path (``path`` without its query)."""
    if method != "GET":
        return WRITE
    if path.endswith(("/best-offer", "/price")):
        return PRICE
    if "/order" in path or path.startswith(("/api/kyc/", "/api/user/")):
        return READ
    return REFERENCE


def timeouts(overrides: Mapping[str, Timeout] | None = None,
             cap: Timeout | None = None) -> dict[str, Timeout]:
    """Each kind's ``(connect, read)``: the defaults, then ``overrides``, each at most ``cap``."""
    out = {}
    for kind in KINDS:
        connect, read = (overrides or {}).get(kind, DEFAULT_TIMEOUTS[kind])
        if cap is not None:
            connect, read = min(connect, cap[0]), min(read, cap[1])
        out[kind] = (float(connect), float(read))
    return out


def begin(seconds: float, clock: float | None = None) -> Token[float | None]:
    """Start a page's budget of ``seconds`` for the calls of this context."""
    now = time.monotonic() if clock is None else clock
    return _deadline.set(now + seconds)


def end(token: Token[float | None]) -> None:
    _deadline.reset(token)


def deadline() -> float | None:
    """When this context's budget runs out (monotonic clock), or None without one."""
    return _deadline.get()


def adopt(moment: float | None) -> Token[float | None]:
    """Take another context's deadline (a call made on its behalf by a pool thread)."""
    return _deadline.set(moment)


def remaining(now: float | None = None) -> float | None:
    """Seconds left in this context's budget (never below 0), or None without one."""
    moment = _deadline.get()
    if moment is None:
        return None
    return max(0.0, moment - (time.monotonic() if now is None else now))
