"""Rate limits on the checkout's own routes (the ``limits`` library), per client address and per
session.

Why: every session opened is a row kept for days, and every price, order action and page of an
order is a call to the upstream made with the merchant's key. Unlimited, one client could fill the
database and spend the merchant's upstream quota, and every shopper of that merchant would pay for
it. The default limits are far above what a person does (``tests/ratelimits/test_real_users.py`` walks
whole orders and a half-hour wait under them), so only a client that hammers the checkout meets them.

Each request falls in at most one category, which its view declares beside its route
(:func:`limited`; :func:`category` reads it). Each category has a limit per client address and,
under ``/s/<session>/``, one per session (``<category>_per_ip``, ``<category>_per_session`` in
:data:`DEFAULT_LIMITS`, overridden by ``CHECKOUT_RATELIMITS``):

- ``open``: opening a session (``/launch``, ``/onramp``, ``/offramp``): per address only;
- ``page``: a session's pages (a reload, a step, the order's page: some of them ask the upstream);
- ``poll``: what a waiting page asks every few seconds (the order's status, an identity check);
- ``quote``: the live price under the amount field;
- ``form``: a step's form, the language menu, "I have paid";
- ``create``, ``otp``, ``push_retry``, ``tx_hash``, ``kyc``: creating the order, a one-time code,
  a new payment request to the phone, a transaction hash, identity documents;
- ``receipt``: an order's receipt (``/r/<token>``, no session): per address only.
- ``desk``, ``desk_action``, ``desk_export``: the merchant's desk's pages, its actions on an order,
  its CSV exports (per address only: staff are behind the host's login).

Beside the categories, ``photo_per_ip`` and ``photo_per_session`` count the KYC photos decoded
(:func:`photo_decodes`), one each, rather than requests: a form whose fields are wrong decodes none,
and one that is sent decodes up to three. Before the request the checkout looks whether one more
is allowed, and after it counts what the request decoded.

Not limited (each such view says why, with :func:`unlimited`): the webhook receiver, ``/healthz``,
static files, the embedded sandbox's own pages and addresses that match nothing.

Keys. The client address is ``request.remote_addr``: behind a proxy the host must apply werkzeug's
``ProxyFix`` (the address sent to the upstream with each order is read the same way), or every
shopper would share the proxy's address. An IPv6 address counts by its /64, the block one subscriber
is given. A session counts by an HMAC-SHA256 of its id (keyed by a key derived from
``CHECKOUT_LAUNCH_SECRET``): the id opens the order, and never appears in the limiter's store or in
its log lines.

The checkout counts with ``limits`` directly (key prefix ``checkout``), in two hooks of its own
blueprint (:meth:`RateLimits.protect`): no host route is ever counted, and a host's Flask-Limiter,
its registry in ``app.extensions`` and its ``RATELIMIT_*`` keys (which would add the host's default
limits to our routes and ours to the host's) are never read or touched.

Storage: ``memory://`` by default (counts per process); ``CHECKOUT_RATELIMIT_STORAGE_URI`` (e.g.
``redis://host:6379/0``) shares them between workers and hosts. When that store cannot be reached
the checkout fails open: each process counts in its own memory instead (the limits then hold per
process), logs one warning, and looks at the store again every 1 to 32 seconds. Nobody is refused
because the store is down: a checkout must let its users pay.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flask import Flask, Response, current_app, g, request
from limits import RateLimitItem, parse_many
from limits.errors import ConfigurationError as LimitsConfigurationError
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import MovingWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

from .errors import ConfigurationError
from .keys import derived_key

__all__ = ["DEFAULT_LIMITS", "RateLimitMark", "RateLimited", "RateLimits", "category",
           "client_address", "configured_limits", "limited", "mark_of", "photo_decodes",
           "unlimited"]

log = logging.getLogger("checkout.ratelimits")

KEY_PREFIX = "checkout"
# Counting is by moving window (MovingWindowRateLimiter): every request of the last window, not
# per calendar minute, since a fixed window would let a client send twice the limit across a
# minute's boundary.

# The defaults, and why each is out of a person's reach. A person's pace: one session per checkout,
# a page every few seconds, a status poll every 3 s (identity every 5 s), a price per pause in
# typing. Per address ten times that or more: a mobile carrier's NAT puts many shoppers behind one
# address.
DEFAULT_LIMITS: dict[str, str] = {
    # Each session is a row kept for days (the user's wallet and contact details).
    "open_per_ip": "60/minute;600/hour",
    # A page every second for a minute; a page waiting for an order asks every 2 s (30/minute).
    "page_per_session": "120/minute",
    "page_per_ip": "1200/minute",
    # The status every 3 s (20/minute), in several tabs at once, for as long as the user waits.
    "poll_per_session": "120/minute",
    "poll_per_ip": "3000/minute",
    # One price per pause in typing: a person manages a few dozen a minute at most. Identical asks
    # are answered from a short cache (checkout.journey.quote_cache), not by the upstream.
    "quote_per_session": "60/minute",
    "quote_per_ip": "600/minute",
    # A step's form, "Update price" without JavaScript, the language menu, "I have paid".
    "form_per_session": "60/minute",
    "form_per_ip": "600/minute",
    # "Confirm and pay": one order per session whatever is sent; a changed price asks once more.
    "create_per_session": "10/minute;60/hour",
    "create_per_ip": "60/minute",
    # A code from an SMS: the upstream expires the order after a few wrong ones anyway.
    "otp_per_session": "10/minute;30/hour",
    "otp_per_ip": "60/minute",
    # A new payment request to the phone: the upstream allows a few, some time apart.
    "push_retry_per_session": "6/minute;30/hour",
    "push_retry_per_ip": "60/minute",
    # The hash of the user's transfer (pasted, or sent by the shop's wallet).
    "tx_hash_per_session": "10/minute;60/hour",
    "tx_hash_per_ip": "60/minute",
    # Identity documents: each POST may carry three photos of 10 MB.
    "kyc_per_session": "10/minute;40/hour",
    "kyc_per_ip": "60/minute;600/hour",
    # An order's receipt: opened once or twice, printed, seen in another language. Its order is
    # read from the store (checkout.views.receipts), but a client reloading receipts by the
    # hundred still costs the database and, each max age, the upstream.
    "receipt_per_ip": "60/minute;600/hour",
    # The merchant's desk (checkout.desk), staff behind the host's login: a page a second and
    # more for a person; an action asks the upstream or runs the shop's code, an export reads
    # many orders.
    "desk_per_ip": "300/minute",
    "desk_action_per_ip": "30/minute;300/hour",
    "desk_export_per_ip": "10/minute;60/hour",
    # Not a category of requests: the photos those POSTs have decoded, one each (the costly part,
    # up to ~0.5 s of CPU and ~60 MB a photo). A person sends three, and again those refused.
    "photo_per_session": "15/minute;45/hour",
    "photo_per_ip": "30/minute;300/hour",
}

View = TypeVar("View", bound=Callable[..., Any])


@dataclass(frozen=True)
class RateLimitMark:
    """What a view says of its requests' limits (:func:`limited`, :func:`unlimited`): a category,
    or a function of the request that names one; or none, and why."""

    category: str | Callable[[], str] | None
    why_unlimited: str = ""


_MARK = "checkout_rate_limit"       # the attribute of a view function that holds its mark


def limited(category: str | Callable[[], str]) -> Callable[[View], View]:
    """The view's requests count in ``category`` (one of the module docstring's), or in the
    category the function given names for each request. Written where the view is, so that a
    route and its limit are declared together."""
    def mark(view: View) -> View:
        setattr(view, _MARK, RateLimitMark(category))
        return view
    return mark


def unlimited(why: str) -> Callable[[View], View]:
    """The view is never limited, for the reason given (which the view keeps, for the reader)."""
    def mark(view: View) -> View:
        setattr(view, _MARK, RateLimitMark(None, why))
        return view
    return mark


def mark_of(view: Callable[..., Any] | None) -> RateLimitMark | None:
    """A view's mark; None for a view that has none (a test fails on such a route)."""
    return getattr(view, _MARK, None)


