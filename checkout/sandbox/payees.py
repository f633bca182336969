"""Who an off-ramp payout would reach: the sandbox's stand-in for the upstream's payee check.

``POST /api/offramp/validate-fields`` exists so the user can see, before sending crypto, whose
account the money will land in (upstream-notes 5). A real check ends in one of three ways, and a
merchant's checkout must handle each, so the sandbox produces all three, chosen by the account
number or phone number itself (magic suffixes, documented in ``docs/sandbox.md``):

- *found*: the account exists and its holder's name is known (every number not listed below);
- *not verifiable*: the partner cannot name the holder now (airtime and paybill always: a phone
  top-up or a bill account has no holder name to show; any bank account number or mobile-money
  phone number ending in :data:`UNVERIFIABLE_SUFFIX`);
- *mismatch*: no such account (a bank account number or mobile-money phone number ending in
  :data:`NO_ACCOUNT_SUFFIX`): the upstream refuses the details with a 400 saying so.

Before any of these, a bank account number must have the country's format
(:data:`.reference.ACCOUNT_FORMATS`: a Nigerian NUBAN has ten digits): the bank's own check
cannot find a holder for a number that cannot exist, so such a number is refused with a 400 even
if an offer's descriptor let it through.

An order to an account that does not exist is refused the same way at creation: the upstream would
never take crypto for a payout it already knows cannot be made.
"""
from __future__ import annotations

import hashlib
from typing import Any

from . import reference
from .validation import InvalidRequest

NO_ACCOUNT_SUFFIX = "0404"          # "not found"
UNVERIFIABLE_SUFFIX = "0503"        # "the check is unavailable"
HOLDER_LABEL = "Account name"

# The field that names the account for each off-ramp type that can be checked at all.
_ACCOUNT_FIELD = {"bank": "bankAccountNumber", "mobile_money": "phoneNumber"}


def holder_name(account: str) -> str:
    """A stable made-up name for an account, so the user sees the same check on every try."""
    first = ("Amina", "Chidi", "Wanjiru", "Kwame", "Thandiwe", "Moussa", "Nia", "Tunde")
    last = ("Okafor", "Mwangi", "Mensah", "Diallo", "Naidoo", "Otieno", "Adeyemi", "Banda")
    digest = hashlib.sha256(account.encode()).digest()
    return f"{first[digest[0] % len(first)]} {last[digest[1] % len(last)]}"


def _option_label(descriptor: dict[str, Any] | None, value: str | None) -> str | None:
    for option in (descriptor or {}).get("options", []):
        if option["value"] == value:
            label: str = option["label"]
            return label
    return None


def _no_account_message(offramp_type: str, fields: dict[str, str],
                        descriptors: dict[str, dict[str, Any]], channel_name: str) -> str:
    account = fields[_ACCOUNT_FIELD[offramp_type]]
    if offramp_type == "bank":
        bank = _option_label(descriptors.get("bankCode"), fields.get("bankCode")) or "the bank"
        return (f"No account with the number {account} exists at {bank}. "
                "Check the account number and the bank.")
    provider = _option_label(descriptors.get("carrierId"), fields.get("carrierId")) or channel_name
    return (f"No {provider} account is registered to the phone number {account}. "
            "Check the phone number" + (" and the mobile network." if "carrierId" in fields else "."))


def _check_account_format(country: str, account: str) -> None:
    rule = reference.ACCOUNT_FORMATS.get(country)
    if rule is not None and not rule.matches(account):
        raise InvalidRequest(f"A {rule.name} has {rule.digits}; {account} is not one. "
                             "Check the account number.")


def check_payee(offramp_type: str, fields: dict[str, str],
                descriptors: dict[str, dict[str, Any]], channel_name: str,
                country: str) -> str | None:
    """The account holder's name, or None when it cannot be checked; 400 when there is no account
    (or the number cannot be one of ``country``'s).

    ``fields`` are values already checked against the offer's ``descriptors``.
    """
    key = _ACCOUNT_FIELD.get(offramp_type)
    account = fields.get(key) if key else None
    if not account:
        return None                 # airtime and paybill: nothing to put a name to
    if offramp_type == "bank":
        _check_account_format(country, account)
    if account.endswith(NO_ACCOUNT_SUFFIX):
        raise InvalidRequest(_no_account_message(offramp_type, fields, descriptors, channel_name))
    if account.endswith(UNVERIFIABLE_SUFFIX):
        return None
    return holder_name(account)
