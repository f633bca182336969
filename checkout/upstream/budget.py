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
request (the webhook dispatcher, the CLI) have the per-kind timeouts only. With it goes a check
that its request is still the current one: a budget whose request is over (its ending missed,
say, by a context kept alive) is no one's, and never cuts another call short.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
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

# (when it runs out on the monotonic clock, whether its request is still the current one)
Budget = tuple[float, Callable[[], bool]]
_deadline: ContextVar[Budget | None] = ContextVar("checkout_upstream_deadline", default=None)


def _always() -> bool:
    return True


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


def begin(seconds: float, current: Callable[[], bool] = _always,
          clock: float | None = None) -> Token[Budget | None]:
    """Start a page's budget of ``seconds`` for the calls of this context; ``current`` says
    whether the page (its request) is still the one being answered."""
    now = time.monotonic() if clock is None else clock
    return _deadline.set((now + seconds, current))


def end(token: Token[Budget | None]) -> None:
    _deadline.reset(token)


def deadline() -> Budget | None:
    """This context's budget, for a thread that works on its behalf (:func:`adopt`): None
    without one, or once its page is over."""
    budget = _deadline.get()
    if budget is None or not budget[1]():
        return None
    return budget[0], _always             # the thread's own caller waits for it


def adopt(budget: Budget | None) -> Token[Budget | None]:
    """Take another context's budget (a call made on its behalf by a pool thread)."""
    return _deadline.set(budget)


def remaining(now: float | None = None) -> float | None:
    """Seconds left in this context's budget (never below 0), or None without one, or whose
    page is no longer being answered."""
    budget = _deadline.get()
    if budget is None:
        return None
    moment, current = budget
    if not current():
        return None
    return max(0.0, moment - (time.monotonic() if now is None else now))