REDIS_OPTIONS: dict[str, Any] = {
    # A shared store that does not answer must not hold a checkout page for long: after this many
    # seconds the request goes on, counted in the process's memory (see the module docstring).
    "socket_connect_timeout": 0.5, "socket_timeout": 0.5,
    # Our keys apart from a host's Flask-Limiter sharing the server (its keys start "LIMITS:"),
    # so that resetting ours never clears theirs.
    "key_prefix": "checkout-ratelimits",
}
REDIS_SCHEMES = ("redis", "rediss", "redis+unix", "redis+sentinel", "redis+cluster", "valkey",
                 "valkeys", "valkey+unix", "valkey+sentinel", "valkey+cluster")


def category() -> str | None:
    """The category of the current request, as its view says; None when it is not limited
    (addresses that match no route, and views marked unlimited)."""
    mark = mark_of(current_app.view_functions.get(request.endpoint or ""))
    if mark is None or mark.category is None:
        return None
    return mark.category() if callable(mark.category) else mark.category


_PHOTOS_DECODED = "checkout_photos_decoded"      # on flask.g, for the request's photo limits


def photo_decodes(count: int) -> None:
    """This request is about to decode ``count`` KYC photos: they count against the photo
    limits once it is answered."""
    setattr(g, _PHOTOS_DECODED, count)


