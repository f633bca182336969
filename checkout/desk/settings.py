"""The desk's settings, checked at start-up (``CHECKOUT_DESK_*``) and held in the app's state.

``CHECKOUT_DESK_ACCESS``    who may use the desk (:mod:`.access`); unset: the desk does not exist
``CHECKOUT_DESK_LOGIN_URL`` where a request without access is sent, with ``next`` (unset: 403)
``CHECKOUT_DESK_TIMEZONE``  the clock the desk's times are shown on (an IANA name; UTC)
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, tzinfo
from typing import Any
from urllib.parse import urlsplit

import pytz
from flask import Flask

from ..errors import ConfigurationError
from .access import Access

__all__ = ["DeskSettings", "check_config", "zone_named", "zone_name"]


def zone_named(name: Any) -> tzinfo:
    """The clock called ``name``; ``ConfigurationError`` for a name the tz database lacks."""
    if name in (None, "", "UTC", "Etc/UTC"):
        return UTC
    try:
        return pytz.timezone(str(name))
    except pytz.UnknownTimeZoneError:
        raise ConfigurationError(
            f"CHECKOUT_DESK_TIMEZONE must be a time zone of the tz database, such as "
            f"'Africa/Lagos' or 'UTC', not {name!r}") from None


def zone_name(zone: tzinfo) -> str:
    """A clock's name in the tz database (``Africa/Lagos``), or UTC."""
    return str(getattr(zone, "zone", None) or "UTC")


def _login_url(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    parts = urlsplit(text)
    relative = text.startswith("/") and not text.startswith("//") and not parts.netloc
    absolute = parts.scheme in ("http", "https") and bool(parts.netloc)
    if not (relative or absolute) or any(ord(c) < 33 for c in text):
        raise ConfigurationError(
            "CHECKOUT_DESK_LOGIN_URL must be your login page's path (/login) or address "
            f"(https://...), not {text!r}")
    return text


@dataclass(frozen=True)
class DeskSettings:
    access: Access
    login_url: str | None
    zone: tzinfo
    # The key the desk's digests and anti-forgery tokens are derived from.
    launch_secret: str

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> DeskSettings | None:
        """The desk's settings; None when there is no desk."""
        setting = config.get("CHECKOUT_DESK_ACCESS")
        if setting is None:
            return None
        return cls(Access(setting), _login_url(config.get("CHECKOUT_DESK_LOGIN_URL")),
                   zone_named(config.get("CHECKOUT_DESK_TIMEZONE")),
                   str(config.get("CHECKOUT_LAUNCH_SECRET") or ""))


def check_config(app: Flask) -> None:
    """Refuse at start-up a desk setting that cannot work."""
    setting = app.config.get("CHECKOUT_DESK_ACCESS")
    if setting is not None:
        Access.check(setting)
    _login_url(app.config.get("CHECKOUT_DESK_LOGIN_URL"))
    zone_named(app.config.get("CHECKOUT_DESK_TIMEZONE"))
