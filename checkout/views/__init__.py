"""The ``checkout`` blueprint (``checkout.views.blueprint.bp``): the shared journey's pages, then
one module per flow, each declaring its routes on it; the merchant's desk (checkout.desk) nested.

Imported here in the order their request plumbing runs: the request's time for the upstream and
the database first, security headers, static files and compression, the session's context and
locale, error pages; then the pages; the limits last (a refused request's page needs the context
set up before it).
"""
from __future__ import annotations

from flask import Blueprint

from ..desk.views import desk
from . import (  # noqa: F401  (each module declares its routes and hooks on the blueprint)
    amount,
    assets,
    budget,
    compression,
    context,
    funnel,
    health,
    journey,
    kyc,
    language,
    launch,
    limits,
    metrics,
    offramp,
    onramp,
    pages,
    receipts,
    sandbox_pages,
    security_headers,
    status,
    theming,
    webhooks,
)
from .blueprint import bp

__all__ = ["blueprint"]

# Nested: the checkout's request hooks (the request's time, security headers, locale, limits)
# are the desk's too. Every app has its routes; one without CHECKOUT_DESK_ACCESS answers them 404
# (checkout.desk.views).
bp.register_blueprint(desk, url_prefix="/desk")


def blueprint() -> Blueprint:
    """The blueprint to register (``Checkout.init_app`` does), its routes all declared."""
    return bp