def client_address() -> str:
    """Who the per-address limits count: the IPv4 address, or the /64 of an IPv6 address (one
    subscriber's block: counting single IPv6 addresses would let a client change it per request)."""
    raw = request.remote_addr or ""
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


def check_config(app: Flask) -> None:
    """Fail at start-up on a limit or a store that cannot be used (``ConfigurationError``)."""
    configured_limits(app)
    storage_settings(app)


def configured_limits(app: Flask) -> dict[str, str]:
    """:data:`DEFAULT_LIMITS` with ``CHECKOUT_RATELIMITS`` over them, each checked: a name that
    is not a limit, or a value that is not a limit string, fails at start-up, naming it. ``""``
    or ``None`` turns that one limit off."""
    given = app.config.get("CHECKOUT_RATELIMITS") or {}
    if not isinstance(given, Mapping):
        raise ConfigurationError(
            "CHECKOUT_RATELIMITS must be a dict of limit names to limit strings, e.g. "
            "{'quote_per_session': '60/minute'}")
    unknown = sorted(str(name) for name in given if name not in DEFAULT_LIMITS)
    if unknown:
        raise ConfigurationError(
            f"CHECKOUT_RATELIMITS: no limit is named {', '.join(map(repr, unknown))}; "
            f"the limits are {', '.join(DEFAULT_LIMITS)}")
    merged: dict[str, str] = {}
    for name, default in DEFAULT_LIMITS.items():
        value = given.get(name, default)
        if value is None or value == "":
            merged[name] = ""
            continue
        problem = _limit_problem(value)
        if problem:
            raise ConfigurationError(f"CHECKOUT_RATELIMITS[{name!r}] = {value!r}: {problem}")
        merged[name] = value
    return merged


def _limit_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return "a limit is a string such as '60/minute' or '10/minute;100/hour'"
    try:
        items = parse_many(value)
    except ValueError:
        return ("not a limit: write an amount per period, such as '60/minute' or "
                "'10/minute;100/hour' ('' for no limit)")
    if any(item.amount < 1 for item in items):
        return "a limit of 0 would refuse every request ('' for no limit)"
    return None


def storage_settings(app: Flask) -> tuple[str, dict[str, Any]]:
    uri = app.config.get("CHECKOUT_RATELIMIT_STORAGE_URI") or "memory://"
    options = app.config.get("CHECKOUT_RATELIMIT_STORAGE_OPTIONS") or {}
    if not isinstance(uri, str) or "://" not in uri:
        raise ConfigurationError(
            "CHECKOUT_RATELIMIT_STORAGE_URI must be a storage address such as memory:// or "
            "redis://host:6379/0")
    if uri.startswith("async+"):
        raise ConfigurationError("CHECKOUT_RATELIMIT_STORAGE_URI: async storages are not "
                                 "supported (Flask serves requests synchronously)")
    if not isinstance(options, Mapping):
        raise ConfigurationError("CHECKOUT_RATELIMIT_STORAGE_OPTIONS must be a dict")
    scheme = uri.split("://", 1)[0]
    defaults = REDIS_OPTIONS if scheme in REDIS_SCHEMES else {}
    return uri, {**defaults, **options}


