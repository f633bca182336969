"""The checkout's limits (:mod:`checkout.ratelimits`) count its own requests, and no other: a
host's routes, and a host's own Flask-Limiter and its ``RATELIMIT_*`` settings, are never touched.
Imported last by ``checkout.views``: a refused request's page needs the session's context and
locale, set up by the hooks before this one."""
from __future__ import annotations

from flask import Response

from ..state import get_state
from .blueprint import bp


@bp.before_request
def count_request() -> None:
    limits = get_state().ratelimits
    if limits.counter is not None:
        limits.count_request()


@bp.after_request
def count_photos(response: Response) -> Response:
    limits = get_state().ratelimits
    return limits.count_photos(response) if limits.counter is not None else response
