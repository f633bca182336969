"""KYC levels (spec 2.1: none, basic, advanced) and the level an order's amount needs."""
from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from ..upstream.types import KycRule

LEVELS = ("none", "basic", "advanced")


def rank(level: str | None) -> int:
    """A level's place in the order none < basic < advanced (unknown counts as none)."""
    return LEVELS.index(level) if level in LEVELS else 0


def covers(passed: str | None, needed: str | None) -> bool:
    return rank(passed) >= rank(needed)


def required_level(rules: Iterable[KycRule], usd_amount: Decimal | None) -> str:
    """The level the country's rules ask of an order of ``usd_amount`` US dollars.

    The rules give ranges (``max`` may be 'Infinity'); where ranges touch or overlap, the
    highest level among those that cover the amount is the one asked. An amount no rule covers
    (above every range, or rules missing) asks for the highest level the rules know: never less
    than a rule would ask of a smaller amount.
    """
    rules = list(rules)
    if usd_amount is None or not rules:
        return "none"
    covering = [rule.type for rule in rules if rule.covers(usd_amount)]
    if covering:
        return max(covering, key=rank)
    above = [rule.type for rule in rules if rule.min <= usd_amount]
    return max(above, key=rank) if above else "none"


def next_level(level: str) -> str | None:
    """The level above ``level``, if there is one."""
    position = rank(level)
    return LEVELS[position + 1] if position + 1 < len(LEVELS) else None
