"""Reference data of both flows (countries, channels, carriers, assets, limits), cached per app.

Reference data changes rarely, and a user on a slow phone connection should never wait on it: each
page then waits on at most the one upstream call it really needs (a quote, a create, an action).
Entries live ``CHECKOUT_REFERENCE_TTL`` seconds. When a refresh fails and an older copy exists, the
older copy is served (for up to ten times the TTL) rather than breaking the page: the quote and the
order creation that follow are checked by the upstream against its current data anyway. So is it
to a page that would otherwise wait behind another's refresh while the upstream is failing. A page
that was given such a copy says so (:meth:`Catalog.out_of_date`). That is logged once when it
starts and once when a refresh succeeds again, not once per page served.

The cache belongs to the app's :class:`~checkout.state.CheckoutState`, so two apps in one process
never share entries and nothing outlives its app.
"""
from __future__ import annotations

import copy
import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .errors import UpstreamError
from .upstream.breaker import Breaker, breakers_used
from .upstream.types import AssetPair, Limits, OfframpTypeCountry, OnrampCountry, UtilCountry

if TYPE_CHECKING:
    from .upstream.client import UpstreamClient

log = logging.getLogger("checkout.reference")

T = TypeVar("T")
STALE_FACTOR = 10


@contextmanager
def _held(lock: threading.Lock) -> Iterator[None]:
    """``lock``, acquired already, released on leaving."""
    try:
        yield
    finally:
        lock.release()


@dataclass
class _Entry:
    value: Any
    fetched_at: float


