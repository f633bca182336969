"""The metric families (prometheus_client), the stored orders counted at scrape time, and the
text a scrape gets. Imported only when ``CHECKOUT_METRICS_TOKEN`` is set.

Names and labels (the README's "Metrics" lists them for operators):

``checkout_upstream_request_duration_seconds{method, endpoint, status}``  histogram, one
    observation per attempt (a retried GET is two); ``_count`` is the number of calls
``checkout_webhook_delivery_duration_seconds{result}``  histogram: from the receiver's start to
    its answer; ``_count`` is the number of deliveries by result
``checkout_sessions_opened_total{flow, start}``, ``checkout_orders_created_total{flow}``
``checkout_order_status_changes_total{flow, status}``  one per ``order_status_changed`` sent
``checkout_ratelimited_requests_total{limit}``, ``checkout_reconciler_checks_total{flow, result}``
``checkout_orders{flow, status}``  gauge: the stored orders (``checkout_orders`` table) now
``checkout_upstream_breaker{family, state}``  gauge: the upstream's breakers open or half-open
``checkout_upstream_breaker_opened_total{family}``  one per outage of a breaker (it left closed)
``checkout_upstream_ready``, ``checkout_ratelimit_store_up``  gauges read at scrape time from the
    answering process's readiness checks

A ``status`` or ``flow`` label is one the checkout knows, else ``other``: see :func:`status_label`.
"""
from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec

from flask import Flask
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from sqlalchemy.engine import Engine

from .. import signals
from ..flows import FLOW_TYPES
from ..ratelimits import DEFAULT_LIMITS
from ..readiness import MEMORY, OK, UNKNOWN
from ..upstream.breaker import CLOSED
from ..webhooks.orders import (
    OFFRAMP_TO_WEBHOOK,
    ONRAMP_TO_WEBHOOK,
    WEBHOOK_STATUSES,
    count_by_status,
)
from . import MULTIPROC_ENV, Metrics

if TYPE_CHECKING:
    from ..readiness import Readiness

log = logging.getLogger(__name__)

# Upstream calls: a fast answer is tens of milliseconds; the read timeout is 20 s by default.
UPSTREAM_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)
# An acknowledgement is one INSERT: milliseconds; the sender gives up after some seconds.
ACK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# A stored order's status and flow come from signed webhooks too, which carry whatever the sender
# wrote: an e-mail address, a new string in each delivery (a series each, kept for ever by every
# scraper). Only the values the checkout knows are labels of their own: the webhook statuses
# (upstream notes 4), the on-ramp and off-ramp orders' own (spec 3.1, 3.3), the checkout's flows.
KNOWN_STATUSES = frozenset(WEBHOOK_STATUSES) | ONRAMP_TO_WEBHOOK.keys() | OFFRAMP_TO_WEBHOOK.keys()
OTHER = "other"


def status_label(status: str | None) -> str:
    """``status`` as a label: itself when known, else ``other``."""
    return status if status in KNOWN_STATUSES else OTHER


def flow_label(flow: str | None) -> str:
    """``flow`` as a label: ``onramp``, ``offramp``, ``unknown`` (none stored) or ``other``."""
    return "unknown" if flow is None else flow if flow in FLOW_TYPES else OTHER


