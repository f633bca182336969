"""Configuration: defaults and the one place that fails at start-up when a required key is missing.

Everything is read from ``app.config``. With no ``CHECKOUT_API_BASE_URL`` the checkout talks to the
embedded sandbox upstream, and the sandbox's documented credentials become the defaults; outside the
sandbox the merchant's credentials and launch secret are required.
"""
from __future__ import annotations

import ipaddress
import math
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from flask import Flask

from .errors import ConfigurationError
from .keys import secret_bytes

if TYPE_CHECKING:
    from .upstream.breaker import BreakerSettings

# The launch tokens' key on the embedded sandbox (its own credentials are the sandbox's:
# checkout.embedded_sandbox). It protects nothing: on the sandbox no money moves.
SANDBOX_LAUNCH_SECRET = "sandbox-launch-secret-do-not-use-in-production-0001"

DEFAULTS: dict[str, Any] = {
    "CHECKOUT_API_BASE_URL": None,
    "CHECKOUT_CLIENT_SECRET": None,
    "CHECKOUT_FRAME_ANCESTORS": ["'self'"],
    "CHECKOUT_URL_PREFIX": "/checkout",
    # A database behind this release's schema is upgraded at start-up, under a lock; False: start-up
    # refuses it with a message naming `flask checkout db upgrade` (checkout.store.schema).
    "CHECKOUT_DATABASE_AUTO_UPGRADE": True,
    # The origin users reach the checkout at (https://pay.shop.example): absolute links are built
    # from it, never from the request's Host header (checkout.public_address). SERVER_NAME or
    # TRUSTED_HOSTS do instead; outside the sandbox one of the three is required.
    "CHECKOUT_PUBLIC_URL": None,
    # (connect, read) seconds per kind of upstream call (reference, price, read, write), over
    # checkout.upstream.budget.DEFAULT_TIMEOUTS; CHECKOUT_HTTP_TIMEOUT, when set, one pair for all.
    "CHECKOUT_UPSTREAM_TIMEOUTS": {},
    "CHECKOUT_HTTP_TIMEOUT": None,
    # Seconds a checkout page may spend on upstream calls in all, retries included: below the
    # worker timeout of the shipped gunicorn settings (checkout.gunicorn_config), always.
    "CHECKOUT_REQUEST_BUDGET": 25.0,
    # Calls of one process waiting on the upstream at once; one more is refused, not queued.
    "CHECKOUT_UPSTREAM_MAX_IN_FLIGHT": 8,
    # The breakers (checkout.upstream.breaker), one per family of endpoints and, for prices and
    # limits, per corridor: one opens once at least MIN_CALLS requests (each counted once, its
    # retries included) in the last WINDOW_SECONDS had at least FAILURE_RATIO of them without a
    # usable answer; RESET_SECONDS later one trial call goes, whose answer closes it or opens it
    # again. Three requests: a process sees few per corridor, and a hanging upstream should cost
    # each corridor few timeouts; half of them failing: a lone failure amid answers never opens it.
    "CHECKOUT_BREAKER_MIN_CALLS": 3,
    "CHECKOUT_BREAKER_FAILURE_RATIO": 0.5,
    "CHECKOUT_BREAKER_WINDOW_SECONDS": 30.0,
    "CHECKOUT_BREAKER_RESET_SECONDS": 5.0,
    # How long reference data (countries, channels, assets, limits) is trusted before re-fetching.
    "CHECKOUT_REFERENCE_TTL": 300,
    # A stored order status older than this is refreshed from the upstream when a page asks for it.
    "CHECKOUT_STATUS_MAX_AGE": 30,
    # A shown price older than this is re-quoted at review (upstream quotes live about 10 minutes).
    "CHECKOUT_QUOTE_MAX_AGE": 240,
    # Days a receipt link (and an order view address) opens its order after it was made.
    "CHECKOUT_RECEIPT_DAYS": 90,
    # Shown in the checkout's header; None shows "Checkout".
    "CHECKOUT_MERCHANT_NAME": None,
    # Whom users contact about an order (checkout.support): any of {"email": ..., "web":
    # "https://...", "whatsapp": "+...", "phone": "+..."}. None: pages name the merchant.
    "CHECKOUT_SUPPORT": None,
    # The merchant's desk (checkout.desk): a function, or its import string, that returns None or
    # the staff member at the desk (name, role "viewer" or "operator"). None: no desk at all.
    "CHECKOUT_DESK_ACCESS": None,
    # Where the desk sends a request without access (with ?next=); None: a 403 page.
    "CHECKOUT_DESK_LOGIN_URL": None,
    # The clock the desk shows times on (a tz database name), and says it does.
    "CHECKOUT_DESK_TIMEZONE": "UTC",
    # Extra settings for the embedded sandbox (see checkout.sandbox.create_app).
    "CHECKOUT_SANDBOX": {},
    # Webhook receiver (checkout.webhooks): "body" verifies spec 6.3; "data" the variant that signs
    # JSON.stringify(body.data).
    "CHECKOUT_WEBHOOK_SIGNATURE_MODE": "body",
    "CHECKOUT_WEBHOOK_MAX_BYTES": 256 * 1024,
    # Process stored events on a per-process thread; False: run `flask checkout webhooks process`.
    "CHECKOUT_WEBHOOK_BACKGROUND": True,
    "CHECKOUT_WEBHOOK_SWEEP_INTERVAL": 5.0,
    "CHECKOUT_WEBHOOK_FETCH_ORDERS": True,
    "CHECKOUT_WEBHOOK_FETCH_ATTEMPTS": 8,
    # A signal claimed by a process that died is sent again after this many seconds.
    "CHECKOUT_SIGNAL_LEASE": 300,
    # Seconds of clock skew allowed when a fetched on-ramp status is compared with webhook times.
    "CHECKOUT_STATUS_CLOCK_TOLERANCE": 2,
    # Seconds during which an order creation whose outcome is unknown (a timeout, a 5xx) is only
    # looked up, never sent again: sending it again could create a second order for one payment.
    # After it, a lookup the upstream answers without finding the order lets the user try again.
    "CHECKOUT_CREATE_GRACE": 40,
    # Seconds /healthz and /healthz/ready reuse their last background check of the upstream and
    # the rate-limit store before starting another: each upstream check is a call made with the
    # merchant's key (no amplification by hammering the routes), and no probe waits on it. A check
    # that found either unwell is made again after 2 s at most (checkout.readiness), and a breaker
    # opening has one made at once.
    "CHECKOUT_HEALTH_CACHE_SECONDS": 30,
    # An http:// (not https) CHECKOUT_API_BASE_URL on a host other than loopback is refused at
    # start-up: the client id and signed requests would cross the network in cleartext. Set True
    # only for a trusted private network (e.g. a sidecar proxy that adds TLS).
    "CHECKOUT_ALLOW_INSECURE_UPSTREAM": False,
    # Each process's webhook dispatcher thread deletes expired sessions (they hold the user's
    # wallet and contact details) at most once per this many seconds; 0 leaves it to
    # `flask checkout sessions purge` (e.g. from cron, also needed when CHECKOUT_WEBHOOK_BACKGROUND
    # is False).
    "CHECKOUT_SESSION_PURGE_INTERVAL": 3600,
    # Orders whose webhooks were lost (checkout.webhooks.reconcile): an order not settled whose
    # status has not been known current for this many seconds is asked of the upstream, by each
    # process's dispatcher thread and by `flask checkout orders reconcile`.
    "CHECKOUT_RECONCILE_AFTER": 300,
    # A check that learns nothing waits AFTER x 2, 4, 8 ... seconds before the next, at most this.
    "CHECKOUT_RECONCILE_MAX_BACKOFF": 3600,
    # Upstream calls of the reconciler per minute and process; 0 turns the background one off.
    "CHECKOUT_RECONCILE_PER_MINUTE": 30,
    # KYC: True when the merchant's user endpoints are enabled upstream (spec 4.6, off by
    # default): the user's standing is then read by email with its exact level. Otherwise by
    # phone from /api/kyc/state, whose pass counts as basic unless the upstream told the level
    # elsewhere (order webhooks' userKyc, kyc events: checkout.kyc.memory).
    "CHECKOUT_KYC_USER_API": False,
    # Days a level the upstream told of a person (by a keyed digest of their email or phone) is
    # remembered after it last said it, for their next orders; then deleted by the hourly sweep.
    "CHECKOUT_KYC_REMEMBER_DAYS": 365,
    # Seconds between two reads of a KYC submission under review (sooner when a `kyc` webhook
    # arrives); the page itself asks every few seconds and is answered from the session.
    "CHECKOUT_KYC_POLL_SECONDS": 15,
    # Without JavaScript nothing polls: a page that waits (an order's status, a document under
    # review) reloads itself after this many seconds, and an unpaid order that expired six times
    # less often. Each reload is a whole page on the user's data plan.
    "CHECKOUT_NO_SCRIPT_REFRESH_SECONDS": 10,
    # Rate limits of the checkout's routes (checkout.ratelimits): on unless set False.
    "CHECKOUT_RATELIMIT_ENABLED": True,
    # Limit name -> limit string ("60/minute", "10/minute;100/hour"; "" for none), over
    # checkout.ratelimits.DEFAULT_LIMITS. A bad name or string fails at start-up.
    "CHECKOUT_RATELIMITS": {},
    # Where counts are kept: memory:// counts per process; redis://host:6379/0 (the `redis`
    # extra) shares them between workers and hosts. Unreachable, the checkout fails open.
    "CHECKOUT_RATELIMIT_STORAGE_URI": "memory://",
    # Extra keyword arguments of the store (for Redis: the redis client's, e.g. ssl settings).
    "CHECKOUT_RATELIMIT_STORAGE_OPTIONS": {},
    # Seconds an identical live price is answered without a new upstream call (0: never).
    "CHECKOUT_QUOTE_CACHE_SECONDS": 5,
    # Mask session ids and tokens in the werkzeug, gunicorn and app.logger lines (checkout.logs).
    "CHECKOUT_MASK_ACCESS_LOGS": True,
    # Set (a random string of 32 characters or more): GET {prefix}/metrics serves Prometheus
    # metrics to requests bearing it (checkout.metrics). Unset: no such route, nothing counted.
    "CHECKOUT_METRICS_TOKEN": None,
    # Seconds a count of the stored orders by flow and status (a scan of checkout_orders) is
    # reused by scrapes.
    "CHECKOUT_METRICS_ORDERS_CACHE_SECONDS": 30,
}

