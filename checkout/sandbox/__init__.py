"""The sandbox upstream: a stateful, strict simulation of the exchange service, as a Flask app.

::

    from checkout.sandbox import create_app
    app = create_app({"SANDBOX_TIME_SCALE": 0.001})     # or: flask --app checkout.sandbox run

Every path of the upstream spec answers under ``/api/...``; the sandbox's own pages live under
``/sandbox/...``. Configuration keys (defaults in :data:`DEFAULTS`): ``SANDBOX_CLIENT_ID``,
``SANDBOX_CLIENT_SECRET``, ``SANDBOX_WEBHOOK_SECRET``, ``SANDBOX_WEBHOOK_URL``,
``SANDBOX_WEBHOOK_ALLOW_LOOPBACK``, ``SANDBOX_WEBHOOK_EVENTS``, ``SANDBOX_TIME_SCALE``,
``SANDBOX_CLOCK``, ``SANDBOX_USER_ENDPOINTS``, ``SANDBOX_OUTCOME``, ``SANDBOX_KYC_OUTCOME``,
``SANDBOX_PUBLIC_URL``,
``SANDBOX_WEBHOOK_IN_PROCESS``, ``SANDBOX_LATENCY``. When started by ``flask`` (no config given),
each key may also come from an environment variable of the same name (JSON values, or plain text); a
WSGI app cannot, so ``SANDBOX_WEBHOOK_IN_PROCESS`` is for code that embeds the sandbox.
"""
from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from flask import Flask, Response, jsonify, request
from flask.json.provider import DefaultJSONProvider
from requests.adapters import BaseAdapter
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response as BaseResponse

from ..signature import InvalidSecret, decode_secret
from . import credentials
from .clock import Clock, ManualClock, Scheduler
from .kyc import DECISIONS as KYC_DECISIONS
from .orders import OUTCOMES
from .state import SandboxState
from .validation import ApiError
from .webhooks import WebhookSender

__all__ = ["create_app", "DEFAULTS"]

log = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    "SANDBOX_CLIENT_ID": credentials.CLIENT_ID,
    "SANDBOX_CLIENT_SECRET": None,
    "SANDBOX_WEBHOOK_SECRET": credentials.WEBHOOK_SECRET,
    "SANDBOX_WEBHOOK_URL": None,
    "SANDBOX_WEBHOOK_ALLOW_LOOPBACK": False,
    "SANDBOX_WEBHOOK_EVENTS": ["order"],
    "SANDBOX_TIME_SCALE": 1.0,
    # "real": time passes (scaled by SANDBOX_TIME_SCALE). "manual": it passes at the real pace and
    # moves forward when told (POST /sandbox/clock/advance, the console's buttons; tests), running
    # every timer that falls due meanwhile at once, in order.
    "SANDBOX_CLOCK": "real",
    "SANDBOX_USER_ENDPOINTS": False,
    "SANDBOX_OUTCOME": None,
    # What the review of a KYC submission decides unless the submission's own magic values say
    # otherwise: approve, reject (with a reason) or pending (until the console decides).
    "SANDBOX_KYC_OUTCOME": "approve",
    # Where browsers reach the sandbox's pages (payment page, resume page). None: the address the
    # API request came in on. An embedded sandbox answers at an address no browser can open, so its
    # host site mounts the pages somewhere public and says where here.
    "SANDBOX_PUBLIC_URL": None,
    # {base URL: requests transport adapter}: webhooks to URLs under a base go through that
    # adapter, which serves them in process (an embedding host that receives its own sandbox's
    # webhooks need not listen on a socket: checkout.embedded_sandbox gives its app's).
    "SANDBOX_WEBHOOK_IN_PROCESS": None,
    # Seconds every /api/ request waits before it is answered: the upstream's round trip as a
    # merchant's server will see it (about 0.1 from a nearby region), so that pages and their
    # timeouts can be tried against a realistic upstream. Real seconds, not SANDBOX_TIME_SCALE's.
    "SANDBOX_LATENCY": 0,
}
WEBHOOK_EVENT_KINDS = ("order", "auth", "kyc")
MAX_LATENCY = 30        # seconds: longer than any client waits, so longer is a mistake


def _from_environment() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in DEFAULTS:
        raw = os.environ.get(key)
        if raw is None:
            continue
        try:
            found[key] = json.loads(raw)
        except ValueError:
            found[key] = raw            # plain text such as a client id or a URL
    return found


