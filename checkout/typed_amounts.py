"""Amounts typed by people: read the way the user's locale writes numbers, never guessed.

"12,5" is twelve and a half in French and 125 in English, where the comma groups thousands; a
parser that drops the separator it does not expect turns a payment into ten times itself. So an
amount is read with the locale's own decimal mark and grouping (spaces group anywhere); text that
only makes sense in another convention is a question back to the user ("Did you mean 12.5?"), with
every reading it could have, written the user's way.

A typed amount also has a precision: whole francs CFA, whole Ugandan and Tanzanian shillings (the
CLDR's cash digits: nobody pays 0.50 TZS by mobile money), cents of other money, micro-units of a
stablecoin. More decimals than that is an error that says so, never a silent rounding.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from babel import Locale, UnknownLocaleError
from babel.core import get_global
from babel.numbers import format_decimal
from flask_babel import gettext as _
from flask_babel import ngettext

__all__ = ["AmountError", "parse_amount", "currency_places", "amount_for_input", "CRYPTO_PLACES",
           "USD_PLACES"]

CRYPTO_PLACES = 6   # USDC and USDT carry 6 decimals on every network the checkout offers
USD_PLACES = 2
MAX_LENGTH = 32
SPACES = frozenset(" \u00a0\u202f\u2009\u2007")
MINUS = frozenset("-\u2212\u2013")
_DIGITS = re.compile(r"[0-9]+")


class AmountError(ValueError):
    """A typed amount that cannot be taken as it is; ``str()`` is the message for the user.

    ``suggestions``: for a question ("Did you mean 12.5?"), each reading as (the text to put in
    the field, as the locale types it; the amount as the message writes it), so that a page can
    offer them as one-tap answers.
    """

    def __init__(self, message: str,
                 suggestions: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.suggestions = suggestions


def currency_places(currency: str) -> int:
    """Decimals a payment in ``currency`` can carry: the fewer of CLDR's digits and cash digits."""
    fractions = get_global("currency_fractions")
    digits, _rounding, cash_digits, _cash_rounding = fractions.get(currency, fractions["DEFAULT"])
    return int(min(digits, cash_digits))


def _symbols(locale: Locale) -> tuple[str, str]:
    decimal = locale.number_symbols.get("latn", {}).get("decimal", ".")
    group = locale.number_symbols.get("latn", {}).get("group", ",")
    return decimal, (" " if group in SPACES else group)


def _read(text: str, decimal: str, group: str) -> tuple[Decimal, int] | None:
    """``text`` with this decimal mark and grouping, and how many decimals were typed; None
    when it is not written that way."""
    if text.count(decimal) > 1:
        return None
    whole, mark, fraction = text.partition(decimal)
    if fraction and not _DIGITS.fullmatch(fraction) or (mark and not fraction):
        return None
    if not whole:
        return (Decimal("0." + fraction), len(fraction)) if fraction else None
    if group != " " and group in whole and " " in whole:
        return None   # two kinds of grouping in one number: not a way anyone writes it
    groups = whole.split(" " if " " in whole else group)
    if any(not _DIGITS.fullmatch(g) for g in groups):
        return None
    if len(groups) > 1 and (len(groups[0]) > 3 or any(len(g) != 3 for g in groups[1:])):
        return None
    return Decimal("".join(groups) + ("." + fraction if fraction else "")), len(fraction)


def _readings(text: str, locale: Locale,
              places: int | None) -> tuple[Decimal | None, list[Decimal]]:
    """The locale's reading of ``text`` (or None), and the other plausible readings.

    Another convention's reading is plausible when it types no more decimals than the amount
    may carry: "1,500" read as 1.500 is not a price in shillings, but it is a quantity of USDC,
    so in English it is 1,500 shillings and a question in USDC.
    """
    decimal, group = _symbols(locale)
    own = _read(text, decimal, group)
    others: list[tuple[Decimal, int]] = []
    # Spaces group in every convention; the question is only which of "." and "," is the mark.
    for other_decimal, other_group in ((".", ","), (",", ".")):
        if (other_decimal, other_group) == (decimal, group):
            continue
        reading = _read(text, other_decimal, other_group)
        if reading is not None and (own is None or reading[0] != own[0]) \
                and reading[0] not in {r[0] for r in others}:
            others.append(reading)
    plausible = [value for value, typed in others if places is None or typed <= places]
    if own is None and not plausible:
        plausible = [value for value, _typed in others]
    if own is not None and places is not None and own[1] > places and plausible:
        own = None    # "1,234" in Portuguese shillings: 1.234 cannot be meant, 1234 can
    return (own[0] if own else None), plausible


