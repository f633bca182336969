"""Rate limits on the checkout's own routes (Flask-Limiter), per client address and per session.

Why: every session opened is a row kept for days, and every price, order action and page of an
order is a call to the upstream made with the merchant's key. Unlimited, one client could fill the
database and spend the merchant's upstream quota, and every shopper of that merchant would pay for
it. The default limits are far above what a person does (``tests/ratelimits/test_real_users.py`` walks
whole orders and a half-hour wait under them), so only a client that hammers the checkout meets them.

Each request falls in at most one category (:func:`category`); each category has a limit per client
address and, under ``/s/<session>/``, one per session (``<category>_per_ip``,
``<category>_per_session`` in :data:`DEFAULT_LIMITS`, overridden by ``CHECKOUT_RATELIMITS``):

- ``open``: opening a session (``/launch``, ``/onramp``, ``/offramp``): per address only;
- ``page``: a session's pages (a reload, a step, the order's page: some of them ask the upstream);
- ``poll``: what a waiting page asks every few seconds (the order's status, an identity check);
- ``quote``: the live price under the amount field;
- ``form``: a step's form, the language menu, "I have paid";
- ``create``, ``otp``, ``push_retry``, ``tx_hash``, ``kyc``: creating the order, a one-time code,
  a new payment request to the phone, a transaction hash, identity documents.

Beside the categories, ``photo_per_ip`` and ``photo_per_session`` count the KYC photos decoded
(:func:`photo_decodes`), one each, rather than requests: a form whose fields are wrong decodes none,
and one that is sent decodes up to three. Flask-Limiter checks before the request that one more is
allowed, and deducts what the request decoded after it.

Not limited (:data:`UNLIMITED` says why for each): the webhook receiver, ``/healthz``, static files,
the embedded sandbox's own pages and addresses that match nothing.

Keys. The client address is ``request.remote_addr``: behind a proxy the host must apply werkzeug's
``ProxyFix`` (the address sent to the upstream with each order is read the same way), or every
shopper would share the proxy's address. An IPv6 address counts by its /64, the block one subscriber
is given. A session counts by an HMAC-SHA256 of its id (keyed by a key derived from
``CHECKOUT_LAUNCH_SECRET``): the id opens the order, and never appears in the limiter's store or in
its log lines.

The checkout owns its ``Limiter`` (key prefix ``checkout``), kept in ``app.extensions["checkout"]``.
Flask-Limiter's ``init_app`` is given :class:`_BlueprintSetup` instead of the host's app: it reads
only the checkout's settings (never the host's ``RATELIMIT_*`` keys, which would add the host's
default limits to our routes and ours to the host's) and its request hooks run on the checkout's
blueprint alone. A host with its own Flask-Limiter keeps it, untouched, for its own routes.

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
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from flask import Blueprint, Flask, g, request
from flask_limiter import Limiter, RateLimitExceeded
from limits import parse_many
from limits.errors import ConfigurationError as LimitsConfigurationError

from .errors import ConfigurationError
from .security import is_machine_request

__all__ = ["DEFAULT_LIMITS", "ENDPOINT_CATEGORIES", "UNLIMITED", "RateLimits", "category",
           "client_address", "configured_limits", "photo_decodes"]

log = logging.getLogger("checkout.ratelimits")

KEY_PREFIX = "checkout"
# Counts every request of the last window, not per calendar minute: a fixed window would let a
# client send twice the limit across a minute's boundary.
STRATEGY = "moving-window"

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
    # Not a category of requests: the photos those POSTs have decoded, one each (the costly part,
    # up to ~0.5 s of CPU and ~60 MB a photo). A person sends three, and again those refused.
    "photo_per_session": "15/minute;45/hour",
    "photo_per_ip": "30/minute;300/hour",
}

ENDPOINT_CATEGORIES: dict[str, str] = {
    "checkout.launch": "open",
    "checkout.onramp": "open",
    "checkout.offramp": "open",
    "checkout.flow": "page",
    "checkout.review": "page",
    "checkout.pay": "page",
    "checkout.deposit": "page",
    "checkout.status": "page",
    "checkout.payment_return": "page",
    # The order view (checkout.capabilities) names no session: limited per address only.
    "checkout.order_view": "page",
    "checkout.status_live": "poll",
    "checkout.order_view_live": "poll",
    "checkout.kyc_check": "poll",
    "checkout.quote": "quote",
    "checkout.language": "form",
    "checkout.onramp_confirm": "form",
    "checkout.create": "create",
    "checkout.onramp_otp": "otp",
    "checkout.onramp_retry_push": "push_retry",
    "checkout.deposit_sent": "tx_hash",
    # checkout.step: a page (GET), a form (POST), identity documents (POST to the kyc step).
}

UNLIMITED: dict[str, str] = {
    # Signed deliveries from the upstream, which retries what is not acknowledged: a 429 would
    # only delay order updates (and shoppers' completed pages) and multiply the deliveries. A
    # forged delivery costs one signature check and is never stored.
    "checkout.webhooks": "signed by the upstream, which retries: never refused for volume",
    # Load balancers and monitors probe it often, from one address; a 429 would take the
    # instance out of rotation. Its upstream check is cached (CHECKOUT_HEALTH_CACHE_SECONDS).
    "checkout.healthz": "probed by load balancers; its upstream check is cached",
    "checkout.healthz_ready": "probed by monitors; answered from the last background check",
    "checkout.static": "files with long cache lifetimes, no work behind them",
    "checkout.sandbox_pages": "the embedded sandbox's test pages (absent with a real upstream)",
    "checkout.not_found": "a 404 or 405 page: no work behind it",
    # A scraper every few seconds from one address; without the bearer token a request costs one
    # comparison, and a scrape's one query (the stored orders) is cached
    # (CHECKOUT_METRICS_ORDERS_CACHE_SECONDS). A 429 would only leave holes in the graphs.
    "checkout.metrics": "bearer token only; its one database count is cached",
}

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
    """The category of the current request, or None when it is not limited."""
    endpoint = request.endpoint
    if endpoint == "checkout.step":
        if request.method == "GET":
            return "page"
        return "kyc" if (request.view_args or {}).get("step") == "kyc" else "form"
    return ENDPOINT_CATEGORIES.get(endpoint or "")


def _unlimited() -> bool:
    return request.endpoint in UNLIMITED


_PHOTOS_DECODED = "checkout_photos_decoded"      # on flask.g, for the request's photo limits


def photo_decodes(count: int) -> None:
    """This request is about to decode ``count`` KYC photos: they count against the photo
    limits once it is answered."""
    setattr(g, _PHOTOS_DECODED, count)


def _photos_decoded(_response: Any) -> bool:
    return int(g.get(_PHOTOS_DECODED, 0)) > 0


def _photo_cost() -> int:
    # Before the view (nothing decoded yet), is there room for one more? After it, what it did.
    return int(g.get(_PHOTOS_DECODED, 1))


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


def _not_for_machines(hook: Callable[..., Any]) -> Callable[..., Any]:
    """The limiter's after-request or teardown ``hook``, skipped in a request that machine_answer
    answered: those are unlimited (the limiter's request filter let them through), so there is
    nothing to add or release, and they come hundreds a second."""
    @functools.wraps(hook)
    def unless_machine(arg: Any = None) -> Any:
        if is_machine_request():
            return arg
        return hook(arg)
    return unless_machine


class _BlueprintSetup:
    """What ``Limiter.init_app`` reads and calls on an app, pointed at the checkout alone.

    ``config`` holds the checkout's settings only: the host's ``RATELIMIT_*`` keys (a default limit
    for every route, another store, a switch) never reach our limiter. Request hooks are kept for
    the checkout's blueprint (:meth:`RateLimits.protect`), so no host route is ever counted.
    ``extensions`` is its own: a host's Limiter registry is left alone.
    """

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"RATELIMIT_ENABLED": True}
        self.extensions: dict[str, Any] = {}
        self.hooks: list[tuple[str, Callable[..., Any]]] = []

    def before_request(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        self.hooks.append(("before_request", hook))
        return hook

    def after_request(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        self.hooks.append(("after_request", hook))
        return hook

    def teardown_request(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        self.hooks.append(("teardown_request", hook))
        return hook


@dataclass
class RateLimits:
    """The checkout's limiter and limits for one app (``app.extensions["checkout"].ratelimits``).

    ``limiter`` is None when ``CHECKOUT_RATELIMIT_ENABLED`` is False.
    """

    limits: dict[str, str]
    limiter: Limiter | None
    session_secret: bytes = field(repr=False)
    setup: _BlueprintSetup = field(repr=False)
    # The store is the process's memory (memory://): it cannot be down, nor shared.
    in_memory: bool = True

    @classmethod
    def create(cls, app: Flask) -> RateLimits:
        limits = configured_limits(app)
        uri, options = storage_settings(app)
        secret = app.config["CHECKOUT_LAUNCH_SECRET"]
        raw = secret.encode() if isinstance(secret, str) else bytes(secret)
        # A key of its own, derived from the launch secret: the limiter's keys can neither be
        # matched with session ids nor used to sign anything.
        session_secret = hmac.new(raw, b"checkout rate limits: session keys",
                                  hashlib.sha256).digest()
        setup = _BlueprintSetup()
        if not app.config.get("CHECKOUT_RATELIMIT_ENABLED", True):
            return cls(limits, None, session_secret, setup, in_memory=uri.startswith("memory://"))
        limiter = Limiter(
            client_address,
            storage_uri=uri,
            storage_options=options,
            strategy=STRATEGY,
            key_prefix=KEY_PREFIX,
            # Retry-After is written by the checkout's 429 page; X-RateLimit-* on every answer
            # would cost a store read per request and tell a client how far it may push.
            headers_enabled=False,
            # Fail open (module docstring): count in memory while the store is away, and let the
            # request through should even that fail.
            in_memory_fallback_enabled=True,
            swallow_errors=True,
            default_limits=[],
            application_limits=[],
            meta_limits=[],
        )
        # Not counted at all (rather than under a limit of ""): the limiter's own work per request
        # cost the webhook receiver a fifth of its CPU.
        limiter.request_filter(_unlimited)
        try:
            limiter.init_app(cast(Flask, setup))
        except (LimitsConfigurationError, NotImplementedError, ValueError) as exc:
            raise ConfigurationError(
                f"CHECKOUT_RATELIMIT_STORAGE_URI cannot be used: {exc}") from exc
        return cls(limits, limiter, session_secret, setup, in_memory=uri.startswith("memory://"))

    def protect(self, bp: Blueprint) -> None:
        """Count the blueprint's requests: its hooks, and one limit per address and per session
        whose value and bucket follow the request's category."""
        if self.limiter is None:
            return
        for name, hook in self.setup.hooks:
            getattr(bp, name)(hook if name == "before_request" else _not_for_machines(hook))
        for kind, key in (("ip", client_address), ("session", self.session_key)):
            self.limiter.shared_limit(self._limit_of(kind), scope=self._scope_of(kind),
                                      key_func=key)(bp)
            self.limiter.shared_limit(self._photo_limit_of(kind), scope=f"photo_per_{kind}",
                                      key_func=key, deduct_when=_photos_decoded,
                                      cost=_photo_cost)(bp)

    def _limit_of(self, kind: str) -> Callable[[], str]:
        def limit() -> str:
            name = category()
            if name is None:
                return ""
            if kind == "session" and not (request.view_args or {}).get("session_id"):
                return ""
            return self.limits.get(f"{name}_per_{kind}", "")

        return limit

    def _photo_limit_of(self, kind: str) -> Callable[[], str]:
        def limit() -> str:
            if category() != "kyc":
                return ""
            return self.limits.get(f"photo_per_{kind}", "")

        return limit

    @staticmethod
    def _scope_of(kind: str) -> Callable[[str], str]:
        def scope(_endpoint: str) -> str:
            return f"{category()}_per_{kind}"

        return scope

    def store_answers(self) -> bool | None:
        """Whether the shared store answers now (one short round trip); None when the limits
        are counted in the process's memory anyway (memory://, or limits turned off)."""
        if self.limiter is None or self.in_memory:
            return None
        return bool(self.limiter.storage.check())

    def session_key(self) -> str:
        """The current session's key in the store: a keyed digest, never the id itself."""
        session_id = str((request.view_args or {}).get("session_id") or "")
        return hmac.new(self.session_secret, session_id.encode(),
                        hashlib.sha256).hexdigest()[:32]

    @staticmethod
    def limit_name(exc: RateLimitExceeded) -> str:
        """Which of :data:`DEFAULT_LIMITS` refused the request (``quote_per_session``...)."""
        scope = exc.limit.scope
        return str(scope(request.endpoint or "") if callable(scope) else scope)

    def retry_after(self, exc: RateLimitExceeded) -> int:
        """Whole seconds until the limit that refused this request lets one more through."""
        seconds = float(exc.limit.limit.get_expiry())
        current = self.limiter.current_limit if self.limiter is not None else None
        if current is not None and current.breached:
            try:
                seconds = current.window.reset_time - time.time()
            except Exception:  # the store's own errors (redis, memcached...) differ by backend
                log.warning("rate limit store unreachable while reading a reset time")
        return max(1, math.ceil(seconds))

    def reset(self) -> None:
        """Forget every count (tests; an operator after a false alarm)."""
        if self.limiter is not None:
            self.limiter.reset()
