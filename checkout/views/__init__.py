"""The ``checkout`` blueprint: the shared journey's pages, then one module per flow."""
from __future__ import annotations

from flask import Blueprint

from ..paths import STATIC, TEMPLATES


def create_blueprint() -> Blueprint:
    bp = Blueprint(
        "checkout", __name__,
        template_folder=str(TEMPLATES),
        static_folder=str(STATIC / "checkout"),
        static_url_path="/static",
    )
    from .. import security
    from . import (
        amount,
        budget,
        context,
        health,
        journey,
        kyc,
        language,
        launch,
        metrics,
        offramp,
        onramp,
        pages,
        sandbox_pages,
        status,
        webhooks,
    )

    # Request plumbing first: the time for the upstream, security headers, session context and
    # locale, error pages.
    budget.init(bp)
    security.init(bp)
    context.init(bp)
    pages.init(bp)
    health.init(bp)
    launch.init(bp)
    # The journey every flow shares, then each flow's own pages.
    journey.init(bp)
    bp.add_url_rule("/s/<session_id>/quote", "quote", amount.live_quote, methods=["GET"])
    flows = (onramp, offramp)
    for module in flows:
        module.init(bp)
    journey.init_steps(bp, tuple(name for module in flows for name in module.PAGES.steps))
    for module in (kyc, language, status, webhooks, metrics, sandbox_pages):
        module.init(bp)
    return bp
