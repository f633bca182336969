"""The security headers (:mod:`checkout.security`) on every response to an address under the
prefix, a routing failure's included (an app-wide hook: those have no blueprint)."""
from __future__ import annotations

from flask import Response, request

from ..security import add_security_headers, under_prefix
from ..state import get_state
from .blueprint import bp


@bp.after_app_request
def security_headers(response: Response) -> Response:
    if not under_prefix(request.path):
        return response             # the host's own pages are the host's
    # The merchant's logo's site (CHECKOUT_THEME), if it has one, may serve the pages' images.
    return add_security_headers(response, get_state().theme.logo_origin)