class RateLimited(TooManyRequests):
    """One of our limits refused the request: ``limit_name`` is its name in
    :data:`DEFAULT_LIMITS`, ``seconds`` the whole seconds until it lets one more through (also
    the ``Retry-After`` of werkzeug's own 429, should no handler render a page)."""

    def __init__(self, limit_name: str, seconds: int) -> None:
        super().__init__(f"rate limit {limit_name} exceeded", retry_after=seconds)
        self.limit_name = limit_name
        self.seconds = seconds


class _FailOpenCounter:
    """Counts in the shared store, or in the process's memory while that store cannot be reached
    (the module docstring says why): one warning when it goes, one line when counting there works
    again, and meanwhile another look after 1 s, doubling up to 32 s while it keeps failing (a
    store that answers a ping but refuses counts, say read-only, keeps failing). One request
    looks; the others count in memory meanwhile rather than wait for its round trip."""

    def __init__(self, uri: str, options: dict[str, Any]) -> None:
        self.memory = MovingWindowRateLimiter(MemoryStorage())
        self.shared = (None if uri.startswith("memory://")
                       else MovingWindowRateLimiter(storage_from_string(uri, **options)))
        self._lock = threading.Lock()
        self._look_again_at: float | None = None     # monotonic; None while counting there
        self._pause = 0.0                            # the last wait; 0 once a count worked

    def run(self, action: str, *args: Any, **kwargs: Any) -> Any:
        """``action`` (``hit``, ``test``, ``get_window_stats``) of the moving window limiter."""
        if self.shared is None or not self._may_use_store():
            return getattr(self.memory, action)(*args, **kwargs)
        try:
            answer = getattr(self.shared, action)(*args, **kwargs)
        except Exception:  # the store's own errors (redis, memcached...) differ by backend
            self._store_failed()
            return getattr(self.memory, action)(*args, **kwargs)
        if self._pause:
            self._store_worked()
        return answer

    def _may_use_store(self) -> bool:
        due = self._look_again_at
        if due is None:
            return True
        if time.monotonic() < due or not self._lock.acquire(blocking=False):
            return False
        try:
            due = self._look_again_at       # again, now under the lock: another may have looked
            if due is None or time.monotonic() < due:
                return due is None
            if self.store_answers():
                self._look_again_at = None          # the next count there says if it is back
                return True
            self._pause = min(self._pause * 2, 32)
            self._look_again_at = time.monotonic() + self._pause
            return False
        finally:
            self._lock.release()

    def _store_failed(self) -> None:
        with self._lock:
            if self._look_again_at is not None:
                return                               # another request saw it first
            if not self._pause:
                log.warning("rate limit store unreachable: falling back to in-memory counts "
                            "(limits now hold per process)")
            self._pause = min(max(self._pause * 2, 1), 32)
            self._look_again_at = time.monotonic() + self._pause

    def _store_worked(self) -> None:
        with self._lock:
            if self._pause:
                log.info("rate limit store answers again: counting there")
                self._pause = 0

    def store_answers(self) -> bool:
        try:
            return self.shared is not None and bool(self.shared.storage.check())
        except Exception:  # as in run()
            return False

    def reset(self) -> None:
        self.memory.storage.reset()
        if self.shared is not None:
            self.shared.storage.reset()


@functools.cache
def _parsed(limit: str) -> tuple[RateLimitItem, ...]:
    return tuple(parse_many(limit)) if limit else ()


