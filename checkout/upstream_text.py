"""Words the upstream writes, on a page in the user's language.

The upstream writes in English: field labels, transfer instructions, document names, reasons. On a
page in French, Swahili or Portuguese, a label the checkout knows (by the field's name, the detail's
id, the document's code, not by its English words) is said in the page's language; so is a text the
upstream is known to send (:mod:`checkout.upstream_phrases`, keyed on its exact words). Anything
else is shown as sent, marked ``lang="en"`` so a screen reader reads it with an English voice
instead of reading English words with a French one. On an English page the upstream's labels are
shown as they are: they may say more than ours (a label such as "Account number (10 digits)").
"""
from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from flask import has_request_context
from flask_babel import get_locale
from flask_babel import lazy_gettext as _l
from markupsafe import Markup, escape

from .i18n import babel_locale, format_money
from .upstream_phrases import said

__all__ = ["UPSTREAM_LANGUAGE", "page_language", "as_sent", "in_page_language", "field_label",
           "detail_label", "detail_description", "detail_amount", "document_title", "instructions_text",
           "country_name", "payee_label", "warning_text", "reason_text",
           "JINJA_GLOBALS"]

UPSTREAM_LANGUAGE = "en"

# Required fields (offers, payees, KYC documents) by name (upstream-notes sections 3, 5 and 7).
FIELD_LABELS = {
    "phoneNumber": _l("Phone number"), "bankCode": _l("Bank"),
    "bankAccountNumber": _l("Account number"), "buyerBankAccountNumber": _l("Account number"),
    "accountNumber": _l("Account number"), "blockchainWalletAddress": _l("Wallet address"),
    "carrierId": _l("Mobile network"),
    "blockchainMemo": _l("Memo"), "blockchainTransactionHash": _l("Transaction hash"),
    "otpCode": _l("Code received by SMS"), "shortCode": _l("Short code"),
    "first_name": _l("First name"), "last_name": _l("Last name"), "dob": _l("Date of birth"),
    "email": _l("Email"), "id_number": _l("ID number"),
}
# Transfer details of an on-ramp order, by id (upstream-notes section 3).
DETAIL_LABELS = {
    "recipientBankName": _l("Bank"), "recipientBankAccountNumber": _l("Account number"),
    "recipientBankAccountName": _l("Account name"), "recipientPhoneNumber": _l("Wallet number"),
    "amountToSend": _l("Amount to send"), "bankTransferNarration": _l("Narration"),
    "recipientWalletAddress": _l("Wallet address"),
}
DETAIL_DESCRIPTIONS = {
    "bankTransferNarration": _l("Type this in the transfer's description field."),
}
# What the partner's account check found (validate-fields details carry a label, no id): the
# labels the notes and the sandbox use, by their English words.
PAYEE_LABELS = {
    "account name": _l("Account name"), "account holder": _l("Account holder"),
    "account holder name": _l("Account holder"), "name": _l("Name"),
    "bank": _l("Bank"), "bank name": _l("Bank"), "account number": _l("Account number"),
    "phone number": _l("Phone number"),
}
# KYC documents by their code (Smile ID's id types, upstream-notes section 7).
DOCUMENT_TITLES = {
    "NATIONAL_ID": _l("National ID"), "PASSPORT": _l("Passport"),
    "DRIVERS_LICENSE": _l("Driving licence"), "ALIEN_CARD": _l("Alien card"),
    "VOTER_ID": _l("Voter's card"), "BVN": _l("Bank Verification Number"),
    "NIN": _l("National Identification Number"), "GHANA_CARD": _l("Ghana Card"),
}
# What each way to pay asks of the user, said by the checkout where the upstream's sentence is
# not one it is known to send (that one is kept beside ours: see instructions_text).
INSTRUCTIONS = {
    "manual": _l("Send the money to the account below, exactly as shown."),
    "redirect": _l("Pay on the payment page; you will come back here afterwards."),
    "ussd": _l("Dial the code below on the phone that pays."),
    "stk_push": _l("Approve the payment request on your phone."),
    "otp_stk_push": _l("Enter the code sent to your phone, then approve the payment request."),
}


def page_language() -> str:
    locale = get_locale() if has_request_context() else None
    return locale.language if locale is not None else UPSTREAM_LANGUAGE


def _translating() -> bool:
    return page_language() != UPSTREAM_LANGUAGE


def as_sent(text: Any) -> Markup:
    """Upstream text as it came: marked with its language when the page is in another one."""
    if text is None or text == "":
        return Markup("")
    if not _translating():
        return escape(text)
    return Markup('<span lang="{}">{}</span>').format(UPSTREAM_LANGUAGE, text)


def in_page_language(text: Any) -> Markup:
    """Upstream text in the page's language where the upstream is known to send it (its figures
    written as the page writes them), else as sent."""
    known = said(text) if isinstance(text, str) else None
    return escape(known) if known is not None else as_sent(text)


