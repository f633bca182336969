"""The order as its create answered, for the page the user is sent to next.

Creating an order answers with the whole order (spec 2.4 and 2.7): its transfer instructions or
its deposit address. The page shown right after (pay, deposit) would otherwise read the order
again at once: one more upstream round trip before the user sees how to pay, for an answer the
process had a moment ago. So the create's answer is kept here for that page to take.

It is taken once, by that page's plain GET (not after an action, which shows a notice), and only
within :data:`FRESH_FOR` seconds: it is the order as of its creation, and it holds the user's
personal data. It lives in this process's memory only, never written anywhere, and one no page
took is forgotten by the next :func:`forget_stale` (the webhook dispatcher's sweep, every few
seconds), create or take. A page served by another worker, or later, reads the order from the
upstream as before.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from ..process_local import ProcessLocal

__all__ = ["keep", "take", "forget_stale", "FRESH_FOR"]

FRESH_FOR = 10.0    # seconds: the redirect after a create is followed at once, or not at all
MOST_KEPT = 256     # orders created in the last FRESH_FOR seconds by one process; past it, the
                    # oldest go (their pages then read the order as before)

# A child process must not hand out its parent's orders (nor wait on a lock held at the fork).
_kept: ProcessLocal[OrderedDict[tuple[str, str], tuple[float, Any]]] = ProcessLocal(OrderedDict)


_now = time.monotonic       # the module's clock (tests move it)


def keep(flow: str, order: Any) -> None:
    """Keep ``order`` (``order.id``), just answered by the ``flow``'s create, for :func:`take`."""
    now = _now()
    with _kept.lock:
        kept = _kept.value
        _drop_stale(kept, now)
        kept[(flow, order.id)] = (now + FRESH_FOR, order)
        while len(kept) > MOST_KEPT:
            kept.popitem(last=False)


def take(flow: str, order_id: str) -> Any | None:
    """The order kept for ``order_id`` if it is still fresh, once; else None."""
    now = _now()
    with _kept.lock:
        found = _kept.value.pop((flow, order_id), None)
        _drop_stale(_kept.value, now)
    if found is None or now >= found[0]:
        return None
    return found[1]


def forget_stale() -> None:
    """Forget the answers no page took in time (their personal data with them)."""
    now = _now()
    with _kept.lock:
        _drop_stale(_kept.value, now)


def _drop_stale(kept: OrderedDict[tuple[str, str], tuple[float, Any]], now: float) -> None:
    # Kept in the order they were created, all for the same time: the stale ones are first.
    while kept:
        key, (until, _order) = next(iter(kept.items()))
        if until > now:
            return
        del kept[key]