MIN_LAUNCH_SECRET_BYTES = 32


def uses_sandbox(app: Flask) -> bool:
    return not app.config.get("CHECKOUT_API_BASE_URL")


def apply_defaults(app: Flask) -> None:
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    # Whether the upstream's chains are test networks: a deposit's payment request (QR code, the
    # shop's wallet) then names testnet token contracts and chain ids. The embedded sandbox is. For
    # a real upstream it is unknown until set (True for its sandbox environment, False for
    # production), and until then no payment request is made: a tester's wallet must never be
    # asked to send mainnet tokens to a testnet order.
    app.config.setdefault("CHECKOUT_TESTNET", True if uses_sandbox(app) else None)
    if uses_sandbox(app):
        # The sandbox's client id and webhook secret: checkout.embedded_sandbox.apply_defaults.
        app.config.setdefault("CHECKOUT_LAUNCH_SECRET", SANDBOX_LAUNCH_SECRET)
    app.config.setdefault(
        "CHECKOUT_DATABASE_URL", f"sqlite:///{app.instance_path}/checkout.sqlite3"
    )


def require(app: Flask, key: str) -> Any:
    """Return a required setting or fail now, naming the key, rather than mid-checkout."""
    value = app.config.get(key)
    if value is None or value == "" or value == []:
        raise ConfigurationError(f"{key} is required: set it in app.config before Checkout(app)")
    return value


