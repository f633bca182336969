"""``{prefix}/sandbox/...``: the embedded sandbox's own browser pages, on the host's site.

With no ``CHECKOUT_API_BASE_URL`` the upstream is a sandbox running inside this process. Its API is
reached in process, but some of its pages are for browsers: the payment page of a ``redirect``
transfer (the user leaves the iframe for it), the upstream's resume page, and the console (orders,
forced outcomes, webhook deliveries). A merchant who just wrote ``Checkout(app)`` must be able to
pay a redirect order, so those pages are served here, under the checkout's own prefix, and the
sandbox is told (per call, see ``checkout.embedded_sandbox.public_base``) to point its links
here. A sandbox's own ``SANDBOX_PUBLIC_URL`` still wins: the demo and tests may serve it elsewhere.

Against a real upstream these paths do not exist (404).
"""
from __future__ import annotations

from flask import Response, abort, current_app, request
from werkzeug.wrappers import Response as BaseResponse

from ..embedded_sandbox import SANDBOX_PAGES as PAGES
from ..ratelimits import unlimited
from ..state import get_state
from .blueprint import bp


@bp.route(PAGES, endpoint="sandbox_pages", methods=["GET", "POST"], defaults={"rest": ""})
@bp.route(PAGES + "<path:rest>", endpoint="sandbox_pages", methods=["GET", "POST"])
@unlimited("the embedded sandbox's test pages (absent with a real upstream)")
def sandbox_pages(rest: str = "") -> BaseResponse:
    """Hand the request to the sandbox app, as if it were mounted at the checkout's prefix."""
    sandbox = get_state().sandbox
    if sandbox is None:
        abort(404)
    prefix = current_app.config["CHECKOUT_URL_PREFIX"].rstrip("/")
    environ = dict(request.environ)
    # Our prefix moves from the path to the script name: the sandbox routes ``/sandbox/...`` and
    # builds its links (and its redirects) under SCRIPT_NAME, so they come back here.
    environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
    environ["PATH_INFO"] = environ["PATH_INFO"][len(prefix):]
    return Response.from_app(sandbox.wsgi_app, environ, buffered=True)