def check_config(config: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the first of these settings (over :data:`DEFAULTS`) that
    cannot be used: what :func:`create_app` checks, without building the app."""
    _check_settings({**DEFAULTS, **config})


def _check_settings(cfg: Mapping[str, Any]) -> None:
    # Everything create_app refuses is refused here: the embedded sandbox is checked at the
    # host's start-up and built only on its first call.
    if not cfg["SANDBOX_WEBHOOK_SECRET"]:
        raise ValueError("SANDBOX_WEBHOOK_SECRET must not be empty")
    if cfg.get("SANDBOX_CLIENT_SECRET"):
        try:
            decode_secret(cfg["SANDBOX_CLIENT_SECRET"])
        except InvalidSecret as exc:
            raise ValueError(f"SANDBOX_CLIENT_SECRET: {exc}") from None
    if not cfg["SANDBOX_CLIENT_ID"]:
        raise ValueError("SANDBOX_CLIENT_ID must not be empty")
    scale = cfg["SANDBOX_TIME_SCALE"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError("SANDBOX_TIME_SCALE must be a positive number")
    if cfg["SANDBOX_CLOCK"] not in ("real", "manual"):
        raise ValueError('SANDBOX_CLOCK must be "real" or "manual"')
    if cfg["SANDBOX_CLOCK"] == "manual" and scale != 1:
        raise ValueError('SANDBOX_CLOCK "manual" runs at the real pace and moves when told: '
                         "leave SANDBOX_TIME_SCALE at 1")
    events = cfg["SANDBOX_WEBHOOK_EVENTS"]
    if not isinstance(events, (list, tuple, set, frozenset)) \
            or not set(events) <= set(WEBHOOK_EVENT_KINDS):
        raise ValueError(f"SANDBOX_WEBHOOK_EVENTS must be a list drawn from {WEBHOOK_EVENT_KINDS}")
    public = cfg["SANDBOX_PUBLIC_URL"]
    if public is not None and not (isinstance(public, str) and public.startswith(("http://", "https://"))):
        raise ValueError("SANDBOX_PUBLIC_URL must be an absolute http(s) URL")
    in_process = cfg["SANDBOX_WEBHOOK_IN_PROCESS"]
    if in_process is not None and not (
            isinstance(in_process, Mapping)
            and all(isinstance(base, str) and base.startswith(("http://", "https://"))
                    and isinstance(target, BaseAdapter) for base, target in in_process.items())):
        raise ValueError("SANDBOX_WEBHOOK_IN_PROCESS must map absolute http(s) base URLs to "
                         "requests transport adapters")
    outcome = cfg["SANDBOX_OUTCOME"]
    if outcome is not None and outcome not in OUTCOMES:
        raise ValueError(f"SANDBOX_OUTCOME must be one of {', '.join(OUTCOMES)}")
    latency = cfg["SANDBOX_LATENCY"]
    if isinstance(latency, bool) or not isinstance(latency, (int, float)) \
            or not 0 <= latency <= MAX_LATENCY:
        raise ValueError(f"SANDBOX_LATENCY must be a number of seconds from 0 to {MAX_LATENCY}")
    kyc_outcome = cfg["SANDBOX_KYC_OUTCOME"]
    if kyc_outcome is not None and kyc_outcome not in KYC_DECISIONS:
        raise ValueError(f"SANDBOX_KYC_OUTCOME must be one of {', '.join(KYC_DECISIONS)}")


def _register_error_handlers(app: Flask) -> None:
    """Errors are JSON ``{message}`` (or the upstream's own body); never a traceback."""

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Response:
        response = jsonify(error.body)
        response.status_code = error.status
        return response

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> BaseResponse:
        response = error.get_response()     # keeps headers such as Allow on a 405
        response.data = json.dumps({"message": error.description or error.name})
        response.content_type = "application/json"
        return response

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> BaseResponse:
        if isinstance(error, HTTPException):
            return http_error(error)
        log.exception("sandbox: unhandled error")
        response = jsonify(message="Internal server error")
        response.status_code = 500
        return response


def _add_latency(app: Flask) -> None:
    """``SANDBOX_LATENCY``: every API answer (an error too) comes that much later, as over a
    network; the sandbox's own pages do not wait."""
    latency = float(app.config["SANDBOX_LATENCY"])
    if not latency:
        return

    @app.before_request
    def wait() -> None:
        if request.path.startswith("/api/"):
            time.sleep(latency)


def _register_blueprints(app: Flask) -> None:
    from . import (
        api_kyc,
        api_legacy,
        api_offramp,
        api_onramp,
        api_util,
        console_kyc,
        console_orders,
        wallet,
    )
    from .console import console_bp

    app.register_blueprint(api_onramp.bp)
    app.register_blueprint(api_legacy.bp)
    app.register_blueprint(api_offramp.bp)
    app.register_blueprint(api_util.bp)
    app.register_blueprint(api_kyc.bp)          # /api/kyc/* and /api/user/*
    app.register_blueprint(console_orders.bp)
    app.register_blueprint(wallet.bp)
    app.register_blueprint(console_kyc.bp)     # /sandbox/kyc (kycUrl) and the KYC console
    app.register_blueprint(console_bp)


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build a sandbox upstream app; ``config`` overrides :data:`DEFAULTS`."""
    # Its own templates and static files, in its package: it shares none with the checkout.
    app = Flask(__name__, template_folder="templates", static_folder=None)
    assert isinstance(app.json, DefaultJSONProvider)    # a plain Flask app has Flask's own
    app.json.sort_keys = False          # keep fields in the spec's order, as the upstream sends them
    app.config.update(DEFAULTS)
    app.config.update(_from_environment() if config is None else config)
    _check_settings(app.config)

    clock = ManualClock() if app.config["SANDBOX_CLOCK"] == "manual" \
        else Clock(float(app.config["SANDBOX_TIME_SCALE"]))
    scheduler = Scheduler(clock)
    sender = WebhookSender(app.config["SANDBOX_WEBHOOK_SECRET"], scheduler=scheduler,
                           allow_loopback=bool(app.config["SANDBOX_WEBHOOK_ALLOW_LOOPBACK"]),
                           in_process=app.config["SANDBOX_WEBHOOK_IN_PROCESS"])
    state = SandboxState(app=app, clock=clock, scheduler=scheduler, webhooks=sender,
                         webhook_url=app.config["SANDBOX_WEBHOOK_URL"],
                         webhook_events=frozenset(app.config["SANDBOX_WEBHOOK_EVENTS"]),
                         user_endpoints=bool(app.config["SANDBOX_USER_ENDPOINTS"]))
    state.orders.default_outcome = app.config["SANDBOX_OUTCOME"] or state.orders.default_outcome
    app.extensions["sandbox"] = state

    from . import auth

    _add_latency(app)           # first: a refused request takes its round trip too
    auth.init_app(app)
    _register_error_handlers(app)
    _register_blueprints(app)
    return app
