"""``{prefix}/static/<name>`` and ``{prefix}/assets/<fingerprint>/<name>``: the app's static files
(:mod:`checkout.assets`, made once at start-up for its theme), and the address a page names each
one by (``checkout_asset_url``)."""
from __future__ import annotations

from flask import Response

from ..assets import FOREVER, REVALIDATE
from ..ratelimits import unlimited
from ..state import get_state
from .blueprint import bp

_FILES_ONLY = "the same files for everyone, read from memory: nothing to spend or to guess"


@bp.get("/static/<path:filename>", endpoint="static")
@unlimited(_FILES_ONLY)
def static(filename: str) -> Response:
    """A static file at its fixed address, asked about again at each use."""
    return get_state().assets.response(filename, REVALIDATE)


@bp.get("/assets/<fingerprint>/<path:filename>", endpoint="asset")
@unlimited(_FILES_ONLY)
def asset(fingerprint: str, filename: str) -> Response:
    """A static file at the address of its content, kept for a year."""
    assets = get_state().assets
    current = assets.files.get(filename)
    fresh = current is not None and current.fingerprint == fingerprint
    return assets.response(filename, FOREVER if fresh else REVALIDATE)


@bp.app_template_global("checkout_asset_url")
def checkout_asset_url(name: str) -> str:
    """The address of a static file by its content (a year in the browser's cache)."""
    return get_state().assets.url(name)
