"""Per-app state of the extension, kept in ``app.extensions["checkout"]``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app
from sqlalchemy.engine import Engine

from . import config
from .sessions import SessionStore
from .store import connect


@dataclass
class CheckoutState:
    engine: Engine
    sessions: SessionStore
    upstream: Any                   # checkout.upstream.UpstreamClient
    sandbox: Flask | None           # the embedded sandbox upstream, when no base URL is set

    @classmethod
    def create(cls, app: Flask) -> "CheckoutState":
        from .upstream import UpstreamClient
        from .upstream.inprocess import mount_wsgi_app

        engine = connect(app.config["CHECKOUT_DATABASE_URL"])
        sandbox_app = None
        base_url = app.config["CHECKOUT_API_BASE_URL"]
        if config.uses_sandbox(app):
            from .sandbox import create_app as create_sandbox

            sandbox_config = {
                "SANDBOX_CLIENT_ID": app.config["CHECKOUT_CLIENT_ID"],
                "SANDBOX_CLIENT_SECRET": app.config.get("CHECKOUT_CLIENT_SECRET"),
                "SANDBOX_WEBHOOK_SECRET": app.config["CHECKOUT_WEBHOOK_SECRET"],
                # The embedded sandbox delivers webhooks to this same process on loopback.
                "SANDBOX_WEBHOOK_ALLOW_LOOPBACK": True,
            }
            sandbox_config.update(app.config.get("CHECKOUT_SANDBOX") or {})
            sandbox_app = create_sandbox(sandbox_config)
            base_url = config.EMBEDDED_SANDBOX_URL
        upstream = UpstreamClient(
            base_url,
            client_id=app.config["CHECKOUT_CLIENT_ID"],
            client_secret=app.config.get("CHECKOUT_CLIENT_SECRET"),
            timeout=tuple(app.config["CHECKOUT_HTTP_TIMEOUT"]),
        )
        if sandbox_app is not None:
            from .views.sandbox_pages import public_base

            mount_wsgi_app(upstream.http, base_url, sandbox_app, environ_extras=public_base)
        return cls(engine=engine, sessions=SessionStore(engine), upstream=upstream,
                   sandbox=sandbox_app)


def get_state() -> CheckoutState:
    return current_app.extensions["checkout"]