def _known(table: dict[str, Any], key: str | None, sent: Any) -> Markup:
    known = table.get(key or "")
    if known is not None and (_translating() or not sent):
        return escape(str(known))
    return in_page_language(sent if sent else key)


def field_label(name: str | None, sent: str | None) -> Markup:
    """A required field's label: ours for a field we know, on a page not in English."""
    return _known(FIELD_LABELS, name, sent)


def detail_label(detail_id: str | None, sent: str | None) -> Markup:
    return _known(DETAIL_LABELS, detail_id, sent)


def detail_description(detail_id: str | None, sent: str | None) -> Markup:
    if not sent and detail_id not in DETAIL_DESCRIPTIONS:
        return Markup("")
    return _known(DETAIL_DESCRIPTIONS, detail_id, sent)


def payee_label(sent: str | None) -> Markup:
    """A label of what the account check found: ours for the ones the partner is known to use."""
    return _known(PAYEE_LABELS, (sent or "").strip().casefold(), sent)


def document_title(code: str | None, sent: str | None) -> Markup:
    return _known(DOCUMENT_TITLES, code, sent)


NARRATION_WARNING = _l("Type the narration exactly as shown: a transfer without it cannot be "
                       "matched to your order.")


def warning_text(instructions: Any) -> tuple[Markup, Markup]:
    """The partner's warning, as :func:`instructions_text` does its instructions: a warning the
    partner is known to send, in the page's language; else in our words where we know what it
    warns of (a bank transfer's narration), the partner's kept beside."""
    sent = getattr(instructions, "warning_text", None)
    known = said(sent)
    if known is not None:
        return escape(known), Markup("")
    details = getattr(instructions, "transfer_details", None) or ()
    narration = any(getattr(d, "id", None) == "bankTransferNarration" for d in details)
    if not sent or not _translating() or not narration:
        return as_sent(sent), Markup("")
    return escape(str(NARRATION_WARNING)), as_sent(sent)


def instructions_text(transfer_type: str | None, sent: str | None, *,
                      page_says: bool = False) -> tuple[Markup, Markup]:
    """What to do, in the page's language: the upstream's sentence where it is known (said once,
    nothing kept beside); else ours for the type, with the upstream's own sentence kept beside
    (English pages show only the upstream's).

    ``page_says``: the page lays out what to do step by step (a USSD code to dial, with its PIN):
    a sentence saying the same is not said again above it. Only one the checkout does not know is
    kept, as sent (it may say more)."""
    known = said(sent)
    if known is not None:
        return (Markup(""), Markup("")) if page_says else (escape(known), Markup(""))
    ours = INSTRUCTIONS.get(transfer_type or "")
    if not _translating() or ours is None:
        return as_sent(sent), Markup("")
    return (Markup("") if page_says else escape(str(ours))), as_sent(sent)


def reason_text(sent: str | None) -> tuple[Markup, Markup]:
    """Why the partner refused, in the page's language where it is a reason the partner is known
    to give, with the partner's own words kept beside: they are what the user quotes to the shop
    or to the partner. Any other reason is shown as sent, said once."""
    known = said(sent)
    if known is None or not _translating():
        return in_page_language(sent), Markup("")
    return escape(known), as_sent(sent)


_AMOUNT = re.compile(r"\s*([0-9]{1,15}(?:\.[0-9]{1,8})?)\s*([A-Z]{3})\s*")


def detail_amount(detail: Any) -> dict[str, str] | None:
    """The amount to send, written as money like every other amount of the page ("5000 NGN" is
    ₦5,000.00), and the bare number to copy into a banking app; None for any other detail."""
    if getattr(detail, "id", None) != "amountToSend":
        return None
    found = _AMOUNT.fullmatch(str(getattr(detail, "value", "") or ""))
    if found is None:
        return None
    number, currency = found.groups()
    try:
        shown = format_money(Decimal(number), currency)
    except (ValueError, ArithmeticError):    # a currency Babel does not know: as sent
        return None
    return {"shown": shown, "number": number}


def country_name(code: str | None, sent: str | None) -> str:
    """A country as the page's language names it (Babel's CLDR names: "Nigéria" in French,
    "Quénia" in Portuguese; in English outside a request), else the upstream's name. Plain
    text: it goes in <option> elements too."""
    named = babel_locale().territories.get((code or "").upper())
    return str(named or sent or code or "")


JINJA_GLOBALS: dict[str, Callable[..., Any]] = {
    "field_label": field_label, "in_page_language": in_page_language,
    "country_name": country_name, "payee_label": payee_label,
    "warning_text": warning_text, "detail_label": detail_label,
    "detail_description": detail_description, "detail_amount": detail_amount,
    "document_title": document_title, "instructions_text": instructions_text,
    "reason_text": reason_text}