def amount_for_input(value: Decimal | str, locale: Locale | str) -> str:
    """A stored amount as the user would type it back in an input: "1500,5" in French."""
    number = Decimal(str(value))
    places = max(0, -int(number.as_tuple().exponent))
    pattern = "0." + "0" * places if places else "0"
    return format_decimal(number, format=pattern, locale=locale, group_separator=False)


def _written(number: Decimal, locale: Locale) -> str:
    """How the locale writes ``number`` for the user to compare (grouped, no trailing zeros)."""
    exact = number.normalize()
    places = max(0, -int(exact.as_tuple().exponent))
    return format_decimal(exact, format="#,##0." + "0" * places if places else "#,##0",
                          locale=locale)


def parse_amount(value: str, locale: Locale | str, places: int | None = None) -> Decimal:
    """A positive amount typed in the user's ``locale`` with at most ``places`` decimals.

    Raises :class:`AmountError` with a message for the user: not a number, negative or zero, too
    many decimals, or written another way ("Did you mean 12.5?").
    """
    try:
        loc = locale if isinstance(locale, Locale) else Locale.parse(str(locale).replace("-", "_"))
    except (ValueError, TypeError, UnknownLocaleError):
        loc = Locale.parse("en")
    text = "".join(" " if ch in SPACES else ch for ch in (value or "").strip())
    text = re.sub(" +", " ", text)
    if not text:
        raise AmountError(_("Enter an amount."))
    negative = text[0] in MINUS
    body = text[1:].strip() if negative else text
    decimal, group = _symbols(loc)
    allowed = set("0123456789 .,") | {decimal, group}
    if len(text) > MAX_LENGTH or not body or not set(body) <= allowed:
        raise AmountError(_("Enter the amount in digits, for example %(example)s.",
                            example=_written(Decimal(5000), loc)))
    own, others = _readings(body, loc, places)

    def answers(*readings: Decimal) -> tuple[tuple[str, str], ...]:
        return tuple((amount_for_input(r, loc), _written(r, loc)) for r in readings)

    if own is not None and others:
        first, second = sorted([own, others[0]])
        raise AmountError(_("Did you mean %(first)s or %(second)s?",
                            first=_written(first, loc), second=_written(second, loc)),
                          answers(first, second))
    if own is None:
        if len(others) == 1:
            raise AmountError(_("Did you mean %(amount)s?", amount=_written(others[0], loc)),
                              answers(others[0]))
        if len(others) > 1:
            first, second = sorted(others)[:2]
            raise AmountError(_("Did you mean %(first)s or %(second)s?",
                                first=_written(first, loc), second=_written(second, loc)),
                              answers(first, second))
        raise AmountError(_("Enter the amount in digits, for example %(example)s.",
                            example=_written(Decimal(5000), loc)))
    if negative and own != 0:
        raise AmountError(_("The amount cannot be negative."))
    if own == 0:
        raise AmountError(_("Enter an amount greater than zero."))
    try:
        exponent = int(own.normalize().as_tuple().exponent)
    except InvalidOperation:    # pragma: no cover - 32 characters never exceed the context
        raise AmountError(_("Enter a smaller amount.")) from None
    if places is not None and -exponent > places:
        if places == 0:
            raise AmountError(_("This amount is paid in whole units: remove the decimals."))
        raise AmountError(ngettext("Use at most %(num)d decimal.",
                                   "Use at most %(num)d decimals.", places))
    return own
