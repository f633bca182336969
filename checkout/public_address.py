"""Absolute links to the checkout (a resume link and its QR code, a return address given to a
payment provider), built from an address the merchant trusts, never from a forged ``Host``.

``url_for(..., _external=True)`` takes the host from the request's ``Host`` header, which anyone
can set: ``Host: evil.example`` would put a resume link (a key to the session) or a payment's
return address on someone else's site. The base of every absolute link is, in this order:

1. ``CHECKOUT_PUBLIC_URL``: the origin users reach the checkout at (``https://pay.shop.example``);
2. Flask's ``SERVER_NAME``, with ``PREFERRED_URL_SCHEME``;
3. the request's host when Flask's ``TRUSTED_HOSTS`` restricts it (a request with another host is
   refused by Flask before any view runs);
4. the request's host when it is a loopback address (a developer's own machine).

Outside the embedded sandbox one of 1 to 3 is required at start-up (:func:`check_config`). With
the sandbox and none of them, a page served on another host shows no absolute link at all.
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, current_app, has_request_context, request, url_for

from .config import is_loopback_host, uses_sandbox
from .errors import ConfigurationError

__all__ = ["external_url", "public_base", "check_config"]

log = logging.getLogger(__name__)

MISSING = (
    "CHECKOUT_PUBLIC_URL (the https:// origin users reach the checkout at), or Flask's "
    "SERVER_NAME, or TRUSTED_HOSTS is required: absolute links (resume links, the return address "
    "given to payment providers) would otherwise be built from the request's Host header, which "
    "anyone can forge")


def _configured_base(app: Flask) -> str | None:
    public = app.config.get("CHECKOUT_PUBLIC_URL")
    if public:
        return str(public).rstrip("/")
    server_name = app.config.get("SERVER_NAME")
    if server_name:
        return f"{app.config.get('PREFERRED_URL_SCHEME') or 'http'}://{server_name}"
    return None


def public_base() -> str | None:
    """``scheme://host[:port]`` that absolute links start with, or None when no trusted one is
    known for this request."""
    app = current_app
    base = _configured_base(app)
    if base is not None:
        return base
    if not has_request_context():
        return None
    # With TRUSTED_HOSTS, Flask has already refused a request whose Host is not in it.
    if app.config.get("TRUSTED_HOSTS") or is_loopback_host(_hostname(request.host)):
        return request.host_url.rstrip("/")
    _warn_once(app)
    return None


def _hostname(host: str) -> str | None:
    """The host name of a ``Host`` header, without its port (``[::1]:5000`` and ``[::1]`` are
    both ``::1``); None when it does not parse."""
    try:
        return urlsplit("//" + host).hostname
    except ValueError:
        return None


def external_url(endpoint: str, **values: Any) -> str | None:
    """The absolute URL of ``endpoint`` on the public address, or None (see the module doc)."""
    base = public_base()
    if base is None:
        return None
    return base + url_for(endpoint, **values)


def check_config(app: Flask) -> None:
    """At start-up: a valid CHECKOUT_PUBLIC_URL, and outside the sandbox a trusted address."""
    public = app.config.get("CHECKOUT_PUBLIC_URL")
    if public:
        parts = urlsplit(str(public))
        if parts.scheme not in ("https", "http") or not parts.hostname \
                or parts.path not in ("", "/") or parts.query or parts.fragment \
                or parts.username or parts.password:
            raise ConfigurationError(
                "CHECKOUT_PUBLIC_URL must be an origin: https://host[:port], nothing after it")
        if parts.scheme == "http" and not (is_loopback_host(parts.hostname)
                                           or uses_sandbox(app)):
            raise ConfigurationError(
                "CHECKOUT_PUBLIC_URL must be https:// (resume links are keys to a checkout)")
    if uses_sandbox(app):
        return
    if _configured_base(app) is None and not app.config.get("TRUSTED_HOSTS"):
        raise ConfigurationError(MISSING)


def _warn_once(app: Flask) -> None:
    state = app.extensions.get("checkout")
    if state is None or state.warned_public_url:
        return
    state.warned_public_url = True
    log.warning("no absolute link on a page served on a host that is not trusted: %s", MISSING)