@dataclass(frozen=True)
class Families:
    """The metric objects that count events."""

    upstream: Histogram
    webhooks: Histogram
    sessions: Counter
    orders_created: Counter
    funnel: Counter
    status_changes: Counter
    rate_limited: Counter
    reconciler: Counter
    breaker: Gauge
    breaker_opened: Counter

    @classmethod
    def create(cls, registry: CollectorRegistry | None) -> Families:
        return cls(
            upstream=Histogram(
                "checkout_upstream_request_duration_seconds",
                "Upstream calls (each attempt) by endpoint template and HTTP status (or timeout, "
                "unreachable), and how long they took",
                ["method", "endpoint", "status"], buckets=UPSTREAM_BUCKETS, registry=registry),
            webhooks=Histogram(
                "checkout_webhook_delivery_duration_seconds",
                "Webhook deliveries by result, and the time to their acknowledgement",
                ["result"], buckets=ACK_BUCKETS, registry=registry),
            sessions=Counter(
                "checkout_sessions_opened", "Checkout sessions opened, by flow and start "
                "(launch token or unsigned)", ["flow", "start"], registry=registry),
            orders_created=Counter(
                "checkout_orders_created", "Orders created upstream by the checkout, by flow",
                ["flow"], registry=registry),
            funnel=Counter(
                "checkout_funnel_sessions", "Sessions that reached each step of each flow, each "
                "counted once per step: where people stop", ["flow", "step"],
                registry=registry),
            status_changes=Counter(
                "checkout_order_status_changes", "Orders that reached a status "
                "(order_status_changed sent), by flow and status", ["flow", "status"],
                registry=registry),
            rate_limited=Counter(
                "checkout_ratelimited_requests", "Requests refused by one of the checkout's "
                "rate limits, by limit", ["limit"], registry=registry),
            reconciler=Counter(
                "checkout_reconciler_checks", "Orders the reconciler asked the upstream about, "
                "by flow and result (moved: a status the webhooks had not brought)",
                ["flow", "result"], registry=registry),
            # Breakers not closed, by family and state, summed over the live workers: how many
            # corridors (or families) of the upstream each worker refuses to call right now.
            breaker=Gauge(
                "checkout_upstream_breaker", "Breakers of the upstream open (calls refused at "
                "once) or half_open (one trial call), by family of endpoints, over the processes",
                ["family", "state"], multiprocess_mode="livesum", registry=registry),
            breaker_opened=Counter(
                "checkout_upstream_breaker_opened", "Outages of a family of the upstream's "
                "endpoints (or of one corridor's prices or limits): times a process's breaker "
                "opened, once per outage", ["family"], registry=registry),
        )


# Multiprocess mode keeps values in per-process files keyed by name and labels: two sets of
# metric objects in one process would overwrite each other's counts. So one set per process,
# shared by its apps.
_process_families: Families | None = None
_process_lock = threading.Lock()


def _families_of_process() -> Families:
    global _process_families
    with _process_lock:
        if _process_families is None:
            _process_families = Families.create(registry=None)
        return _process_families


class ReadinessGauges:
    """``checkout_upstream_ready`` and ``checkout_ratelimit_store_up``, read at scrape time from
    the readiness checks of the process that answers the scrape (checkout.readiness): what its
    ``/healthz/ready`` would say now, never a value left over from a check long ago, nor 0 in a
    worker that never checked. What is not known (no check has answered yet) is left out."""

    UPSTREAM = ("checkout_upstream_ready", "1 when the upstream answered the last readiness "
                "check, 0 when it did not (unavailable, credentials refused)")
    STORE = ("checkout_ratelimit_store_up", "1 when the rate-limit store answered the last "
             "readiness check (or is the process's memory), 0 when it did not")

    def __init__(self) -> None:
        self.seen: Callable[[], Readiness] | None = None

    def describe(self) -> Iterable[Metric]:
        # Registering asks for the names: without this it would run a check.
        return [GaugeMetricFamily(*self.UPSTREAM), GaugeMetricFamily(*self.STORE)]

    def collect(self) -> Iterator[Metric]:
        if self.seen is None:
            return
        seen = self.seen()
        if seen.upstream != UNKNOWN:
            yield GaugeMetricFamily(*self.UPSTREAM, value=1 if seen.upstream == OK else 0)
        if seen.ratelimit_store != UNKNOWN:
            yield GaugeMetricFamily(*self.STORE,
                                    value=1 if seen.ratelimit_store in (OK, MEMORY) else 0)


