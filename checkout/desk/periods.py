"""Days on the staff member's clock: what "today", "7 days", a date filter mean at the desk.

A day starts at midnight where the staff member is (``CHECKOUT_DESK_TIMEZONE``), not in UTC: in
Nairobi "today" starts at 21:00 UTC the day before.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

__all__ = ["PERIODS", "Period", "midnight", "period", "parse_day"]

# The overview's periods: days on the staff member's clock, today included.
PERIODS = {"today": 1, "7d": 7, "30d": 30}


@dataclass(frozen=True)
class Period:
    name: str
    since: datetime         # the first midnight, in UTC
    until: datetime         # now


def midnight(zone: tzinfo, day: date) -> datetime:
    """The moment ``day`` starts on ``zone``'s clock, in UTC."""
    naive = datetime(day.year, day.month, day.day)
    localize = getattr(zone, "localize", None)      # a pytz zone places a wall time so
    local = localize(naive) if localize is not None else naive.replace(tzinfo=zone)
    return local.astimezone(UTC)


def period(name: str, zone: tzinfo, now: datetime) -> Period:
    """``today``, ``7d`` or ``30d`` ending ``now``, from the midnight of its first day."""
    days = PERIODS[name]
    today = now.astimezone(zone).date()
    return Period(name, midnight(zone, today - timedelta(days=days - 1)), now)


def parse_day(text: str | None) -> date | None:
    """A date typed in a filter (``2026-11-29``, as a date input sends it), or None."""
    if not text:
        return None
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None
