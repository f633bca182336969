"""``/api/util/*`` (spec 4.5): address check, countries with KYC rules, carriers, assets."""
from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from . import reference
from .validation import Body

bp = Blueprint("sandbox_util", __name__, url_prefix="/api/util")


def _address_used() -> Callable[[str], bool]:
    """The order store's ``address_used`` when the sandbox has one; else nothing is used."""
    orders = getattr(current_app.extensions.get("sandbox"), "orders", None)
    return getattr(orders, "address_used", None) or (lambda address: False)


@bp.post("/check-address")
def check_address() -> ResponseReturnValue:
    """Whether a wallet address has already been used in an order."""
    body = Body(request, allowed=("address",))
    address = body.text("address", required=True)
    return jsonify(used=bool(_address_used()(address)))


@bp.get("/countries")
def countries() -> ResponseReturnValue:
    """Supported countries with their KYC documents and rules."""
    return jsonify(reference.util_countries_json())


@bp.get("/carriers")
def carriers() -> ResponseReturnValue:
    """Mobile carriers per country."""
    return jsonify(reference.util_carriers_json())


@bp.get("/assets")
def assets() -> ResponseReturnValue:
    """Every network/asset pair with its on-ramp and off-ramp flags."""
    return jsonify([a.to_json() for a in reference.UTIL_ASSETS])
