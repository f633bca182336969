"""Bank account numbers a payout or a payment names: read as people type them, and checked by
the country's national format, whatever the offer's descriptor says.

The partner may publish its own rule in the descriptor (``regexp``: :mod:`checkout.forms` checks
it), or none. A country with one national format has it either way: every Nigerian account number
is a NUBAN of ten digits, so "abc", "12" or "💸" can be no one's account and is refused at its
field, before the partner's payee check (``validate-fields``) or an order is asked for it. Where
each bank has its own length (Kenya, Ghana, South Africa) only the descriptor can say more.

The NUBAN's last digit is a check digit over the bank's CBN code; it is not checked here: the
bank codes of the partner's options ("011:02") are its own, and a wrong refusal would stop a
user whose account is real.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

__all__ = ["BANK_ACCOUNT_FIELDS", "NATIONAL_FORMATS", "NationalFormat", "clean_bank_account_number"]

# The descriptor keys that name a bank account (upstream-notes 7).
BANK_ACCOUNT_FIELDS = frozenset({"bankAccountNumber", "buyerBankAccountNumber"})


@dataclass(frozen=True)
class NationalFormat:
    """A country where every bank account number has the same number of digits."""

    digits: int
    message: Any            # said at the field to a number that is not one (lazy text)


NATIONAL_FORMATS: Mapping[str, NationalFormat] = MappingProxyType({
    # NUBAN, the Central Bank of Nigeria's standard for every bank's accounts.
    "NG": NationalFormat(10, _l("Enter your 10-digit Nigerian account number (NUBAN).")),
})

# What people group the digits with when they copy a number from an app or a statement.
_SEPARATORS = re.compile(r"[\s.\-]+")


def clean_bank_account_number(raw: str, country: str | None) -> str:
    """The account number as the partner takes it: the spaces, dots and dashes that group its
    digits removed. Raises ``ValueError`` with a message for the user when it cannot be an
    account number (of ``country``, where it has a national format)."""
    number = _SEPARATORS.sub("", raw)
    national = NATIONAL_FORMATS.get(country or "")
    if national is not None:
        if not (number.isascii() and number.isdigit() and len(number) == national.digits):
            raise ValueError(str(national.message))
        return number
    # Anywhere else an account number is letters and digits (most banks use digits only).
    if not (number.isascii() and number.isalnum()):
        raise ValueError(_("Enter the account number with its digits (and letters, if it has "
                           "any) only."))
    return number
