"""Per-app state of the extension, kept in ``app.extensions["checkout"]`` and nowhere else: the
holder of the app's collaborators, and their lookup (:func:`get_state`, :func:`state_of`).

It holds and does not build: :mod:`checkout.composition` builds it. Nothing here is a view.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import Flask, current_app
from sqlalchemy.engine import Engine

from .store.schema import prepare

if TYPE_CHECKING:
    from .assets import Assets
    from .desk.journal import Journal
    from .desk.settings import DeskSettings
    from .embedded_sandbox import EmbeddedSandbox
    from .journey.flow import Flow
    from .journey.just_created import JustCreated
    from .journey.quote_cache import QuoteCache
    from .kyc.standing import KycStanding
    from .metrics import Metrics
    from .pacing import Schedule
    from .ratelimits import RateLimits
    from .readiness import ReadinessChecks
    from .reference import UtilCatalog
    from .sessions import CheckoutSession, SessionStore
    from .theme import Theme
    from .upstream.client import UpstreamClient
    from .webhooks.background import Dispatcher
    from .webhooks.orders import OrderStatuses
    from .webhooks.reconcile import Reconciler
    from .webhooks.refusals import RefusalLog


@dataclass
class CheckoutState:
    engine: Engine
    sessions: SessionStore
    upstream: UpstreamClient
    # The embedded sandbox upstream, when no base URL is set (built on its first call).
    embedded_sandbox: EmbeddedSandbox | None
    util_catalog: UtilCatalog
    kyc: KycStanding                # where the app's users stand in their verification
    # By name: each built with the upstream client, its catalog (flow.catalog()) and the KYC
    # standing, with which it builds its steps (flow.journey).
    flows: dict[str, Flow]
    # Sessions opened, steps reached, orders created: told to the metrics and the desk.
    journal: Journal
    dispatcher: Dispatcher
    refusals: RefusalLog            # webhook deliveries refused, noted without their body
    order_statuses: OrderStatuses   # the orders' stored statuses, refreshed from the upstream
    purge_schedule: Schedule
    reconciler: Reconciler           # asks the upstream about orders whose webhooks were lost
    ratelimits: RateLimits
    quote_cache: QuoteCache
    metrics: Metrics        # counts nothing unless CHECKOUT_METRICS_TOKEN is set
    # Create answers waiting for the payment page the create sends the user to.
    just_created: JustCreated
    # The upstream's and the rate-limit store's last answers (/healthz, /healthz/ready).
    readiness: ReadinessChecks
    # The merchant's look, checked at start-up (CHECKOUT_THEME).
    theme: Theme
    # The static files served, made once at start-up with the theme's stylesheet.
    assets: Assets
    # The merchant's desk's settings; None: the app has no desk (CHECKOUT_DESK_ACCESS unset).
    desk: DeskSettings | None = None
    # Said once per process: pages served on an untrusted host get no absolute link.
    warned_public_url: bool = False
    # The schema's revision is still to be checked (or upgraded): the ``flask`` command loaded the
    # app to find one of its commands (see ``composition._loading_for_a_flask_command``).
    schema_unchecked: bool = False

    @property
    def sandbox(self) -> Flask | None:
        """The embedded sandbox app (built now if it was not yet), or None with a real upstream."""
        return self.embedded_sandbox.app if self.embedded_sandbox is not None else None

    def close(self) -> None:
        """Give back the database connections (an app thrown away, or a test's)."""
        self.engine.dispose()

    def ensure_schema(self, app: Flask) -> None:
        """What start-up does with the schema, once: upgrade it or refuse it (``SchemaError``)."""
        if self.schema_unchecked:
            prepare(self.engine, auto_upgrade=bool(app.config["CHECKOUT_DATABASE_AUTO_UPGRADE"]))
            from .store.writing import open_writer_turn

            open_writer_turn(self.engine)
            self.schema_unchecked = False


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


def flow_named(name: str) -> Flow:
    """The app's flow called ``name``."""
    return get_state().flows[name]


def flow_of(session: CheckoutSession) -> Flow:
    """The app's flow of ``session``."""
    return flow_named(session.flow)


def real_app(app: Flask) -> Flask:
    """The app itself, not ``current_app``'s proxy: blinker matches senders by identity."""
    unwrap: Any = getattr(app, "_get_current_object", None)
    return unwrap() if unwrap is not None else app
