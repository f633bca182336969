"""checkout: an embeddable hosted checkout for buying and selling stablecoins, as a Flask extension.

::

    app.config.update(CHECKOUT_CLIENT_ID=..., CHECKOUT_WEBHOOK_SECRET=..., CHECKOUT_LAUNCH_SECRET=...)
    checkout = Checkout(app)        # or Checkout().init_app(app)

Per-app state lives in ``app.extensions["checkout"]`` (a :class:`checkout.state.CheckoutState`);
the extension object keeps no app.
"""
from __future__ import annotations

from typing import Any

from flask import Flask, current_app, has_request_context, url_for

__all__ = ["Checkout"]
__version__ = "0.1.0"


class Checkout:
    """The Flask extension. See the README for configuration keys."""

    def __init__(self, app: Flask | None = None) -> None:
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        from . import (
            config,
            embedded_sandbox,
            logs,
            metrics,
            public_address,
            ratelimits,
            support,
            theme,
        )
        from .cli import checkout_cli
        from .composition import build
        from .desk import settings as desk_settings
        from .i18n import init_babel
        from .views import blueprint

        # Before anything logs (the schema's upgrade at start-up): shown even with no logging
        # set up by the host (checkout.logs).
        logs.show_by_default()
        config.apply_defaults(app)
        embedded_sandbox.apply_defaults(app)
        config.validate(app)
        for module in (ratelimits, metrics, public_address, embedded_sandbox, support, theme,
                       desk_settings):
            module.check_config(app)
        app.extensions["checkout"] = build(app)
        init_babel(app)
        app.register_blueprint(blueprint(), url_prefix=app.config["CHECKOUT_URL_PREFIX"])
        app.cli.add_command(checkout_cli)
        # Last: the request id filter goes on every checkout logger imported by now.
        logs.init_app(app)

    @staticmethod
    def launch_url(flow: str, **claims: Any) -> str:
        """A URL of ``/launch`` with a freshly signed launch token (call in an app context).

        ``_ttl=``: seconds until the token expires (900 by default, at most 1800), as the
        command's ``--ttl``; see :func:`checkout.launch.launch_url` for the other options."""
        from .launch import launch_url

        return launch_url(current_app, flow, **claims)

    @staticmethod
    def receipt_url(order_id: str, flow: str, locale: str | None = None) -> str:
        """The address of an order's receipt (call in an app context), for your own emails and
        order pages: absolute on the checkout's public address (``CHECKOUT_PUBLIC_URL``, else
        ``SERVER_NAME``), else relative to your site. It opens until ``CHECKOUT_RECEIPT_DAYS``
        after the order's last change (once paid out or refunded, after it was done), like every
        link to that receipt, whenever it was made; ``flow`` is the order's
        (``order_status_changed`` gives both), ``locale`` the language it opens in (the reader
        can choose another)."""
        from .capabilities import receipt_token
        from .public_address import public_base

        if flow not in ("onramp", "offramp"):
            raise ValueError(f"flow must be onramp or offramp, not {flow!r}")
        token = receipt_token(order_id, flow, locale)
        # Outside a request only a configured address counts (no Host to trust or not).
        base = public_base()
        if has_request_context():
            path = url_for("checkout.receipt", token=token)
        else:
            with current_app.test_request_context():
                path = url_for("checkout.receipt", token=token)
        return (base or "") + path
