"""The ``checkout`` blueprint: one module per flow registers its routes here."""
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
    from . import context, health, launch, onramp, pages, sandbox_pages, status, webhooks

    # Request plumbing first: security headers, session context and locale, error pages.
    security.init(bp)
    context.init(bp)
    pages.init(bp)
    # Each view module adds its routes; keep this list in flow order.
    for module in (health, launch, onramp, status, webhooks, sandbox_pages):
        module.init(bp)
    return bp
