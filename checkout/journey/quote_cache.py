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
never share an entry. Bounded (least recently used entries go first) and thread-safe; callers that
ask for the same key while it is being fetched wait for that one call rather than make their own.
Failures are not kept: the next ask tries again (an upstream 429 is held back by the client's own
wait list, see ``checkout.upstream.transport``).
"""
from __future__ import annotations

import copy
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

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
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[Key, tuple[float, Record]] = OrderedDict()
        self._fetching: dict[Key, threading.Lock] = {}
        self._lock = threading.Lock()

    def key(self, flow: str, params: Mapping[str, Any]) -> Key:
        return (self.merchant, flow, tuple(sorted((k, str(v)) for k, v in params.items()
                                                  if v is not None)))

    def get(self, flow: str, params: Mapping[str, Any], fetch: Callable[[], Record]) -> Record:
        """The record for ``params``: kept if asked within the last few seconds, else
        ``fetch()``'s (kept for the next asks). A copy: callers may change it freely."""
        if self.seconds <= 0:
            return fetch()
        key = self.key(flow, params)
        with self._lock:
            kept = self._fresh(key)
            if kept is not None:
                return copy.deepcopy(kept)
            gate = self._fetching.setdefault(key, threading.Lock())
        with gate:
            # Whoever held the gate before us may have fetched it meanwhile.
            with self._lock:
                kept = self._fresh(key)
            if kept is not None:
                return copy.deepcopy(kept)
            try:
                record = fetch()
                with self._lock:
                    self._entries[key] = (self.clock() + self.seconds, record)
                    self._entries.move_to_end(key)
                    while len(self._entries) > self.max_entries:
                        self._entries.popitem(last=False)
            finally:
                with self._lock:
                    if self._fetching.get(key) is gate:
                        del self._fetching[key]
            return copy.deepcopy(record)

    def _fresh(self, key: Key) -> Record | None:
        """The kept record while it is young enough (call with the lock held)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, record = entry
        if expires <= self.clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return record

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
