"""Reference data of the on-ramp (countries, channels, carriers, assets, limits), cached per app.

Reference data changes rarely, and a user on a slow phone connection should never wait on it: each
page then waits on at most the one upstream call it really needs (a quote, a create, an action).
Entries live ``CHECKOUT_REFERENCE_TTL`` seconds. When a refresh fails and an older copy exists, the
older copy is served (for up to ten times the TTL) rather than breaking the page: the quote and the
order creation that follow are checked by the upstream against its current data anyway.

The cache belongs to the app's :class:`~checkout.state.CheckoutState`, so two apps in one process
never share entries and nothing outlives its app.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import UpstreamError
from .upstream.types import AssetPair, Carrier, Limits, OnrampChannel, OnrampCountry

log = logging.getLogger("checkout.reference")

T = TypeVar("T")
STALE_FACTOR = 10


@dataclass
class _Entry:
    value: Any
    fetched_at: float


class TTLCache:
    """A small thread-safe cache; one loader runs per key at a time (no stampede on expiry)."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = float(ttl)
        self.clock = clock
        self._entries: dict[Hashable, _Entry] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}

    def _key_lock(self, key: Hashable) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def _fresh(self, key: Hashable) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and self.clock() - entry.fetched_at < self.ttl:
            return entry
        return None

    def get(self, key: Hashable, load: Callable[[], T]) -> T:
        entry = self._fresh(key)
        if entry is not None:
            return entry.value
        with self._key_lock(key):
            entry = self._fresh(key)          # another thread may have loaded it meanwhile
            if entry is not None:
                return entry.value
            try:
                value = load()
            except UpstreamError:
                stale = self._entries.get(key)
                if stale is not None and self.clock() - stale.fetched_at < self.ttl * STALE_FACTOR:
                    log.warning("reference data refresh failed; serving the cached copy: %s",
                                key[0] if isinstance(key, tuple) else key)
                    return stale.value
                raise
            self._entries[key] = _Entry(value, self.clock())
            return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class OnrampCatalog:
    """What the on-ramp offers, read through the cache from the upstream client."""

    def __init__(self, client: Any, cache: TTLCache) -> None:
        self.client = client
        self.cache = cache

    # -- countries, channels, carriers (one upstream call: /api/onramp/payment-channels)

    def countries(self) -> list[OnrampCountry]:
        countries = self.cache.get(("payment-channels",), self.client.onramp_payment_channels)
        return sorted(countries, key=lambda c: (c.name or c.country_iso_code))

    def country(self, code: str | None) -> OnrampCountry | None:
        if not code:
            return None
        return next((c for c in self.countries() if c.country_iso_code == code), None)

    def channel(self, country: str | None, channel: str | None) -> OnrampChannel | None:
        entry = self.country(country)
        if entry is None or not channel:
            return None
        return next((c for c in entry.payment_channels if c.payment_channel == channel), None)

    def carrier(self, country: str | None, channel: str | None,
                code: str | None) -> Carrier | None:
        entry = self.channel(country, channel)
        if entry is None or not code:
            return None
        return next((c for c in entry.carriers if c.code == code), None)

    # -- assets (one upstream call: /api/onramp/assets)

    def pairs(self) -> list[AssetPair]:
        return self.cache.get(("assets",), self.client.onramp_assets)

    def networks(self) -> list[str]:
        seen: dict[str, None] = {}
        for pair in self.pairs():
            seen.setdefault(pair.network, None)
        return sorted(seen)

    def assets(self, network: str | None = None) -> list[str]:
        seen: dict[str, None] = {}
        for pair in self.pairs():
            if network is None or pair.network == network:
                seen.setdefault(pair.asset, None)
        return sorted(seen)

    def supports(self, network: str | None, asset: str | None) -> bool:
        return any(p.network == network and p.asset == asset for p in self.pairs())

    # -- limits (one upstream call per corridor: /api/onramp/limits)

    def limits(self, *, network: str, asset: str, country: str, channel: str,
               carrier: str | None = None) -> Limits:
        """The corridor's limits; ``.available`` is False when the upstream cannot price it."""
        key = ("limits", network, asset, country, channel, carrier or "")
        return self.cache.get(key, lambda: self.client.onramp_limits(
            network=network, asset=asset, country_iso_code=country, payment_channel=channel,
            carrier_code=carrier or None))


def onramp_catalog() -> OnrampCatalog:
    """The current app's on-ramp catalog (made with the app's state, so it lives and dies with it)."""
    from .state import get_state

    return get_state().onramp_catalog