MAX_DAYS = 3650    # ten years


def validate(app: Flask) -> None:
    """The settings this module owns; the modules with settings of their own check them too, each
    from ``Checkout.init_app`` (``check_config``)."""
    for key in ("CHECKOUT_CLIENT_ID", "CHECKOUT_WEBHOOK_SECRET", "CHECKOUT_LAUNCH_SECRET",
                "CHECKOUT_DATABASE_URL", "CHECKOUT_URL_PREFIX"):
        require(app, key)
    secret = app.config["CHECKOUT_LAUNCH_SECRET"]
    if len(secret_bytes(secret)) < MIN_LAUNCH_SECRET_BYTES:
        raise ConfigurationError(
            f"CHECKOUT_LAUNCH_SECRET must be at least {MIN_LAUNCH_SECRET_BYTES} bytes (HS256 key)"
        )
    prefix = app.config["CHECKOUT_URL_PREFIX"]
    if not prefix.startswith("/") or prefix.endswith("/"):
        raise ConfigurationError("CHECKOUT_URL_PREFIX must start with '/' and not end with '/'")
    _check_upstream_scheme(app)
    _check_switches(app)
    _check_upstream_waits(app)
    # Bounded: a link or a memory for ever is not one, and a date a million days back is none
    # (the first KYC standing read would fail on it).
    for key in ("CHECKOUT_KYC_REMEMBER_DAYS", "CHECKOUT_RECEIPT_DAYS"):
        if _positive(app, key) > MAX_DAYS:
            raise ConfigurationError(f"{key} must be at most {MAX_DAYS} days (ten years)")
    ancestors = app.config["CHECKOUT_FRAME_ANCESTORS"]
    if isinstance(ancestors, str) or not all(isinstance(a, str) for a in ancestors):
        raise ConfigurationError("CHECKOUT_FRAME_ANCESTORS must be a list of origins")


