"""The checkout's one blueprint, ``checkout``: each view module of checkout/views declares its
routes on it (``@bp.get``, ``@bp.post``) and its request plumbing with them; ``checkout.views``
imports them in the order that plumbing runs in, and ``Checkout.init_app`` registers it.

One blueprint serves every app that registers it: whatever is an app's own (its theme, its
assets, its limits, its flows) is looked up in the app's state at each request, never kept here.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint

from .. import names, support, upstream_text
from ..i18n import format_crypto, format_datetime, format_money
from ..paths import TEMPLATES

bp = Blueprint("checkout", __name__, template_folder=str(TEMPLATES))

# What the checkout's templates format with (money and dates by Babel, the upstream's texts in
# the page's language), registered on the app's Jinja environment with the blueprint.
TEMPLATE_FILTERS: dict[str, Callable[..., Any]] = {
    "money": format_money, "crypto": format_crypto, "datetime": format_datetime,
    "asset_name": names.asset_name, "network_name": names.network_name,
    "channel_name": names.channel_name, "as_sent": upstream_text.as_sent,
    "in_page_language": upstream_text.in_page_language,
}
for _name, _filter in TEMPLATE_FILTERS.items():
    bp.add_app_template_filter(_filter, _name)
TEMPLATE_GLOBALS: dict[str, Callable[..., Any]] = {
    **upstream_text.JINJA_GLOBALS, "support_links": support.support_links,
    "support_merchant": support.merchant_name,
}
for _name, _global in TEMPLATE_GLOBALS.items():
    bp.add_app_template_global(_global, _name)
