"""What the upstream is known to write, in the checkout's words, keyed on its exact English.

The upstream writes English: the description of a way to pay, the name of a payout, the sentences
of transfer instructions, why a KYC document was rejected. A field, a transfer detail or a
document the checkout knows by its name or code gets the checkout's own label
(:mod:`checkout.upstream_text`); the texts here have no such key, so they are known by their
words. The table holds every text of the sandbox's catalogue, the faithful copy of what the
upstream sends (tests/views/test_one_language.py checks that none is missing); a text never seen
before has no entry and is shown as sent, marked as English.

Each text is its own message id, so an English page shows it exactly as sent. A sentence that
carries figures is keyed on its words with each figure named in braces: a money
amount as the upstream writes it ("5000 NGN"), or a currency code. The sentence is said with the
amounts as Babel writes money in the page's locale ("₦5,000.00"), as every other amount of the
page, on English pages too.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any

from flask_babel import lazy_gettext as _l

from .i18n import format_money

__all__ = ["TEXTS", "SENTENCES_WITH_FIGURES", "said"]

TEXTS: Mapping[str, Any] = MappingProxyType({
    # Ways to pay: each on-ramp payment channel's description.
    "Bank transfer to a Nigerian account": _l("Bank transfer to a Nigerian account"),
    "Pay with airtime; a USSD code moves the credit":
        _l("Pay with airtime; a USSD code moves the credit"),
    "Mobile wallet (OPay, PalmPay)": _l("Mobile wallet (OPay, PalmPay)"),
    "M-PESA: approve the payment on your phone": _l("M-PESA: approve the payment on your phone"),
    "Pay with Safaricom or Airtel airtime": _l("Pay with Safaricom or Airtel airtime"),
    "Bank transfer (PesaLink)": _l("Bank transfer (PesaLink)"),
    "Pay on your bank's payment page": _l("Pay on your bank's payment page"),
    "EFT to a South African account": _l("EFT to a South African account"),
    "Bank transfer": _l("Bank transfer"),
    "Bank transfer to a Zambian account": _l("Bank transfer to a Zambian account"),
    "Enter the code sent by SMS, then approve the payment on your phone":
        _l("Enter the code sent by SMS, then approve the payment on your phone"),
    "Dial a USSD code on your phone to pay": _l("Dial a USSD code on your phone to pay"),
    "Pay on your mobile money provider's page": _l("Pay on your mobile money provider's page"),
    # Payouts: each off-ramp type's name (also a way to pay's, where it has no description).
    "Bank account": _l("Bank account"),
    "Airtime top-up": _l("Airtime top-up"),
    "Mobile wallet": _l("Mobile wallet"),
    "Mobile money": _l("Mobile money"),
    "M-PESA": _l("M-PESA"),
    "M-PESA Paybill": _l("M-PESA Paybill"),
    # Photos a KYC document asks for (the images field's label says which).
    "Selfie and photos of the front and back of the document":
        _l("Selfie and photos of the front and back of the document"),
    "Selfie and a photo of the document's photo page":
        _l("Selfie and a photo of the document's photo page"),
    # Transfer instructions.
    "Type the narration exactly: a transfer without it cannot be matched to your order.":
        _l("Type the narration exactly: a transfer without it cannot be matched to your order."),
    "Pay on the payment page; you will come back here afterwards.":
        _l("Pay on the payment page; you will come back here afterwards."),
    "Dial the code below on the phone that pays, replace {pin} with your PIN, then confirm that "
    "you have paid.":
        _l("Dial the code below on the phone that pays, replace {pin} with your PIN, then confirm "
           "that you have paid."),
    "Approve the payment request on your phone.": _l("Approve the payment request on your phone."),
    "Enter the code sent to your phone by SMS or WhatsApp.":
        _l("Enter the code sent to your phone by SMS or WhatsApp."),
    # Why a KYC submission was rejected (kycStatusDescription).
    "The documents could not be verified. Check the details and submit them again, or use "
    "another document.":
        _l("The documents could not be verified. Check the details and submit them again, or "
           "use another document."),
    "The ID number was not found in the issuer's records. Check the number, or use another "
    "document.":
        _l("The ID number was not found in the issuer's records. Check the number, or use "
           "another document."),
    "The name or date of birth does not match the document's records. Check them, or use "
    "another document.":
        _l("The name or date of birth does not match the document's records. Check them, or use "
           "another document."),
})

SENTENCES_WITH_FIGURES: Mapping[str, Any] = MappingProxyType({
    "Send exactly {amount} to the account below, with the narration shown, then confirm that you "
    "have paid.":
        _l("Send exactly %(amount)s to the account below, with the narration shown, then confirm "
           "that you have paid."),
    "USSD payments are in whole {currency}: {debited} will be debited for this {amount} order.":
        _l("USSD payments are in whole %(currency)s: %(debited)s will be debited for this "
           "%(amount)s order."),
})

# What each kind of figure looks like in the upstream's words.
_CURRENCY = r"[A-Z]{3}"
_MONEY = r"[0-9]{1,15}(?:\.[0-9]{1,8})? [A-Z]{3}"
_FIGURE = re.compile(r"\{(\w+)\}")
_LONGEST = 1000         # no sentence of the table is near this long


def _pattern(key: str) -> re.Pattern[str]:
    """The sentence ``key`` with its figures as named groups: ``currency``, else money."""
    parts = _FIGURE.split(key)
    pattern = "".join(
        re.escape(part) if i % 2 == 0
        else f"(?P<{part}>{_CURRENCY if part == 'currency' else _MONEY})"
        for i, part in enumerate(parts))
    return re.compile(pattern)


_PATTERNS = tuple((_pattern(key), sentence) for key, sentence in SENTENCES_WITH_FIGURES.items())


def _figure(name: str, written: str) -> str:
    """A figure as the page writes it: money through Babel, a currency code as it is."""
    if name == "currency":
        return written
    number, currency = written.split(" ")
    try:
        return format_money(Decimal(number), currency)
    except (ValueError, InvalidOperation):      # a currency Babel does not know: as sent
        return written


def said(text: str | None) -> str | None:
    """``text`` as the checkout says it in the page's language, or None for a text the table
    does not know."""
    if not text or len(text) > _LONGEST:
        return None
    known = TEXTS.get(text)
    if known is not None:
        return str(known)
    for pattern, sentence in _PATTERNS:
        found = pattern.fullmatch(text)
        if found is not None:
            return str(sentence) % {name: _figure(name, value)
                                    for name, value in found.groupdict().items()}
    return None
