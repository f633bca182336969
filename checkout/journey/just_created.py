"""The order as its create answered, for the page the user is sent to next.

Creating an order answers with the whole order (spec 2.4 and 2.7): its transfer instructions or
its deposit address. The page shown right after (pay, deposit) would otherwise read the order
again at once: one more upstream round trip before the user sees how to pay, for an answer the
process had a moment ago. So the create's answer is kept here for that page to take.

It is taken once, by that page's plain GET (not after an action, which shows a notice), and only
within :data:`FRESH_FOR` seconds: it is the order as of its creation, and it holds the user's
personal data. It lives in this process's memory only (in the app's state, like the other
caches), never written anywhere, and one no page took is forgotten by the webhook dispatcher's
next sweep (:meth:`JustCreated.forget_stale`, every few seconds). A page served by another
worker, or later, reads the order from the upstream as before.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from ..process_local import ProcessLocal
from ..reference import TTLCache

__all__ = ["JustCreated", "FRESH_FOR"]

FRESH_FOR = 10.0    # seconds: the redirect after a create is followed at once, or not at all
MOST_KEPT = 256     # orders created in the last FRESH_FOR seconds by one process; past it, the
                    # oldest go (their pages then read the order as before)


class JustCreated:
    """The create answers of one app in this process, by flow and order id."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        # A forked child does not hand out its parent's answers (nor wait on a lock held at the
        # fork): it starts with none.
        self._kept: ProcessLocal[TTLCache] = ProcessLocal(
            lambda: TTLCache(FRESH_FOR, clock, max_entries=MOST_KEPT, stale_factor=0))

    def keep(self, flow: str, order: Any) -> None:
        """Keep ``order`` (``order.id``), just answered by the ``flow``'s create, for
        :meth:`take`."""
        kept = self._kept.value
        kept.drop_expired()         # a few entries at most: none lingers past its time
        kept.put((flow, order.id), order)

    def take(self, flow: str, order_id: str) -> Any | None:
        """The order kept for ``order_id`` if it is still fresh, once; else None."""
        kept = self._kept.value
        found = kept.pop((flow, order_id))
        kept.drop_expired()
        return found

    def forget_stale(self) -> None:
        """Forget the answers no page took in time (their personal data with them)."""
        self._kept.value.drop_expired()

    def kept(self) -> list[tuple[str, str]]:
        """(flow, order id) of the answers kept now, oldest first."""
        return [cast(tuple[str, str], key) for key in self._kept.value.keys()]
