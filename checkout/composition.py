"""The composition root: the one place that builds an app's collaborators (its engine, session
store, upstream client, the embedded sandbox when no upstream is configured, reference-data
caches, webhook dispatcher and the small per-process schedules) and hands them to the holder,
:class:`checkout.state.CheckoutState`. ``Checkout.init_app`` calls :func:`build` once per app.
"""
from __future__ import annotations

import click
from flask import Flask
from flask.cli import FlaskGroup
from sqlalchemy.engine import Engine

from . import config, embedded_sandbox
from .assets import shipped, themed
from .desk.journal import Journal
from .desk.settings import DeskSettings
from .flows import OfframpFlow, OnrampFlow
from .journey.flow import Flow
from .journey.just_created import JustCreated
from .journey.quote_cache import QuoteCache, merchant_key
from .journey.settings import JourneySettings
from .keys import derived_key
from .kyc.standing import KycStanding
from .metrics import Metrics
from .metrics import enabled as metrics_enabled
from .pacing import Schedule
from .paths import STATIC
from .ratelimits import RateLimits
from .readiness import ReadinessChecks
from .reference import OfframpCatalog, OnrampCatalog, TTLCache, UtilCatalog
from .sessions import SessionStore
from .state import CheckoutState
from .store import make_engine
from .store.schema import prepare
from .store.writing import open_writer_turn
from .theme import stylesheet, theme_of
from .upstream import UpstreamClient
from .upstream.breaker import CLOSED, Breakers, breaker_told
from .upstream.inprocess import mount_wsgi_app
from .views import context as session_context
from .views import offramp as offramp_pages
from .views import onramp as onramp_pages
from .webhooks import dispatcher
from .webhooks.background import Dispatcher
from .webhooks.orders import OrderStatuses
from .webhooks.reconcile import Reconciler
from .webhooks.refusals import RefusalLog


