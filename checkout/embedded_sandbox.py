"""The sandbox upstream embedded in a host app: how it is built and how it reaches browsers.

With no ``CHECKOUT_API_BASE_URL`` the checkout's upstream is a sandbox app running in this process
(:func:`checkout.sandbox.create_app`). Its API is called in process (``checkout.upstream.inprocess``);
some of its pages are for browsers (a redirect payment's page, the resume page, the console), so the
checkout serves them under ``{prefix}/sandbox/`` (``checkout.views.sandbox_pages``) and each call
tells the sandbox where that is (:func:`public_base`).
"""
from __future__ import annotations

from typing import Any

from flask import Flask, has_request_context, url_for

from .sandbox.state import PUBLIC_BASE_ENVIRON

SANDBOX_PAGES = "/sandbox/"


def create(app: Flask) -> Flask:
    """The embedded sandbox app, with the host's credentials and ``CHECKOUT_SANDBOX`` settings."""
    from .sandbox import create_app

    sandbox_config: dict[str, Any] = {
        "SANDBOX_CLIENT_ID": app.config["CHECKOUT_CLIENT_ID"],
        "SANDBOX_CLIENT_SECRET": app.config.get("CHECKOUT_CLIENT_SECRET"),
        "SANDBOX_WEBHOOK_SECRET": app.config["CHECKOUT_WEBHOOK_SECRET"],
        # The embedded sandbox delivers webhooks to this same process on loopback.
        "SANDBOX_WEBHOOK_ALLOW_LOOPBACK": True,
    }
    sandbox_config.update(app.config.get("CHECKOUT_SANDBOX") or {})
    return create_app(sandbox_config)


def public_base() -> dict[str, Any]:
    """The environ the embedded sandbox gets with each call: where browsers reach its pages.

    Only known while serving a request of the host (an order is created in one); a call made
    elsewhere (a worker thread fetching an order) adds nothing and links nowhere new.
    """
    if not has_request_context():
        return {}
    pages = url_for("checkout.sandbox_pages", rest="", _external=True)
    return {PUBLIC_BASE_ENVIRON: pages[: -len(SANDBOX_PAGES)]}
