"""The sandbox upstream embedded in a host app: how it is built and how it reaches browsers.

With no ``CHECKOUT_API_BASE_URL`` the checkout's upstream is a sandbox app running in this process
(:func:`checkout.sandbox.create_app`). Its API is called in process (``checkout.upstream.inprocess``);
some of its pages are for browsers (a redirect payment's page, the resume page, the console), so the
checkout serves them under ``{prefix}/sandbox/`` (``checkout.views.sandbox_pages``) and each call
tells the sandbox where that is (:func:`public_base`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from flask import Flask, has_request_context

from . import config
from .errors import ConfigurationError
from .process_local import ProcessLocal
from .public_address import external_url
from .sandbox import credentials
from .sandbox.state import PUBLIC_BASE_ENVIRON
from .upstream.inprocess import WSGIAdapter

SANDBOX_PAGES = "/sandbox/"
IN_PROCESS_HOST = "checkout.embedded.invalid"   # never resolved: delivered in process
# The in-process sandbox answers at this address; nothing listens there on the network.
EMBEDDED_SANDBOX_URL = "http://sandbox.checkout.invalid"


def apply_defaults(app: Flask) -> None:
    """With no upstream configured, the sandbox's published credentials are the checkout's
    (a host that sets its own keeps them: the sandbox is given them instead, :func:`settings`)."""
    if config.uses_sandbox(app):
        app.config.setdefault("CHECKOUT_CLIENT_ID", credentials.CLIENT_ID)
        app.config.setdefault("CHECKOUT_WEBHOOK_SECRET", credentials.WEBHOOK_SECRET)


class EmbeddedSandbox:
    """The host's sandbox app (a WSGI app), built on its first call.

    Its ninety routes take tens of milliseconds to build, which a process that never calls the
    upstream (a CLI command, a worker that only stores webhooks) need not pay. Its settings were
    checked at start-up (:func:`check_config`), so building it refuses nothing.
    """

    def __init__(self, host: Flask) -> None:
        self._settings = settings(host)
        self._app: Flask | None = None
        # Its lock is this process's: a fork while a thread builds it must not leave the child
        # waiting on a lock no thread of its own holds.
        self._building: ProcessLocal[None] = ProcessLocal(lambda: None)

    @property
    def app(self) -> Flask:
        if self._app is None:
            with self._building.lock:
                if self._app is None:
                    from .sandbox import create_app

                    self._app = create_app(self._settings)
        return self._app

    @property
    def built(self) -> bool:
        return self._app is not None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        return self.app(environ, start_response)


def pace(app: Flask) -> float:
    """How long the embedded sandbox's waits last against the service's: its time scale when it
    runs faster than real time (the demo's 0.2: its quotes live two minutes, not ten), else 1.
    A slower sandbox changes nothing: its quotes outlive the checkout's trust all the more."""
    if not config.uses_sandbox(app):
        return 1.0
    return min(1.0, float(settings(app).get("SANDBOX_TIME_SCALE", 1.0)))


# The sandbox settings the host's own keys give (its credentials): a wrong value is named by them.
FROM_HOST = {"SANDBOX_CLIENT_ID": "CHECKOUT_CLIENT_ID",
             "SANDBOX_CLIENT_SECRET": "CHECKOUT_CLIENT_SECRET",
             "SANDBOX_WEBHOOK_SECRET": "CHECKOUT_WEBHOOK_SECRET"}


def check_config(app: Flask) -> None:
    """At start-up, before the database is touched: everything the embedded sandbox would refuse
    when it is built (on its first call, mid-checkout) is refused now, naming the host's key the
    value came from (``CHECKOUT_SANDBOX``, or a credential). Never a secret's value."""
    if not config.uses_sandbox(app):
        return
    overrides = app.config.get("CHECKOUT_SANDBOX")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise ConfigurationError("CHECKOUT_SANDBOX must be a dict of SANDBOX_* settings")
    from .sandbox import check_config as check_sandbox

    try:
        check_sandbox(settings(app))
    except ValueError as exc:
        message = str(exc)
        named = message.split(" ", 1)[0].rstrip(":")
        if named in FROM_HOST and named not in (overrides or {}):
            raise ConfigurationError(
                f"{FROM_HOST[named]} (also the embedded sandbox's {named}): "
                + message.removeprefix(named).lstrip(": ")) from None
        raise ConfigurationError(f"CHECKOUT_SANDBOX: {message}") from None


def settings(app: Flask) -> dict[str, Any]:
    """The embedded sandbox's settings: the host's credentials and ``CHECKOUT_SANDBOX``.

    Its signed webhooks go to this app's own receiver by default, in process: through the same
    signature check, storage and processing as the upstream's, with the sender's retry schedule,
    but without a socket (the host's address may not even be reachable from itself). So a bare
    ``Checkout(app)`` sees its orders move on as a well-configured production site does.
    ``SANDBOX_WEBHOOK_URL`` in ``CHECKOUT_SANDBOX`` sends them over real HTTP instead.
    """
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
        sandbox_config["SANDBOX_WEBHOOK_IN_PROCESS"] = {base: WSGIAdapter(app)}
    return sandbox_config


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
