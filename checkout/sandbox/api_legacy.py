"""``/api/pay-widget-merchant/*`` (spec 4.2): the legacy, read-only view of on-ramp orders.

The legacy family has no order creation: its orders are the on-ramp orders, shown in the legacy
shape (spec 2.5) with BuySwapStatus and WithdrawalStatus derived from the on-ramp status.
"""
from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from . import pricing, reference
from .api_onramp import check_pair, find_order, onramp_filters, priced
from .orders import new_id, paginate
from .shapes import legacy_json
from .state import current
from .validation import LEGACY_PROVIDERS, ONRAMP_ASSETS, ONRAMP_NETWORKS, Query

bp = Blueprint("sandbox_legacy", __name__, url_prefix="/api/pay-widget-merchant")


@bp.get("/assets")
def assets() -> ResponseReturnValue:
    """Network and asset pairs that can be bought."""
    return jsonify([pair.to_json() for pair in reference.ONRAMP_ASSETS])


@bp.get("/order")
def get_order() -> ResponseReturnValue:
    """One order in the legacy shape, by ``orderId`` or ``orderParams``."""
    q = Query(request)
    order = find_order(q.text("orderId"), q.text("orderParams"))
    with current().orders.lock:
        return legacy_json(order)


@bp.get("/orders")
def list_orders() -> ResponseReturnValue:
    """A page of orders in the legacy shape, newest first."""
    q = Query(request)
    limit = q.limit()
    cursor = q.text("cursor")
    checks = onramp_filters(q, legacy=True)
    store = current().orders
    with store.lock:
        matches = store.find("onramp", lambda o: all(check(o) for check in checks))
        page, next_cursor = paginate(matches, cursor, limit)
        return {"nextCursor": next_cursor, "list": [legacy_json(o) for o in page]}


@bp.get("/price")
def price() -> ResponseReturnValue:
    """Crypto for a local amount, or the local amount for crypto (``currency`` usdc or local)."""
    q = Query(request)
    network = q.choice("network", ONRAMP_NETWORKS, required=True)
    asset = q.choice("asset", ONRAMP_ASSETS, required=True)
    currency = q.choice("currency", ("usdc", "local"), required=True)
    q.number("amount", required=True)
    country = q.country("country", required=True)
    provider = q.choice("provider", LEGACY_PROVIDERS, required=True)
    carrier_id = q.text("carrierId")
    check_pair(network, asset)
    quote = priced(pricing.legacy_price, network, asset, currency, q.text("amount"), country,
                   provider, carrier_id=carrier_id)
    return {"quoteId": new_id(), **quote}


@bp.get("/providers")
def providers() -> ResponseReturnValue:
    """Countries with their providers, carriers and (unless ``includeLimits=false``) limits."""
    q = Query(request)
    include_limits = q.boolean("includeLimits", True)
    network = q.choice("network", ONRAMP_NETWORKS)
    return jsonify(priced(pricing.legacy_providers, include_limits, network))


@bp.get("/limits")
def limits() -> ResponseReturnValue:
    """Crypto and local-currency limits and fees of one provider."""
    q = Query(request)
    network = q.choice("network", ONRAMP_NETWORKS, required=True)
    asset = q.choice("asset", ONRAMP_ASSETS)
    country = q.country("country", required=True)
    provider = q.choice("provider", LEGACY_PROVIDERS, required=True)
    carrier_id = q.text("carrierId")
    if asset is not None:
        check_pair(network, asset)
    return priced(pricing.legacy_limits, network, country, provider, asset=asset,
                  carrier_id=carrier_id)
