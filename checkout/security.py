"""Security headers of every checkout response, and who may frame a page and receive its events.

* ``Content-Security-Policy``: scripts, styles, images and requests only from our own origin, no
  inline script or style (htmx runs with ``allowEval: false``), forms post only to us, and
  ``frame-ancestors`` = the session's ``parentOrigin`` when the launch token named one, else
  ``CHECKOUT_FRAME_ANCESTORS`` (the merchant's desk: ``'none'``, never framed). Redirect payments
  leave the iframe by a user's click on a ``target="_top"`` link (a navigation, not a form), so
  ``form-action 'self'`` holds.
* ``Referrer-Policy: same-origin``: the session id is in our paths and must never reach another
  site in a ``Referer`` (payment pages, block explorers, the shop).
* ``Cache-Control: no-store`` on everything but static files: pages carry a session's tokens.
* No ``X-Frame-Options``: it cannot name an allowed parent and would stop framing altogether.
* Static files get a file's policy instead of a page's: nothing may run, load or frame them.

An answer to a machine (:func:`machine_answer`: the webhook receiver's JSON) is not a page: no
document is rendered from it, so it carries its own short set instead (nothing may load, nothing
may frame it, no sniffing, no caching) and the page hooks leave it alone. The receiver answers
hundreds of deliveries a second; the page set and its hooks cost each one about as much as the
rest of the answer, on the server and in the sender that parses it.

They go on every response to an address under the prefix, whether or not a checkout view answered
it: an unrouted method, the bare prefix and the redirects the router makes have no blueprint, so a
blueprint's ``after_request`` would miss them. Nothing outside the prefix (the host's own pages) is
touched.
"""
from __future__ import annotations

from flask import Flask, Response, current_app, g, has_request_context, request

from .launch import normalize_origin

__all__ = ["frame_ancestors", "content_security_policy", "event_target_origin", "add_security_headers",
           "machine_answer", "MACHINE_HEADERS", "is_machine_request"]

PERMISSIONS_POLICY = ", ".join([
    # camera: the KYC step's photos (the frame must allow it too: embed.js does).
    "clipboard-write=(self)", "payment=(self)", "camera=(self)", "microphone=()", "geolocation=()",
    "usb=()",
])


# The whole security header set of an answer to a machine.
MACHINE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
# Set in the WSGI environ of a request that machine_answer answered: the hooks find it there
# whatever the response became (Flask turns it into the host's own response_class, if it has one).
MACHINE_REQUEST = "checkout.machine_request"


def machine_answer(body: str, status: int, headers: dict[str, str]) -> Response:
    """A JSON answer to a machine, with :data:`MACHINE_HEADERS` (and ``headers``). The page
    hooks (these headers, the request id, the limiter's after-request work) leave it alone."""
    request.environ[MACHINE_REQUEST] = True
    return Response(body, status=status, headers=MACHINE_HEADERS | headers,
                    content_type="application/json")


def is_machine_request() -> bool:
    """True in a request that :func:`machine_answer` answered."""
    return bool(request.environ.get(MACHINE_REQUEST))


def _is_source_expression(entry: str) -> bool:
    # A misconfigured entry must not be able to add a directive or split the header.
    return bool(entry) and not any(c in entry for c in ";,\r\n\t ")


def frame_ancestors(session: object | None = None, app: Flask | None = None) -> list[str]:
    """The ``frame-ancestors`` sources for a page of ``session`` (or of no session)."""
    parent = getattr(session, "parent_origin", None)
    if parent:
        return [parent]
    app = app or current_app
    sources = [e for e in app.config["CHECKOUT_FRAME_ANCESTORS"] if _is_source_expression(e)]
    return sources or ["'none'"]


def content_security_policy(session: object | None = None, *,
                            image_origin: str | None = None, framed: bool = True) -> str:
    """A page's policy; ``image_origin``: the one other site its images may come from (the
    merchant's logo, CHECKOUT_THEME, whose origin start-up checked is a bare origin);
    ``framed`` False: no site may frame it (``frame-ancestors 'none'``)."""
    directives = [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        # blob: the preview of a KYC photo chosen on the page (kyc.js), never sent anywhere.
        "img-src 'self' data: blob:" + (f" {image_origin}" if image_origin else ""),
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors " + (" ".join(frame_ancestors(session)) if framed else "'none'"),
    ]
    return "; ".join(directives)


def event_target_origin(session: object | None) -> str | None:
    """The exact origin that ``checkout.js`` may post parent events to, or None (post nothing).

    The session's ``parentOrigin``; else the one origin of ``CHECKOUT_FRAME_ANCESTORS`` when it
    lists exactly one (the CSP lets nobody else frame the page); else our own origin when that list
    is just ``'self'``. With several allowed parents and no ``parentOrigin`` we cannot know which
    one framed us, and ``"*"`` is never an option.
    """
    parent: str | None = getattr(session, "parent_origin", None)
    if parent:
        return parent
    ancestors = list(current_app.config["CHECKOUT_FRAME_ANCESTORS"])
    if len(ancestors) != 1:
        return None
    if ancestors[0] == "'self'":
        return normalize_origin(request.host_url.rstrip("/")) if has_request_context() else None
    return normalize_origin(ancestors[0])


# The static files' views set their own cache (checkout/views/assets.py): no session in them.
STATIC_ENDPOINTS = frozenset({"checkout.static", "checkout.asset"})
STATIC_FILE_POLICY = "default-src 'none'; frame-ancestors 'none'"


def under_prefix(path: str, app: Flask | None = None) -> bool:
    """True for the prefix itself and every address below it."""
    prefix = (app or current_app).config["CHECKOUT_URL_PREFIX"]
    return path == prefix or path.startswith(prefix + "/")


# Addresses below the prefix that no site may frame, whoever may frame the checkout: the
# merchant's desk (checkout.desk), its staff's own pages (clickjacking its actions).
NEVER_FRAMED = ("/desk",)


def never_framed(path: str, app: Flask | None = None) -> bool:
    """True for the addresses of :data:`NEVER_FRAMED`, and every one below them (a 404 too)."""
    prefix = (app or current_app).config["CHECKOUT_URL_PREFIX"]
    return any(path == prefix + part or path.startswith(prefix + part + "/")
               for part in NEVER_FRAMED)


def add_security_headers(response: Response, image_origin: str | None = None) -> Response:
    if is_machine_request() or not under_prefix(request.path):
        return response
    session = g.get("checkout_session")
    headers = response.headers
    if request.endpoint in STATIC_ENDPOINTS:
        # A file is no page: opened by itself (an SVG, say) nothing may run, load or frame it.
        # A policy of documents, a page's CSP or its Permissions-Policy, would be bytes spent on
        # every first page for nothing (a stylesheet's loads follow the page's policy).
        headers["Content-Security-Policy"] = STATIC_FILE_POLICY
        headers.pop("Permissions-Policy", None)
    else:
        headers["Content-Security-Policy"] = content_security_policy(
            session, image_origin=image_origin, framed=not never_framed(request.path))
        headers["Permissions-Policy"] = PERMISSIONS_POLICY
    headers["Referrer-Policy"] = "same-origin"
    headers["X-Content-Type-Options"] = "nosniff"
    headers.pop("X-Frame-Options", None)
    # A static file says how long to keep it; anything else, a missing file's 404 included, is
    # not kept.
    if request.endpoint not in STATIC_ENDPOINTS or "Cache-Control" not in headers:
        headers["Cache-Control"] = "no-store"
    return response

