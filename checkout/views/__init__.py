"""The ``checkout`` blueprint: the shared journey's pages, then one module per flow."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from flask import Blueprint

from .. import names, support, upstream_text
from ..i18n import format_crypto, format_datetime, format_money
from ..journey.flow import Flow
from ..paths import STATIC, TEMPLATES
from ..theme import Theme, stylesheet

# What the checkout's templates format with (money and dates by Babel, the upstream's texts in
# the page's language), registered on the app's Jinja environment with the blueprint.
TEMPLATE_FILTERS: dict[str, Callable[..., Any]] = {
    "money": format_money, "crypto": format_crypto, "datetime": format_datetime,
    "asset_name": names.asset_name, "network_name": names.network_name,
    "channel_name": names.channel_name, "as_sent": upstream_text.as_sent,
    "in_page_language": upstream_text.in_page_language,
}


def create_blueprint(flows: Mapping[str, Flow], theme: Theme, *, desk: bool = False) -> Blueprint:
    """The blueprint of the app whose ``flows`` its pages show, in ``theme``; with the merchant's
    desk (checkout.desk) nested in it under ``/desk`` when ``desk`` (CHECKOUT_DESK_ACCESS set):
    without it, the desk does not exist."""
    bp = Blueprint("checkout", __name__, template_folder=str(TEMPLATES))
    for name, template_filter in TEMPLATE_FILTERS.items():
        bp.add_app_template_filter(template_filter, name)
    for name, template_global in upstream_text.JINJA_GLOBALS.items():
        bp.add_app_template_global(template_global, name)
    bp.add_app_template_global(support.support_links, "support_links")
    bp.add_app_template_global(support.merchant_name, "support_merchant")
    from .. import security
    from . import (
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
        metrics,
        offramp,
        onramp,
        pages,
        receipts,
        sandbox_pages,
        status,
        theming,
        webhooks,
    )

    # Request plumbing first: the time for the upstream, security headers, static files and
    # compression, session context and locale, error pages.
    budget.init(bp)
    security.init(bp, theme.logo_origin)
    assets.init(bp, assets.themed(assets.shipped(STATIC / "checkout"), stylesheet(theme)))
    theming.init(bp, theme)
    compression.init(bp)
    context.init(bp)
    funnel.init(bp)
    pages.init(bp)
    health.init(bp)
    launch.init(bp)
    # The journey every flow shares, then each flow's own pages.
    journey.init(bp)
    bp.add_url_rule("/s/<session_id>/quote", "quote", amount.live_quote, methods=["GET"])
    flow_pages = (onramp, offramp)
    for module in flow_pages:
        module.init(bp)
    journey.init_steps(bp, tuple(name for module in flow_pages for name in module.PAGES.steps))
    for module in (kyc, language, status, receipts, webhooks, metrics, sandbox_pages):
        module.init(bp)
    journey.check_pages(flows)
    if desk:
        from ..desk.views import desk as desk_blueprint

        # Nested: the checkout's request hooks (security headers, limits, locale) are its too.
        bp.register_blueprint(desk_blueprint, url_prefix="/desk")
    return bp