def build(app: Flask) -> CheckoutState:
    """Everything the checkout needs for ``app``, from its (validated) configuration."""
    engine = make_engine(app.config["CHECKOUT_DATABASE_URL"])
    unchecked = _loading_for_a_flask_command()
    if not unchecked:
        try:
            prepare(engine, auto_upgrade=bool(app.config["CHECKOUT_DATABASE_AUTO_UPGRADE"]))
            open_writer_turn(engine)
        except BaseException:
            engine.dispose()
            raise
    counts = _metrics(app, engine)
    sandbox = embedded_sandbox.EmbeddedSandbox(app) if config.uses_sandbox(app) else None
    base_url = app.config["CHECKOUT_API_BASE_URL"] if sandbox is None \
        else embedded_sandbox.EMBEDDED_SANDBOX_URL
    every_call = app.config.get("CHECKOUT_HTTP_TIMEOUT")
    upstream = UpstreamClient(
        base_url,
        client_id=app.config["CHECKOUT_CLIENT_ID"],
        client_secret=app.config.get("CHECKOUT_CLIENT_SECRET"),
        timeout=tuple(every_call) if every_call is not None else None,
        timeouts={kind: tuple(pair) for kind, pair
                  in app.config["CHECKOUT_UPSTREAM_TIMEOUTS"].items()},
        on_call=counts.upstream_call,
        breakers=Breakers(config.breaker_settings(app),
                          on_change=breaker_told(counts.upstream_breaker)),
        max_in_flight=int(app.config["CHECKOUT_UPSTREAM_MAX_IN_FLIGHT"]),
    )
    if sandbox is not None:
        mount_wsgi_app(upstream.http, base_url, sandbox,
                       environ_extras=embedded_sandbox.public_base)
    ttl = float(app.config["CHECKOUT_REFERENCE_TTL"])

    def reference_cache() -> TTLCache:
        return TTLCache(ttl)

    settings = JourneySettings(
        # In the upstream's time: an embedded sandbox that runs faster has its quotes live as
        # much shorter (embedded_sandbox.pace).
        quote_max_age=float(app.config["CHECKOUT_QUOTE_MAX_AGE"]) * embedded_sandbox.pace(app),
        create_grace=float(app.config["CHECKOUT_CREATE_GRACE"]),
        digest_key=derived_key(app.config["CHECKOUT_LAUNCH_SECRET"], b"checkout review digest v1"))
    ratelimits = RateLimits.create(app)
    theme = theme_of(app.config.get("CHECKOUT_THEME"))
    # Filled below: the flows need the session store, whose journal indexes their orders.
    flows: dict[str, Flow] = {}
    journal = Journal(engine, str(app.config["CHECKOUT_LAUNCH_SECRET"]), counts, flows,
                      steps=desk_enabled(app) or counts.enabled)
    sessions = SessionStore(engine, on_open=journal.session_opened, on_order=journal.order_created,
                            on_saved=session_context.saved)
    util_catalog = UtilCatalog(upstream, reference_cache())
    kyc = KycStanding(engine, upstream, util_catalog, sessions, app.config)
    background = Dispatcher(app, dispatcher.sweep)
    statuses = OrderStatuses(engine, upstream, app.config, notify=background.notify)
    readiness = ReadinessChecks(lambda: upstream.probe(), ratelimits.store_answers)

    def outage_starts(_breaker: object, old: str, _new: str) -> None:
        # Checked at once, rather than at the end of the last check's cache time.
        if old == CLOSED:
            readiness.check_soon()

    upstream.transport.breakers.listen(outage_starts)
    health_seconds = float(app.config["CHECKOUT_HEALTH_CACHE_SECONDS"])
    counts.follow_readiness(lambda: readiness.for_scrape(health_seconds))
    flows.update(onramp=OnrampFlow(upstream, OnrampCatalog(upstream, reference_cache()),
                                   onramp_pages.steps(kyc), settings),
                 offramp=OfframpFlow(upstream, OfframpCatalog(upstream, reference_cache()),
                                     offramp_pages.steps(kyc), settings))
    return CheckoutState(
        engine=engine,
        sessions=sessions,
        upstream=upstream,
        embedded_sandbox=sandbox,
        util_catalog=util_catalog,
        kyc=kyc,
        flows=flows,
        journal=journal,
        refusals=RefusalLog(engine),
        desk=DeskSettings.of(app.config),
        dispatcher=background,
        order_statuses=statuses,
        reconciler=Reconciler(statuses, app.config, on_check=counts.reconciler_check),
        purge_schedule=Schedule(),
        ratelimits=ratelimits,
        quote_cache=QuoteCache(float(app.config["CHECKOUT_QUOTE_CACHE_SECONDS"]),
                               merchant_key(base_url, app.config["CHECKOUT_CLIENT_ID"])),
        just_created=JustCreated(), metrics=counts, schema_unchecked=unchecked,
        readiness=readiness,
        theme=theme, assets=themed(shipped(STATIC / "checkout"), stylesheet(theme)))


def desk_enabled(app: Flask) -> bool:
    """Whether the app has the merchant's desk (``CHECKOUT_DESK_ACCESS`` set)."""
    return app.config.get("CHECKOUT_DESK_ACCESS") is not None


def _loading_for_a_flask_command() -> bool:
    """Whether the ``flask`` command is loading the app to find a command in it.

    ``flask checkout db upgrade`` must work on a database that start-up refuses, and ``flask
    checkout db current`` must show the database as it is, not as start-up would leave it: then the
    schema is checked at the app's first use instead (:func:`get_state`, and the ``checkout``
    command group for its other commands). ``flask run`` and a WSGI server load the app
    otherwise, and start-up checks as usual."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and isinstance(ctx.command, FlaskGroup)


def _metrics(app: Flask, engine: Engine) -> Metrics:
    """The app's metrics: counting ones when ``CHECKOUT_METRICS_TOKEN`` is set (``engine``: where
    the stored orders are counted); prometheus_client is not even imported otherwise."""
    if not metrics_enabled(app):
        return Metrics()
    from .metrics.prometheus import PrometheusMetrics

    return PrometheusMetrics.create(app, engine)
