"""What the checkout counts, for Prometheus at ``{prefix}/metrics`` (``CHECKOUT_METRICS_TOKEN``).

Off by default: without the token nothing is counted, no route exists (the address answers the
ordinary 404 page) and prometheus_client is not even imported. With it, :class:`Metrics` is
:class:`checkout.metrics.prometheus.PrometheusMetrics` and the places that count call one of its
small methods:

==========================  ====================================================================
the upstream transport      :meth:`Metrics.upstream_call` (each attempt: endpoint, status, time)
the webhook receiver        :meth:`Metrics.webhook_delivery` (result, time to the acknowledgement)
the session store           :meth:`Metrics.session_opened` (flow, launch or unsigned start),
                            :meth:`Metrics.order_created` (flow: an order attached)
the 429 page                :meth:`Metrics.rate_limited` (which of our limits refused)
the reconciler              :meth:`Metrics.reconciler_check` (flow, moved / unchanged / failed)
the upstream's breakers     :meth:`Metrics.upstream_breaker` (a breaker's state, when it changes)
the readiness checks        :meth:`Metrics.follow_readiness` (read at each scrape)
==========================  ====================================================================

Orders reaching a status are counted from the checkout's own ``order_status_changed`` signal, and
the stored orders by flow and status are counted in the database at scrape time.

Every label is bounded and names no person, order, session or amount: an upstream endpoint is
its route template (``/api/offramp/order/{id}``), never the path that was sent.

Across gunicorn workers: prometheus_client's multiprocess mode, chosen by the
``PROMETHEUS_MULTIPROC_DIR`` environment variable before prometheus_client is imported (see
:mod:`checkout.gunicorn_config`, which sets it up). A ``flask checkout worker`` given the same
directory counts there too (:func:`counting_process`), so what it counts (the signals it sends,
the reconciler's checks) is in the web app's scrape. Without the variable each app has its own
registry, never prometheus_client's global one: the host's own metrics stay apart, and two apps
in one process (tests) do not collide.
"""
from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from flask import Flask

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..readiness import Readiness

__all__ = ["MULTIPROC_ENV", "Metrics", "check_config", "counting_process", "enabled"]

log = logging.getLogger(__name__)

TOKEN_KEY = "CHECKOUT_METRICS_TOKEN"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# A bearer token is guessed by trying it: 32 characters of a random token's alphabet are far out of
# reach (secrets.token_urlsafe(32) makes 43). RFC 6750's b64token: what a header carries unquoted.
MIN_TOKEN_CHARS = 32
_B64TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")


class Metrics:
    """The checkout's counting points. This class counts nothing: metrics are off."""

    enabled = False

    def upstream_call(self, method: str, endpoint: str, status: str, seconds: float) -> None:
        """One attempt of an upstream call: ``endpoint`` is the route template, ``status`` the
        HTTP status, ``timeout`` or ``unreachable``."""

    def webhook_delivery(self, result: str, seconds: float) -> None:
        """One delivery to the receiver and how long it took to answer it."""

    def session_opened(self, flow: str, start: str) -> None:
        """A new session (``start``: ``launch`` or ``unsigned``; not a token presented again)."""

    def order_created(self, flow: str) -> None:
        """An order created upstream and attached to its session."""

    def step_reached(self, flow: str, step: str) -> None:
        """A session was shown ``step``'s page for the first time (the funnel)."""

    def rate_limited(self, limit: str) -> None:
        """One of our limits (a name of ``ratelimits.DEFAULT_LIMITS``) refused a request."""

    def reconciler_check(self, flow: str, result: str) -> None:
        """The reconciler asked the upstream about one order."""

    def upstream_breaker(self, family: str, old: str, new: str) -> None:
        """A breaker of the upstream's ``family`` of endpoints went from ``old`` to ``new``
        (closed, open, half_open; see checkout.upstream.breaker): an outage starts when it leaves
        closed."""

    def follow_readiness(self, seen: Callable[[], Readiness]) -> None:
        """Where a scrape reads the readiness checks' answers (checkout.readiness): ``seen()``
        at each scrape, so that what it reports is what a probe would find then."""


def enabled(app: Flask) -> bool:
    token = app.config.get(TOKEN_KEY)
    return token is not None and token != ""


def check_config(app: Flask) -> None:
    """Fail at start-up, naming the key, on a token that cannot be used, or on a multiprocess
    setup that would serve wrong numbers. The token itself is never in a message."""
    seconds = app.config.get("CHECKOUT_METRICS_ORDERS_CACHE_SECONDS")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        raise ConfigurationError(
            "CHECKOUT_METRICS_ORDERS_CACHE_SECONDS must be a number of seconds, 0 or more")
    if not enabled(app):
        return
    token = app.config[TOKEN_KEY]
    if not isinstance(token, str):
        raise ConfigurationError(f"{TOKEN_KEY} must be a string (a random bearer token)")
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigurationError(
            f"{TOKEN_KEY} is too short: use at least {MIN_TOKEN_CHARS} random characters, e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    if not _B64TOKEN.fullmatch(token):
        raise ConfigurationError(
            f"{TOKEN_KEY} may hold only letters, digits and - . _ ~ + / (then = padding): "
            "it is sent in an Authorization header")
    _check_multiprocess()


def _check_multiprocess() -> None:
    directory = os.environ.get(MULTIPROC_ENV)
    if not directory:
        if "gunicorn" in sys.modules:
            log.warning("%s is set but %s is not: with several gunicorn workers, each scrape "
                        "shows the counts of the one worker that answered it (see the README, "
                        "Metrics)", TOKEN_KEY, MULTIPROC_ENV)
        return
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK | os.X_OK):
        raise ConfigurationError(
            f"{MULTIPROC_ENV} names {directory!r}, which is not a writable directory: create it "
            "(empty) before the workers start, or run gunicorn with "
            "-c python:checkout.gunicorn_config")
    from prometheus_client import values

    if values.ValueClass is values.MutexValue:
        raise ConfigurationError(
            f"prometheus_client was imported before {MULTIPROC_ENV} was set: its counts would "
            "stay in each process. Set it in the environment of the server process (or use "
            "gunicorn -c python:checkout.gunicorn_config)")


@contextmanager
def counting_process(app: Flask) -> Iterator[None]:
    """Around the life of a process of its own that counts (``flask checkout worker``).

    Its counts reach ``{prefix}/metrics``, served by the web processes, only through the
    multiprocess directory they read: without one it says so at its start. At its end its live
    gauges leave the directory (its counts stay in the totals), as gunicorn's ``child_exit`` does
    for a web worker (:mod:`checkout.gunicorn_config`).
    """
    directory = os.environ.get(MULTIPROC_ENV)
    if not enabled(app):
        yield
        return
    if not directory:
        log.warning("%s is set but %s is not: this process's counts (signals sent, reconciler "
                    "checks, upstream calls) never reach the web processes' metrics; give it "
                    "the directory the web server uses (see the README, Metrics)",
                    TOKEN_KEY, MULTIPROC_ENV)
        yield
        return
    try:
        yield
    finally:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid(), directory)  # type: ignore[no-untyped-call]
