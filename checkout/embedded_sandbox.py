"""The sandbox upstream embedded in a host app: how it is built and how it reaches browsers.

With no ``CHECKOUT_API_BASE_URL`` the checkout's upstream is a sandbox app running in this process
(:func:`checkout.sandbox.create_app`). Its API is called in process (``checkout.upstream.inprocess``);
some of its pages are for browsers (a redirect payment's page, the resume page, the console), so the
checkout serves them under ``{prefix}/sandbox/`` (``checkout.views.sandbox_pages``) and each call
tells the sandbox where that is (:func:`public_base`).
"""
from __future__ import annotations

from typing import Any

from flask import Flask, has_request_context

from .public_address import external_url
from .sandbox.state import PUBLIC_BASE_ENVIRON

SANDBOX_PAGES = "/sandbox/"
IN_PROCESS_HOST = "checkout.embedded.invalid"   # never resolved: delivered in process


def create(app: Flask) -> Flask:
    """The embedded sandbox app, with the host's credentials and ``CHECKOUT_SANDBOX`` settings.

    Its signed webhooks go to this app's own receiver by default, in process: through the same
    signature check, storage and processing as the upstream's, with the sender's retry schedule,
    but without a socket (the host's address may not even be reachable from itself). So a bare
    ``Checkout(app)`` sees its orders move on as a well-configured production site does.
    ``SANDBOX_WEBHOOK_URL`` in ``CHECKOUT_SANDBOX`` sends them over real HTTP instead.
    """
    from .sandbox import create_app

    sandbox_config: dict[str, Any] = {
        "SANDBOX_CLIENT_ID": app.config["CHECKOUT_CLIENT_ID"],
        "SANDBOX_CLIENT_SECRET": app.config.get("CHECKOUT_CLIENT_SECRET"),
        "SANDBOX_WEBHOOK_SECRET": app.config["CHECKOUT_WEBHOOK_SECRET"],
        # A webhook URL the host sets itself is on this machine, most likely.
        "SANDBOX_WEBHOOK_ALLOW_LOOPBACK": True,
    }
    sandbox_config.update(app.config.get("CHECKOUT_SANDBOX") or {})
    if not sandbox_config.get("SANDBOX_WEBHOOK_URL"):
        # The host app itself (not its wsgi_app of today: middleware added later applies too),
        # under the name it answers to.
        base = f"http://{app.config.get('SERVER_NAME') or IN_PROCESS_HOST}"
        prefix = app.config["CHECKOUT_URL_PREFIX"].rstrip("/")
        sandbox_config["SANDBOX_WEBHOOK_URL"] = f"{base}{prefix}/webhooks"
        sandbox_config["SANDBOX_WEBHOOK_IN_PROCESS"] = {base: app}
    return create_app(sandbox_config)


def public_base() -> dict[str, Any]:
    """The environ the embedded sandbox gets with each call: where browsers reach its pages.

    Only known while serving a request of the host (an order is created in one); a call made
    elsewhere (a worker thread fetching an order) adds nothing and links nowhere new.
    """
    if not has_request_context():
        return {}
    # On the trusted public address only, as every absolute link (checkout.public_address).
    pages = external_url("checkout.sandbox_pages", rest="")
    if pages is None:
        return {}
    return {PUBLIC_BASE_ENVIRON: pages[: -len(SANDBOX_PAGES)]}
