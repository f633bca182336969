"""The merchant's look on every page (checkout.theme): the colour scheme a page is shown in, and
the logo in its header.

A theme that offers dark (``scheme`` ``dark`` or ``auto``) lets the launch token's
``colorScheme`` choose: ``<html data-scheme>`` pins the page to it, which the theme's stylesheet
reads. ``<meta name="color-scheme">`` tells the browser which schemes the page is drawn in, so
that its own controls and scrollbars match.
"""
from __future__ import annotations

from typing import Any

from flask import g

from ..state import get_state
from ..theme import Theme
from .blueprint import bp

__all__ = ["page_scheme", "theme_context"]


def page_scheme(theme: Theme, claims: dict[str, Any] | None) -> str | None:
    """``light`` or ``dark`` when the page is pinned to one; None when it is drawn in the
    theme's own (light only, dark only, or the device's)."""
    if not theme.offers_dark:
        return None
    asked = (claims or {}).get("colorScheme")
    return asked if asked in ("light", "dark") else None


@bp.context_processor
def theme_context() -> dict[str, Any]:
    theme = get_state().theme
    session = g.get("checkout_session")
    pinned = page_scheme(theme, session.claims if session is not None else None)
    drawn = pinned or {"light": "light", "dark": "dark", "auto": "light dark"}[theme.scheme]
    return {"checkout_scheme": pinned, "checkout_scheme_meta": drawn,
            "checkout_logo": theme.logo}