@dataclass
class RateLimits:
    """The checkout's limits for one app (``app.extensions["checkout"].ratelimits``), counted by
    the ``limits`` library. ``counter`` is None when ``CHECKOUT_RATELIMIT_ENABLED`` is False."""

    limits: dict[str, str]
    session_secret: bytes = field(repr=False)
    counter: _FailOpenCounter | None = None

    @classmethod
    def create(cls, app: Flask) -> RateLimits:
        limits = configured_limits(app)
        uri, options = storage_settings(app)
        # A key of its own: the store's keys can neither be matched with session ids nor used
        # to sign anything.
        session_secret = derived_key(app.config["CHECKOUT_LAUNCH_SECRET"],
                                     b"checkout rate limits: session keys")
        if not app.config.get("CHECKOUT_RATELIMIT_ENABLED", True):
            return cls(limits, session_secret)
        try:
            counter = _FailOpenCounter(uri, options)
        except (LimitsConfigurationError, NotImplementedError, ValueError) as exc:
            raise ConfigurationError(
                f"CHECKOUT_RATELIMIT_STORAGE_URI cannot be used: {exc}") from exc
        return cls(limits, session_secret, counter)

    def _keys(self) -> list[tuple[str, str]]:
        """(``ip`` or ``session``, the key counted) for this request."""
        keys = [("ip", client_address())]
        if (request.view_args or {}).get("session_id"):
            keys.append(("session", self.session_key()))
        return keys

    def count_request(self) -> None:
        """Before the view: one more request of its category, per address and per session; for
        identity documents, is there room for one more photo? Refused with :class:`RateLimited`."""
        g.pop(_PHOTOS_DECODED, None)        # an app context can outlive a request: not its count
        try:
            name = category()
            keys = [] if name is None else self._keys()   # nothing to work out when unlimited
        except Exception:  # a fault of ours must not refuse a shopper: let the request through
            log.exception("rate limit category or key failed: request not counted")
            return
        for kind, key in keys:
            self._refuse_unless_room(f"{name}_per_{kind}", key, take=True)
            if name == "kyc":
                self._refuse_unless_room(f"photo_per_{kind}", key, take=False)

    def count_photos(self, response: Response) -> Response:
        """After the view: the photos it decoded (:func:`photo_decodes`) count, one each."""
        decoded = int(g.pop(_PHOTOS_DECODED, 0))
        if decoded > 0:
            for kind, key in self._keys():
                self._count_up_to_the_limit(f"photo_per_{kind}", key, decoded)
        return response

    def _refuse_unless_room(self, limit_name: str, key: str, *, take: bool) -> None:
        """Count one more (``take``), or only look whether one more fits; raise
        :class:`RateLimited` when it does not."""
        assert self.counter is not None
        identifiers = (KEY_PREFIX, key, limit_name)
        for item in _parsed(self.limits.get(limit_name, "")):
            if not self.counter.run("hit" if take else "test", item, *identifiers):
                log.info("rate limit %s (%s) exceeded at %s", limit_name, item, request.endpoint)
                raise RateLimited(limit_name, self._seconds_until_room(item, identifiers))

    def _count_up_to_the_limit(self, limit_name: str, key: str, count: int) -> None:
        """Count ``count`` more, one at a time: a count that does not fit whole would be recorded
        not at all, and a request that decoded three photos one short of the limit would leave
        the count where it was, for the next request to pass too."""
        assert self.counter is not None
        identifiers = (KEY_PREFIX, key, limit_name)
        for item in _parsed(self.limits.get(limit_name, "")):
            for _ in range(count):
                if not self.counter.run("hit", item, *identifiers):
                    break

    def _seconds_until_room(self, item: RateLimitItem, identifiers: tuple[str, ...]) -> int:
        assert self.counter is not None
        reset_time: float = self.counter.run("get_window_stats", item, *identifiers).reset_time
        return max(1, math.ceil(reset_time - time.time()))

    def store_answers(self) -> bool | None:
        """Whether the shared store answers now (one short round trip); None when the limits
        are counted in the process's memory anyway (memory://, or limits turned off)."""
        if self.counter is None or self.counter.shared is None:
            return None
        return self.counter.store_answers()

    def session_key(self) -> str:
        """The current session's key in the store: a keyed digest, never the id itself."""
        session_id = str((request.view_args or {}).get("session_id") or "")
        return hmac.new(self.session_secret, session_id.encode(),
                        hashlib.sha256).hexdigest()[:32]

    def reset(self) -> None:
        """Forget every count (tests; an operator after a false alarm)."""
        if self.counter is not None:
            self.counter.reset()
