"""Each checkout request's time for the upstream (:mod:`checkout.upstream.budget`): started before
its view runs, given back once it is answered.

The host's own routes get none: their upstream calls, if any, are theirs to bound.
"""
from __future__ import annotations

from flask import Blueprint, current_app, g

from ..upstream import budget


def _begin() -> None:
    g.checkout_upstream_budget = budget.begin(float(current_app.config["CHECKOUT_REQUEST_BUDGET"]))


def _end(_exc: BaseException | None) -> None:
    token = g.pop("checkout_upstream_budget", None)
    if token is not None:
        budget.end(token)


def init(bp: Blueprint) -> None:
    bp.before_request(_begin)
    bp.teardown_request(_end)