def _positive(app: Flask, key: str, *, whole: bool = False) -> float:
    """A finite number above 0. inf passed "above 0" and failed at its first use, mid-checkout
    (a socket's timeout, a date, a token's expiry); NaN is no number of anything."""
    value = app.config.get(key)
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not 0 < value < math.inf:
        raise ConfigurationError(
            f"{key} must be a finite {'whole ' if whole else ''}number above 0, not {value!r}")
    return float(value)


def _pair(key: str, value: Any) -> tuple[float, float]:
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf
            for v in value):
        raise ConfigurationError(
            f"{key} must be a (connect, read) pair of finite seconds above 0, not {value!r}")
    return float(value[0]), float(value[1])


def _check_upstream_waits(app: Flask) -> None:
    """How long the upstream may keep a page waiting (checkout.upstream.budget)."""
    from .upstream.budget import KINDS

    budget = _positive(app, "CHECKOUT_REQUEST_BUDGET")
    if app.config.get("CHECKOUT_HTTP_TIMEOUT") is not None:
        _pair("CHECKOUT_HTTP_TIMEOUT", app.config["CHECKOUT_HTTP_TIMEOUT"])
    per_kind = app.config.get("CHECKOUT_UPSTREAM_TIMEOUTS")
    if not isinstance(per_kind, dict) or set(per_kind) - set(KINDS):
        raise ConfigurationError(
            f"CHECKOUT_UPSTREAM_TIMEOUTS must map kinds of call ({', '.join(KINDS)}) to "
            "(connect, read) pairs")
    for kind, pair in per_kind.items():
        _pair(f"CHECKOUT_UPSTREAM_TIMEOUTS[{kind!r}]", pair)
    # A create is looked up, never sent again, for the grace period: at least twice the longest
    # a create call may wait, or a second one could be sent while the first is still processed.
    from .upstream.budget import DEFAULT_TIMEOUTS, WRITE

    every = app.config.get("CHECKOUT_HTTP_TIMEOUT")
    connect, read = _pair("write", every if every is not None
                          else per_kind.get(WRITE, DEFAULT_TIMEOUTS[WRITE]))
    grace = _positive(app, "CHECKOUT_CREATE_GRACE")
    if grace < 2 * (connect + read):
        raise ConfigurationError(
            f"CHECKOUT_CREATE_GRACE ({grace:g} s) must be at least twice the longest wait of an "
            f"order's creation ({connect:g} + {read:g} s): raise it to {2 * (connect + read):g} "
            "or more, or shorten the write timeout")
    _positive(app, "CHECKOUT_UPSTREAM_MAX_IN_FLIGHT", whole=True)
    breaker_settings(app)
    if budget < 1:
        raise ConfigurationError("CHECKOUT_REQUEST_BUDGET must leave a page at least a second")


