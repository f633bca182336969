"""Each checkout request's time for the upstream (:mod:`checkout.upstream.budget`): started before
its view runs, given back once it is answered.

The host's own routes get none: their upstream calls, if any, are theirs to bound.
"""
from __future__ import annotations

from flask import Blueprint, current_app, g, has_request_context, request

from ..upstream import budget


def _begin() -> None:
    this = request._get_current_object()  # type: ignore[attr-defined]

    def current() -> bool:
        # Still this request: not a later one, nor a thread outside any (a context left set).
        return has_request_context() and request._get_current_object() is this  # type: ignore[attr-defined]

    g.checkout_upstream_budget = budget.begin(
        float(current_app.config["CHECKOUT_REQUEST_BUDGET"]), current)


def _end(_exc: BaseException | None) -> None:
    token = g.pop("checkout_upstream_budget", None)
    if token is not None:
        budget.end(token)


def init(bp: Blueprint) -> None:
    bp.before_request(_begin)
    bp.teardown_request(_end)
