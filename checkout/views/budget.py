"""Each checkout request's time for the upstream (:mod:`checkout.upstream.budget`) and for its
database (:mod:`checkout.store.availability`): started before its view runs, given back once it is
answered.

The host's own routes get none: their upstream calls and queries, if any, are theirs to bound.
"""
from __future__ import annotations

from flask import current_app, g, has_request_context, request

from ..store import REQUEST_DATABASE_TIME, availability
from ..upstream import budget
from .blueprint import bp

_DATABASE_BUDGET = "checkout.database_budget"


@bp.before_request
def _begin() -> None:
    this = request._get_current_object()  # type: ignore[attr-defined]

    def current() -> bool:
        # Still this request: not a later one, nor a thread outside any (a context left set).
        return has_request_context() and request._get_current_object() is this  # type: ignore[attr-defined]

    g.checkout_upstream_budget = budget.begin(
        float(current_app.config["CHECKOUT_REQUEST_BUDGET"]), current)
    # Kept with this request itself, not in ``g``: a request served inside another of the same
    # app (they share its app context, and ``g``) would take the outer one's token, which would
    # never be given back, and every later database wait of this thread would find no time left.
    request.environ[_DATABASE_BUDGET] = availability.begin(REQUEST_DATABASE_TIME)


@bp.teardown_request
def _end(_exc: BaseException | None) -> None:
    token = g.pop("checkout_upstream_budget", None)
    if token is not None:
        budget.end(token)
    database = request.environ.pop(_DATABASE_BUDGET, None)
    if database is not None:
        availability.end(database)