class TTLCache:
    """A small thread-safe cache; one loader runs per key at a time (no stampede on expiry).

    ``max_entries`` bounds it (the least recently used go first): for keys without end, such as
    the live prices of every amount typed (checkout.journey.quote_cache). ``stale_factor``: how
    many TTLs an entry may still be served for when its reload fails upstream (reference data);
    0 never serves one (a price must not outlive its few seconds).

    A load that fails upstream fails for the callers who were waiting for it too: they do not
    each try again in turn. Otherwise, with an upstream that hangs, twenty pages asking for one
    key would wait for twenty timeouts one after the other. A caller that comes after the
    failure tries again itself. Nor does a caller wait for a load whose upstream call goes
    through a breaker that is not closed (that call is its one trial, which may hang): it gets
    the breaker's refusal at once.
    """

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic, *,
                 max_entries: int | None = None, stale_factor: float = STALE_FACTOR) -> None:
        self.ttl = float(ttl)
        self.clock = clock
        self.max_entries = max_entries
        self.stale_factor = stale_factor
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        # The last failed load of a key: (its turn, the error), for the callers waiting then.
        self._turns = itertools.count()
        self._failures: dict[Hashable, tuple[int, UpstreamError]] = {}
        # The breakers of the loads under way, by key, as their calls go through them.
        self._loading: dict[Hashable, list[Breaker]] = {}
        # Keys served from an older copy since their last successful load: said once.
        self._stale: set[Hashable] = set()

    def _key_lock(self, key: Hashable) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def _fresh(self, key: Hashable) -> _Entry | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and self.clock() - entry.fetched_at < self.ttl:
                self._entries.move_to_end(key)
                return entry
        return None

    def _servable(self, key: Hashable) -> _Entry | None:
        """The entry of ``key`` past its TTL that may still be served while its reload fails."""
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or self.clock() - entry.fetched_at >= self.ttl * self.stale_factor:
            return None
        return entry

    def has(self, key: Hashable) -> bool:
        """Whether ``get(key, ...)`` would answer now, without calling its loader."""
        return self._fresh(key) is not None

    def expired(self, key: Hashable) -> bool:
        """Whether ``key`` holds a copy past its TTL: one ``get`` serves only when its reload
        failed (a ``get`` that reloaded it leaves it fresh)."""
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and self.clock() - entry.fetched_at >= self.ttl

    def get(self, key: Hashable, load: Callable[[], T]) -> T:
        entry = self._fresh(key)
        if entry is not None:
            return cast(T, entry.value)     # a key holds what its loader returns
        gate = self._key_lock(key)
        with self._lock:
            arrived = next(self._turns)
        if not gate.acquire(blocking=False):
            refusal = self._refusal_of_load(key)
            if refusal is not None:
                # Not waited for, as its reload would most likely fail: the last copy, if any.
                stale = self._servable(key)
                if stale is not None:
                    self._serving_stale(key)
                    return cast(T, stale.value)
                raise refusal
            gate.acquire()
        with _held(gate):
            entry = self._fresh(key)          # another thread may have loaded it meanwhile
            if entry is not None:
                return cast(T, entry.value)
            with self._lock:
                failed = self._failures.get(key)
            if failed is not None and failed[0] > arrived:
                # It failed while this caller waited for it: the same answer, not another wait.
                raise copy.copy(failed[1])
            try:
                with breakers_used() as used:
                    with self._lock:
                        self._loading[key] = used
                    value = load()
            except UpstreamError as exc:
                stale = self._servable(key)
                if stale is not None:
                    self._serving_stale(key)
                    return cast(T, stale.value)       # the waiters will try, and find it too
                if not getattr(exc, "never_sent", False):
                    # What the upstream did, not this caller's own lack of time or place: its
                    # waiters would meet the same.
                    with self._lock:
                        self._failures[key] = (next(self._turns), exc)
                raise
            finally:
                with self._lock:
                    # Loaded or failed, the gate's work is done: keys never pile up here.
                    self._loading.pop(key, None)
                    if self._key_locks.get(key) is gate:
                        del self._key_locks[key]
            with self._lock:
                self._store(key, value)
                self._failures.pop(key, None)
                refreshed = key in self._stale
                self._stale.discard(key)
            if refreshed:
                log.info("reference data refreshed again: %s", _named(key))
            return value

    def _refusal_of_load(self, key: Hashable) -> UpstreamError | None:
        """Why a caller should not wait for the load of ``key`` under way: a breaker its calls
        went through is not closed (None: wait)."""
        with self._lock:
            used = list(self._loading.get(key, ()))
        return next((refusal for refusal in (b.refusal() for b in used) if refusal), None)

    def _serving_stale(self, key: Hashable) -> None:
        """Said once per outage of ``key``: every page served meanwhile would say it again."""
        with self._lock:
            first = key not in self._stale
            self._stale.add(key)
        if first:
            log.warning("reference data refresh failed; serving the cached copy until the "
                        "upstream answers again: %s", _named(key))

    def put(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` for ``key`` from now (for an answer obtained otherwise than by a loader)."""
        with self._lock:
            self._store(key, value)

    def pop(self, key: Hashable) -> Any | None:
        """Take ``key``'s value out if it is fresh; None if absent or expired (dropped either way)."""
        with self._lock:
            entry = self._entries.pop(key, None)
        if entry is None or self.clock() - entry.fetched_at >= self.ttl:
            return None
        return entry.value

    def drop_expired(self) -> None:
        """Forget every entry past its TTL now rather than when next asked for: for a cache whose
        entries should not be held longer than they are useful (not one that serves stale
        entries when a reload fails)."""
        with self._lock:
            now = self.clock()
            for key in [k for k, e in self._entries.items() if now - e.fetched_at >= self.ttl]:
                del self._entries[key]

    def keys(self) -> list[Hashable]:
        """The keys held now (fresh or not), least recently used first."""
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _store(self, key: Hashable, value: Any) -> None:
        # Under self._lock.
        self._entries[key] = _Entry(value, self.clock())
        self._entries.move_to_end(key)
        while self.max_entries is not None and len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


def _named(key: Hashable) -> object:
    # A key's first part names its data ("limits"); the rest may name a corridor.
    return key[0] if isinstance(key, tuple) else key


@dataclass(frozen=True)
class CarrierChoice:
    """A mobile network the user picks (``code`` is what the flow's upstream calls it by)."""

    code: str
    name: str


@dataclass(frozen=True)
class ChannelChoice:
    """A way to pay (on-ramp) or to be paid (off-ramp) in one country, as the pages offer it."""

    code: str                              # paymentChannel (on-ramp) or type (off-ramp)
    description: str | None                # the upstream's words for it, when it gives some
    requires_carrier: bool
    carriers: tuple[CarrierChoice, ...]

    def carrier(self, code: str | None) -> CarrierChoice | None:
        return next((c for c in self.carriers if code and c.code == code), None)


@dataclass(frozen=True)
class CountryChoice:
    code: str
    currency: str
    name: str
    channels: tuple[ChannelChoice, ...]

    def channel(self, code: str | None) -> ChannelChoice | None:
        return next((c for c in self.channels if code and c.code == code), None)


class Catalog:
    """What a flow offers, read through the cache from the upstream client: countries with their
    channels and carriers (one call), network and asset pairs (one call), limits (one call per
    corridor). Subclasses say which endpoints: the cache keys and loaders below."""

    countries_key: tuple[str, ...]
    pairs_key: tuple[str, ...]

    def __init__(self, client: UpstreamClient, cache: TTLCache) -> None:
        self.client = client
        self.cache = cache

    def _load_countries(self) -> list[CountryChoice]:
        raise NotImplementedError

    def _load_pairs(self) -> list[AssetPair]:
        raise NotImplementedError

    def _limits_key(self, network: str, asset: str, country: str, channel: str,
                    carrier: str | None) -> tuple[str, ...]:
        raise NotImplementedError

    def _load_limits(self, network: str, asset: str, country: str, channel: str,
                     carrier: str | None) -> Limits:
        raise NotImplementedError

    def _countries(self) -> list[CountryChoice]:
        return self.cache.get(self.countries_key, self._load_countries)

    def _pairs(self) -> list[AssetPair]:
        return self.cache.get(self.pairs_key, self._load_pairs)

    def preload(self) -> None:
        """Countries and pairs, both of which every amount page needs, asked at the same time
        when neither is cached (one round trip to the upstream, not two in a row)."""
        if self.cache.has(self.countries_key) or self.cache.has(self.pairs_key):
            return                  # one at most is missing: it is asked when first needed
        from .meanwhile import meanwhile

        with meanwhile(self._countries):
            self._pairs()

    def countries(self) -> list[CountryChoice]:
        return sorted(self._countries(), key=lambda c: c.name)

    def country(self, code: str | None) -> CountryChoice | None:
        if not code:
            return None
        return next((c for c in self._countries() if c.code == code), None)

    def channel(self, country: str | None, channel: str | None) -> ChannelChoice | None:
        entry = self.country(country)
        return entry.channel(channel) if entry is not None else None

    def carrier(self, country: str | None, channel: str | None,
                code: str | None) -> CarrierChoice | None:
        entry = self.channel(country, channel)
        return entry.carrier(code) if entry is not None else None

    def pairs(self) -> list[AssetPair]:
        return self._pairs()

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

    def limits(self, *, network: str, asset: str, country: str, channel: str,
               carrier: str | None = None) -> Limits:
        """The corridor's limits; ``.available`` is False when the upstream cannot price it."""
        key = self._limits_key(network, asset, country, channel, carrier)
        return self.cache.get(key, lambda: self._load_limits(network, asset, country, channel,
                                                             carrier))

    def knows_limits(self, *, network: str, asset: str, country: str, channel: str,
                     carrier: str | None = None) -> bool:
        """Whether :meth:`limits` would answer without asking the upstream."""
        return self.cache.has(self._limits_key(network, asset, country, channel, carrier))

    def out_of_date(self, corridor: dict[str, Any] | None = None) -> bool:
        """Whether the countries, the pairs (or ``corridor``'s limits: :meth:`limits`'
        arguments) just given are a copy kept past its time, their refresh having failed: a page
        showing them says so."""
        keys = [self.countries_key, self.pairs_key]
        if corridor is not None:
            keys.append(self._limits_key(corridor["network"], corridor["asset"],
                                         corridor["country"], corridor["channel"],
                                         corridor.get("carrier")))
        return any(self.cache.expired(key) for key in keys)


class OnrampCatalog(Catalog):
    """The on-ramp's reference data: /api/onramp/payment-channels, /assets, /limits."""

    countries_key = ("onramp-countries",)
    pairs_key = ("assets",)

    def _load_countries(self) -> list[CountryChoice]:
        return [_onramp_country(c) for c in self.client.onramp_payment_channels()]

    def _load_pairs(self) -> list[AssetPair]:
        return self.client.onramp_assets()

    def _limits_key(self, network: str, asset: str, country: str, channel: str,
                    carrier: str | None) -> tuple[str, ...]:
        return ("limits", network, asset, country, channel, carrier or "")

    def _load_limits(self, network: str, asset: str, country: str, channel: str,
                     carrier: str | None) -> Limits:
        return self.client.onramp_limits(network=network, asset=asset, country_iso_code=country,
                                         payment_channel=channel, carrier_code=carrier or None)


def _onramp_country(country: OnrampCountry) -> CountryChoice:
    channels = tuple(
        ChannelChoice(code=ch.payment_channel, description=ch.description,
                      requires_carrier=ch.requires_carrier,
                      carriers=tuple(CarrierChoice(c.code, c.name) for c in ch.carriers
                                     if c.code))
        for ch in country.payment_channels)
    return CountryChoice(country.country_iso_code, country.currency_iso_code,
                         country.name or country.country_iso_code, channels)


class OfframpCatalog(Catalog):
    """The off-ramp's reference data, type-based variant (spec 4.4, notes 5): /api/offramp/
    countries, /wallets, /limits?type=&country= (limits depend on the type and country only)."""

    countries_key = ("offramp-countries",)
    pairs_key = ("offramp-wallets",)

    def _load_countries(self) -> list[CountryChoice]:
        return [_offramp_country(c) for c in self.client.offramp_countries()]

    def _load_pairs(self) -> list[AssetPair]:
        return self.client.offramp_wallets()

    def _limits_key(self, network: str, asset: str, country: str, channel: str,
                    carrier: str | None) -> tuple[str, ...]:
        return ("offramp-limits", country, channel)

    def _load_limits(self, network: str, asset: str, country: str, channel: str,
                     carrier: str | None) -> Limits:
        return self.client.offramp_typed_limits(type=channel, country=country)


def _offramp_country(country: OfframpTypeCountry) -> CountryChoice:
    # The type-based list names carriers by id only. A payout to airtime, or to a wallet of one
    # of several networks, must say which network: the user picks one (its id is what the
    # offer's ``carrierId`` field takes).
    channels = []
    for entry in country.offramp_types:
        carriers = tuple(CarrierChoice(c.id, c.name) for c in entry.carriers if c.id)
        channels.append(ChannelChoice(
            code=entry.type, description=entry.name,
            requires_carrier=bool(carriers) and (entry.type == "airtime" or len(carriers) > 1),
            carriers=carriers))
    return CountryChoice(country.country_iso_code, country.currency_iso_code,
                         country.name or country.country_iso_code, tuple(channels))


class UtilCatalog:
    """The utility reference data both flows' KYC reads: ``/api/util/countries`` (each country's
    identity documents and the KYC its orders need by USD amount), one call per TTL."""

    def __init__(self, client: UpstreamClient, cache: TTLCache) -> None:
        self.client = client
        self.cache = cache

    def country(self, code: str | None) -> UtilCountry | None:
        if not code:
            return None
        countries = self.cache.get(("util-countries",), self.client.util_countries)
        return next((c for c in countries if c.country_iso_code == code), None)

