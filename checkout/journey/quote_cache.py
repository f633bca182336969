"""A few seconds' memory of shown prices: identical live-price asks share one upstream call.

The amount field asks for a price as the user types, and a page may ask again for the same draft
(a select changed, the page came back, several shoppers price the same corridor and amount). Each
ask would be a best-offer call made with the merchant's key; within ``CHECKOUT_QUOTE_CACHE_SECONDS``
the same parameters are answered from here instead.

Only prices that are *shown* come from here, never a quote an order is created from: that one is
asked for the session alone when the step is saved (``Flow.request_quote``), so no two sessions
ever share a ``quoteId``.

Keyed by merchant (the upstream's address and client id, as a digest), flow and the normalised
parameters (``quotes.normalise``: "5000" and "5000.00" are one ask): two merchants or two amounts
never share an entry. Kept in the project's one small cache (``checkout.reference.TTLCache``),
bounded (least recently used entries go first) and thread-safe; callers that ask for the same
key while it is being fetched wait for that one call rather than make their own. Failures are not
kept, and no stale price is ever served: the next ask tries again (an upstream 429 is held back
by the client's own wait list, see ``checkout.upstream.transport``).
"""
from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from ..reference import TTLCache

__all__ = ["QuoteCache", "merchant_key"]

MAX_ENTRIES = 512       # drafts priced in the last few seconds: far more than any checkout sees

Record = dict[str, Any]
Key = tuple[Hashable, ...]


def merchant_key(base_url: str, client_id: str) -> str:
    """Who the prices are for, as a short digest: the client id itself is never a key."""
    return hashlib.sha256(f"{base_url}\n{client_id}".encode()).hexdigest()[:16]


class QuoteCache:
    def __init__(self, seconds: float, merchant: str, *, max_entries: int = MAX_ENTRIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = float(seconds)
        self.merchant = merchant
        self._cache = TTLCache(self.seconds, clock, max_entries=max_entries, stale_factor=0)
        self._entries = self._cache._entries        # what is kept (the tests count it)

    def key(self, flow: str, params: Mapping[str, Any]) -> Key:
        return (self.merchant, flow, tuple(sorted((k, str(v)) for k, v in params.items()
                                                  if v is not None)))

    def get(self, flow: str, params: Mapping[str, Any], fetch: Callable[[], Record]) -> Record:
        """The record for ``params``: kept if asked within the last few seconds, else
        ``fetch()``'s (kept for the next asks). A copy: callers may change it freely."""
        if self.seconds <= 0:
            return fetch()
        return copy.deepcopy(self._cache.get(self.key(flow, params), fetch))

    def clear(self) -> None:
        self._cache.clear()