class StoredOrders:
    """``checkout_orders{flow, status}``, counted in the database at scrape time: right whatever
    worker recorded each status. The count is a scan of the table, so an answer is reused for
    ``ttl`` seconds, and one scrape at a time counts."""

    NAME = "checkout_orders"
    HELP = "Orders stored by the checkout (checkout_orders), by flow and current status"

    def __init__(self, engine: Engine, ttl: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.engine = engine
        self.ttl = ttl
        self.clock = clock
        self._lock = threading.Lock()
        self._counted: tuple[float, list[tuple[str | None, str, int]]] | None = None

    def describe(self) -> Iterable[Metric]:
        # Registering asks for the names: without this it would run the query.
        return [GaugeMetricFamily(self.NAME, self.HELP, labels=["flow", "status"])]

    def collect(self) -> Iterator[Metric]:
        rows = self._rows()
        if rows is None:
            return
        family = GaugeMetricFamily(self.NAME, self.HELP, labels=["flow", "status"])
        counts: dict[tuple[str, str], int] = {}
        for flow, status, count in rows:     # the statuses nobody knows are added up as one
            labels = (flow_label(flow), status_label(status))
            counts[labels] = counts.get(labels, 0) + count
        for labels, count in counts.items():
            family.add_metric(list(labels), count)
        yield family

    def _rows(self) -> list[tuple[str | None, str, int]] | None:
        with self._lock:
            now = self.clock()
            if self._counted is not None and now - self._counted[0] < self.ttl:
                return self._counted[1]
            try:
                rows = count_by_status(self.engine)
            except Exception:  # the database is down: the other families still answer
                log.warning("metrics: the stored orders could not be counted", exc_info=True)
                return None
            self._counted = (now, rows)
            return rows


P = ParamSpec("P")


def _never_raises(count: Callable[P, None]) -> Callable[P, None]:
    """A counting point that cannot fail what it counts: it runs after the event (an upstream call
    that created an order, a delivery already stored), and a metric that fails to write (the
    multiprocess directory removed by a tmp cleaner, a full disk) must not turn that into an
    error. The first failure is logged with its cause; later ones quietly."""
    warned = False

    @functools.wraps(count)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        nonlocal warned
        try:
            count(*args, **kwargs)
        except Exception:
            log.log(logging.DEBUG if warned else logging.WARNING,
                    "metrics: %s could not be counted", count.__name__, exc_info=not warned)
            warned = True

    return guarded


class PrometheusMetrics(Metrics):
    """Counts into prometheus_client, and renders a scrape (:meth:`exposition`)."""

    enabled = True

    def __init__(self, families: Families, orders: StoredOrders,
                 registry: CollectorRegistry | None, multiprocess_dir: str | None) -> None:
        self.families = families
        self.orders = orders
        self.ready = ReadinessGauges()
        if registry is not None:
            registry.register(self.ready)
        self.registry = registry            # None in multiprocess mode: built per scrape
        self.multiprocess_dir = multiprocess_dir

    @classmethod
    def create(cls, app: Flask, engine: Engine) -> PrometheusMetrics:
        orders = StoredOrders(engine, float(app.config["CHECKOUT_METRICS_ORDERS_CACHE_SECONDS"]))
        directory = os.environ.get(MULTIPROC_ENV) or None
        if directory is not None:
            metrics = cls(_families_of_process(), orders, None, directory)
        else:
            registry = CollectorRegistry(auto_describe=True)
            registry.register(orders)
            metrics = cls(Families.create(registry), orders, registry, None)
        # The signal is sent once per order and status by whichever process records it.
        signals.order_status_changed.connect(metrics._status_changed, sender=app)
        return metrics

    def exposition(self, accept: str | None) -> tuple[bytes, str]:
        """The scrape's body and content type (the Prometheus text format, or OpenMetrics when
        the scraper asks for it)."""
        registry = self.registry
        if registry is None:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]
            registry.register(self.orders)
            registry.register(self.ready)
        encode, content_type = choose_encoder(accept or "")
        return encode(registry), content_type

    # -- counting points (see checkout.metrics.Metrics) -------------------------------------------

    @_never_raises
    def upstream_call(self, method: str, endpoint: str, status: str, seconds: float) -> None:
        self.families.upstream.labels(method, endpoint, status).observe(seconds)

    @_never_raises
    def webhook_delivery(self, result: str, seconds: float) -> None:
        self.families.webhooks.labels(result).observe(seconds)

    @_never_raises
    def session_opened(self, flow: str, start: str) -> None:
        self.families.sessions.labels(flow, start).inc()

    @_never_raises
    def step_reached(self, flow: str, step: str) -> None:
        self.families.funnel.labels(flow, step).inc()

    @_never_raises
    def order_created(self, flow: str) -> None:
        self.families.orders_created.labels(flow).inc()

    @_never_raises
    def rate_limited(self, limit: str) -> None:
        # A name of ours, or one bucket for anything else: never a value from the request.
        self.families.rate_limited.labels(limit if limit in DEFAULT_LIMITS else "other").inc()

    @_never_raises
    def reconciler_check(self, flow: str, result: str) -> None:
        self.families.reconciler.labels(flow, result).inc()

    @_never_raises
    def upstream_breaker(self, family: str, old: str, new: str) -> None:
        if old != CLOSED:
            self.families.breaker.labels(family, old).dec()
        if new != CLOSED:
            self.families.breaker.labels(family, new).inc()
        if old == CLOSED:                   # an outage starts (the log says so once too)
            self.families.breaker_opened.labels(family).inc()

    def follow_readiness(self, seen: Callable[[], Readiness]) -> None:
        self.ready.seen = seen

    @_never_raises
    def _status_changed(self, _sender: Any, *, flow: str | None, status: str,
                        **_details: Any) -> None:
        self.families.status_changes.labels(flow_label(flow), status_label(status)).inc()
