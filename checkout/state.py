"""Per-app state of the extension, kept in ``app.extensions["checkout"]`` and nowhere else.

This is the composition root: the one place that builds the app's engine, session store, upstream
client (the embedded sandbox when no upstream is configured), reference-data caches, webhook
dispatcher and the small per-process schedules. Nothing here is a view.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
from flask import Flask, current_app
from flask.cli import FlaskGroup
from sqlalchemy.engine import Engine

from . import config
from .metrics import Metrics
from .metrics import create as create_metrics
from .readiness import ReadinessChecks, upstream_answers
from .sessions import SessionStore
from .store import make_engine
from .store.schema import prepare

if TYPE_CHECKING:
    from .journey.just_created import JustCreated
    from .journey.quote_cache import QuoteCache
    from .ratelimits import RateLimits
    from .reference import OfframpCatalog, OnrampCatalog, UtilCatalog
    from .session_purge import PurgeSchedule
    from .upstream.client import UpstreamClient
    from .webhooks.dispatcher import Dispatcher
    from .webhooks.intake import Intake
    from .webhooks.reconcile import CallBudget


@dataclass
class CheckoutState:
    engine: Engine
    intake: Intake                  # webhook deliveries into the engine's database
    sessions: SessionStore
    upstream: UpstreamClient
    sandbox: Flask | None           # the embedded sandbox upstream, when no base URL is set
    onramp_catalog: OnrampCatalog
    offramp_catalog: OfframpCatalog
    util_catalog: UtilCatalog
    dispatcher: Dispatcher
    purge_schedule: PurgeSchedule
    reconcile_budget: CallBudget     # the reconciler's upstream calls per minute, this process
    reconcile_schedule: PurgeSchedule  # when this process's dispatcher last reconciled
    ratelimits: RateLimits
    quote_cache: QuoteCache
    metrics: Metrics        # counts nothing unless CHECKOUT_METRICS_TOKEN is set
    # Create answers waiting for the payment page the create sends the user to.
    just_created: JustCreated
    # The upstream's and the rate-limit store's last answers (/healthz, /healthz/ready).
    readiness: ReadinessChecks
    # Said once per process: pages served on an untrusted host get no absolute link.
    warned_public_url: bool = False
    # The schema's revision is still to be checked (or upgraded): the ``flask`` command loaded the
    # app to find one of its commands (see ``_loading_for_a_flask_command``).
    schema_unchecked: bool = False

    def close(self) -> None:
        """Give back the database connections: the intake's, then the pool's (an app thrown away,
        or a test's). Each process's webhook intake keeps one connection while the app lives."""
        self.intake.close()
        self.engine.dispose()

    def ensure_schema(self, app: Flask) -> None:
        """What start-up does with the schema, once: upgrade it or refuse it (``SchemaError``)."""
        if self.schema_unchecked:
            prepare(self.engine, auto_upgrade=bool(app.config["CHECKOUT_DATABASE_AUTO_UPGRADE"]))
            from .webhooks.store import open_writer_turn

            open_writer_turn(self.engine)
            self.schema_unchecked = False

    @classmethod
    def create(cls, app: Flask) -> CheckoutState:
        from . import embedded_sandbox
        from .journey.just_created import JustCreated
        from .journey.quote_cache import QuoteCache, merchant_key
        from .ratelimits import RateLimits
        from .reference import OfframpCatalog, OnrampCatalog, TTLCache, UtilCatalog
        from .session_purge import PurgeSchedule
        from .upstream import UpstreamClient
        from .upstream.breaker import Breaker, breaker_told
        from .upstream.inprocess import mount_wsgi_app
        from .webhooks.dispatcher import Dispatcher
        from .webhooks.intake import Intake
        from .webhooks.reconcile import CallBudget
        from .webhooks.store import open_writer_turn

        engine = make_engine(app.config["CHECKOUT_DATABASE_URL"])
        unchecked = _loading_for_a_flask_command()
        if not unchecked:
            try:
                prepare(engine, auto_upgrade=bool(app.config["CHECKOUT_DATABASE_AUTO_UPGRADE"]))
                open_writer_turn(engine)
            except BaseException:
                engine.dispose()
                raise
        counts = create_metrics(app, engine)
        sandbox_app = embedded_sandbox.create(app) if config.uses_sandbox(app) else None
        base_url = app.config["CHECKOUT_API_BASE_URL"] if sandbox_app is None \
            else config.EMBEDDED_SANDBOX_URL
        every_call = app.config.get("CHECKOUT_HTTP_TIMEOUT")
        upstream = UpstreamClient(
            base_url,
            client_id=app.config["CHECKOUT_CLIENT_ID"],
            client_secret=app.config.get("CHECKOUT_CLIENT_SECRET"),
            timeout=tuple(every_call) if every_call is not None else None,
            timeouts={kind: tuple(pair) for kind, pair
                      in app.config["CHECKOUT_UPSTREAM_TIMEOUTS"].items()},
            on_call=counts.upstream_call,
            breaker=Breaker(failures=int(app.config["CHECKOUT_BREAKER_FAILURES"]),
                            reset_after=float(app.config["CHECKOUT_BREAKER_RESET_SECONDS"]),
                            on_change=breaker_told(counts)),
            max_in_flight=int(app.config["CHECKOUT_UPSTREAM_MAX_IN_FLIGHT"]),
        )
        counts.upstream_breaker(upstream.transport.breaker.snapshot().state)
        if sandbox_app is not None:
            mount_wsgi_app(upstream.http, base_url, sandbox_app,
                           environ_extras=embedded_sandbox.public_base)
        ttl = float(app.config["CHECKOUT_REFERENCE_TTL"])
        refusal = upstream.transport.breaker.refusal

        def reference_cache() -> TTLCache:
            return TTLCache(ttl, refuse_waiting=refusal)

        ratelimits = RateLimits.create(app)
        return cls(engine=engine, intake=Intake(engine),
                   sessions=SessionStore(engine, on_open=counts.session_opened),
                   upstream=upstream,
                   sandbox=sandbox_app,
                   onramp_catalog=OnrampCatalog(upstream, reference_cache()),
                   offramp_catalog=OfframpCatalog(upstream, reference_cache()),
                   util_catalog=UtilCatalog(upstream, reference_cache()),
                   dispatcher=Dispatcher(app), purge_schedule=PurgeSchedule(),
                   reconcile_budget=CallBudget(), reconcile_schedule=PurgeSchedule(),
                   ratelimits=ratelimits,
                   quote_cache=QuoteCache(
                       float(app.config["CHECKOUT_QUOTE_CACHE_SECONDS"]),
                       merchant_key(base_url, app.config["CHECKOUT_CLIENT_ID"])),
                   just_created=JustCreated(), metrics=counts, schema_unchecked=unchecked,
                   readiness=ReadinessChecks(lambda: upstream_answers(upstream),
                                             ratelimits.store_answers,
                                             on_checked=counts.readiness))


def _loading_for_a_flask_command() -> bool:
    """Whether the ``flask`` command is loading the app to find a command in it.

    ``flask checkout db upgrade`` must work on a database that start-up refuses, and ``flask
    checkout db current`` must show the database as it is, not as start-up would leave it: then the
    schema is checked at the app's first use instead (:func:`get_state`, and the ``checkout``
    command group for its other commands). ``flask run`` and a WSGI server load the app
    otherwise, and start-up checks as usual."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and isinstance(ctx.command, FlaskGroup)


def get_state() -> CheckoutState:
    state: CheckoutState = current_app.extensions["checkout"]
    if state.schema_unchecked:
        state.ensure_schema(current_app)
    return state


def state_of(app: Flask) -> CheckoutState:
    state: CheckoutState = app.extensions["checkout"]
    if state.schema_unchecked:
        state.ensure_schema(app)
    return state


def real_app(app: Flask) -> Flask:
    """The app itself, not ``current_app``'s proxy: blinker matches senders by identity."""
    unwrap: Any = getattr(app, "_get_current_object", None)
    return unwrap() if unwrap is not None else app
