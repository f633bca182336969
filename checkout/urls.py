"""Links to other sites that come from the upstream (payment pages, providers' resume links).

The checkout renders them as ``target="_top"`` links that replace the merchant's page, so a value
the upstream (or anyone who can tamper with its answers) chooses must not become a ``javascript:``
or ``data:`` link, nor send the user to a cleartext payment page. One rule for all of them:
:func:`safe_external_url`.
"""
from __future__ import annotations

import logging
from urllib.parse import urlsplit

from flask import current_app, has_app_context

from .config import is_loopback_host, uses_sandbox

log = logging.getLogger("checkout.urls")

MAX_URL_LENGTH = 4096


def safe_external_url(url: object, what: str = "payment") -> str | None:
    """``url`` if it may be a link the user follows out of the checkout, else None.

    Accepted: ``https://`` with a host, no user info. ``http://`` only while the embedded sandbox
    is the upstream (its pages are served by this very app, on whatever address the demo uses) or
    for a loopback host (tests, a local demo). Anything else is refused with a WARNING that names
    the kind of link and its scheme only: neither the URL (it may carry the provider's own token)
    nor the session is logged.
    """
    if url is None or url == "":
        return None
    if not isinstance(url, str) or len(url) > MAX_URL_LENGTH or \
            any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7f for ch in url):
        _refused(what, "malformed")
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        _refused(what, "malformed")
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        _refused(what, f"scheme {scheme or '(none)'}")
        return None
    if not host or parts.username is not None or parts.password is not None:
        _refused(what, "no host, or user info")
        return None
    if scheme == "http" and not (is_loopback_host(host) or _embedded_sandbox()):
        _refused(what, "scheme http")
        return None
    return url


def _embedded_sandbox() -> bool:
    # The configuration says it (as composition does when it builds the sandbox): no lookup of
    # the app's state from down here.
    return has_app_context() and uses_sandbox(current_app)


def _refused(what: str, reason: str) -> None:
    log.warning("refused the upstream's %s link (%s): the page shows no link", what, reason)
