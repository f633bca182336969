"""Each checkout request's time for the upstream (:mod:`checkout.upstream.budget`) and for its
database (:mod:`checkout.store.availability`): started before its view runs, given back once it is
answered.

The host's own routes get none: their upstream calls and queries, if any, are theirs to bound.
"""
from __future__ import annotations

from flask import Blueprint, current_app, g, has_request_context, request

from ..store import REQUEST_DATABASE_TIME, availability
from ..upstream import budget


def _begin() -> None:
    this = request._get_current_object()  # type: ignore[attr-defined]

    def current() -> bool:
        # Still this request: not a later one, nor a thread outside any (a context left set).
        return has_request_context() and request._get_current_object() is this  # type: ignore[attr-defined]

    g.checkout_upstream_budget = budget.begin(
        float(current_app.config["CHECKOUT_REQUEST_BUDGET"]), current)
    g.checkout_database_budget = availability.begin(REQUEST_DATABASE_TIME)


def _end(_exc: BaseException | None) -> None:
    token = g.pop("checkout_upstream_budget", None)
    if token is not None:
        budget.end(token)
    database = g.pop("checkout_database_budget", None)
    if database is not None:
        availability.end(database)


def init(bp: Blueprint) -> None:
    bp.before_request(_begin)
    bp.teardown_request(_end)