# Settings of earlier releases that are read no more, and what replaces them: refused at start-up
# rather than ignored, so that nobody believes a setting holds that does not.
RETIRED = {
    "CHECKOUT_BREAKER_FAILURES": (
        "the breakers no longer open after failures in a row but on a share of failed requests: "
        "set CHECKOUT_BREAKER_MIN_CALLS (requests in the window before a breaker may open, 3), "
        "CHECKOUT_BREAKER_FAILURE_RATIO (0.5) and CHECKOUT_BREAKER_WINDOW_SECONDS (30) instead, "
        "or leave them to their defaults"),
}


def breaker_settings(app: Flask) -> BreakerSettings:
    """When the upstream's breakers open, and for how long (checkout.upstream.breaker); fails at
    start-up, naming the key, on a setting that is not one."""
    from .upstream.breaker import BreakerSettings

    for key, instead in RETIRED.items():
        if key in app.config:
            raise ConfigurationError(f"{key} is no longer read: {instead}")
    ratio = _positive(app, "CHECKOUT_BREAKER_FAILURE_RATIO")
    if ratio > 1:
        raise ConfigurationError(
            f"CHECKOUT_BREAKER_FAILURE_RATIO is a share of requests, above 0 and at most 1, not "
            f"{ratio!r}")
    return BreakerSettings(
        min_calls=int(_positive(app, "CHECKOUT_BREAKER_MIN_CALLS", whole=True)),
        failure_ratio=ratio, window=_positive(app, "CHECKOUT_BREAKER_WINDOW_SECONDS"),
        open_for=_positive(app, "CHECKOUT_BREAKER_RESET_SECONDS"))


def _check_switches(app: Flask) -> None:
    """An on/off setting must be True or False: ``"false"`` read from an environment variable
    would count as on (an upgrade the operator meant to refuse, masking meant to stay on...)."""
    for key, default in DEFAULTS.items():
        if isinstance(default, bool) and not isinstance(app.config.get(key), bool):
            raise ConfigurationError(
                f"{key} must be True or False, not {type(app.config.get(key)).__name__}")


def is_loopback_host(host: str | None) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1): traffic stays on this host."""
    if not host:
        return False
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_upstream_scheme(app: Flask) -> None:
    base = app.config.get("CHECKOUT_API_BASE_URL")
    if not base:
        return                              # the embedded sandbox: no network at all
    try:
        parts = urlsplit(str(base))
        host = parts.hostname
    except ValueError:
        host, parts = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise ConfigurationError("CHECKOUT_API_BASE_URL must be an https:// address")
    if parts.scheme == "https" or is_loopback_host(host):
        return
    if app.config.get("CHECKOUT_ALLOW_INSECURE_UPSTREAM"):
        return
    raise ConfigurationError(
        "CHECKOUT_API_BASE_URL must be https:// (the client id would travel in cleartext); "
        "http:// is accepted only for loopback hosts or with CHECKOUT_ALLOW_INSECURE_UPSTREAM = True")
