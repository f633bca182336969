"""Forms: the upstream's required-field descriptors (spec 2.2) and the steps of the flow.

Every value a browser sends is checked here, on the server; the pages' ``required``/``inputmode``
attributes are conveniences only. A form is cleaned into a :class:`FormResult`: the cleaned values
and one translated message per field, shown next to that field.

Locked claims: a launch token may lock some choices (``lock``). Their value always comes from the
token; a form that sends a different value back is refused with a message, never trusted.
"""
from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

import phonenumbers
import re2
from babel.lists import format_list
from email_validator import EmailNotValidError, validate_email
from flask_babel import gettext as _
from flask_babel import ngettext
from phonenumbers import PhoneNumberType

from .account_numbers import BANK_ACCOUNT_FIELDS, clean_bank_account_number
from .addresses import AddressError, address_notice, network_has_memo, validate_address, validate_memo
from .i18n import babel_locale
from .typed_amounts import parse_amount
from .upstream.types import RequiredField
from .upstream_text import country_name, field_label

log = logging.getLogger("checkout.forms")

MAX_TEXT = 256           # no descriptor field needs more; bounds what we store and forward


@dataclass
class FormResult:
    """Cleaned values and per-field error messages of one submitted form."""

    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    notices: dict[str, str] = field(default_factory=dict)
    form_error: str | None = None           # about the whole form (shown above it)
    facts: dict[str, Any] = field(default_factory=dict)  # what the checks relied on (for saving)

    @property
    def ok(self) -> bool:
        return not self.errors and self.form_error is None

    @classmethod
    def error(cls, name: str, message: str) -> FormResult:
        return cls(errors={name: message})

    def shown(self) -> dict[str, Any]:
        """What a page shows of this result, as plain data: kept in the session across the
        redirect that follows a refused form (:meth:`restore` makes the result again)."""
        return {"errors": {name: str(text) for name, text in self.errors.items()},
                "notices": {name: str(text) for name, text in self.notices.items()},
                "form_error": None if self.form_error is None else str(self.form_error),
                "facts": {name: self.facts[name] for name in SHOWN_FACTS
                          if self.facts.get(name)}}

    @classmethod
    def restore(cls, shown: Mapping[str, Any]) -> FormResult:
        return cls(errors=dict(shown.get("errors") or {}), notices=dict(shown.get("notices") or {}),
                   form_error=shown.get("form_error"), facts=dict(shown.get("facts") or {}))


# The facts a page shows, each plain data (the others are for saving: a checked document, its
# photos): the answers to a question about a typed amount ("Did you mean 12.5?"), pairs of text.
SHOWN_FACTS = ("amount_suggestions",)


class SessionLike(Protocol):
    claims: dict[str, Any]

    def is_locked(self, name: str) -> bool: ...


def locked_message() -> str:
    return _("This was set by the shop and cannot be changed.")


def take_locked(form: Mapping[str, Any], session: SessionLike, name: str, result: FormResult,
                same: Any = None) -> bool:
    """Put a locked claim's value in ``result``; True when ``name`` is locked.

    A different value sent back is an error (someone edited the page): the claim still wins.
    ``same(a, b)`` compares a submitted value with the claim (default: text equality).
    """
    if not session.is_locked(name):
        return False
    claim = session.claims.get(name)
    result.values[name] = claim
    sent = form.get(name)
    if sent is not None and str(sent).strip() != "":
        equal = same(str(sent).strip(), claim) if same else str(sent).strip() == str(claim)
        if not equal:
            result.errors[name] = locked_message()
    return True


# -- required-field descriptors (spec 2.2) --------------------------------------------------------

@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str | None, flags: str | None = None) -> Any | None:
    """The descriptor's ``regexp`` compiled with re2 (linear time: the pattern comes from outside).

    JavaScript's flags: ``i`` case-insensitive, ``s`` a dot matches a newline too, ``m`` ^ and $
    at each line; the others (``g``, ``u``, ``y``, ``d``, ``v``) change nothing for one ``test()``.
    A pattern re2 cannot compile (back-references, look-arounds) is logged and ignored: the
    upstream checks the value again, and a user must not be stuck on our side.
    """
    if not pattern:
        return None
    flags = flags or ""
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = "i" not in flags
    options.dot_nl = "s" in flags
    if "m" in flags:
        pattern = f"(?m){pattern}"
    try:
        return re2.compile(pattern, options)
    except re2.error:
        log.warning("required-field pattern refused by re2, checking without it: %r", pattern)
        return None


def normalise_phone(value: str, country: str | None) -> str:
    """A phone number as E.164 digits without '+', the upstream's samples' shape (2348012345678).

    Local numbers (0801 234 5678) are read with ``country`` as the region. Raises ``ValueError``
    with a user-safe message.
    """
    try:
        number = phonenumbers.parse(value, country or None)
    except phonenumbers.NumberParseException:
        raise ValueError(_("Enter a phone number, for example with its country code.")) from None
    # The message names the country the number must be of, with a number of its shape: a
    # Kenyan number typed for a Nigerian payment otherwise reads as a miscount of digits.
    example = _example_phone(country)
    if not phonenumbers.is_valid_number(number):
        if example is not None:
            raise ValueError(_("This phone number is not valid in %(country)s. Check the number "
                               "of digits (for example %(example)s).",
                               country=country_name(country, None), example=example))
        raise ValueError(_("This phone number is not valid. Check the number of digits."))
    if country and phonenumbers.region_code_for_number(number) != country:
        if example is not None:
            raise ValueError(_("Enter a phone number from %(country)s (for example %(example)s).",
                               country=country_name(country, None), example=example))
        raise ValueError(_("Enter a phone number of the country you pay from."))
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")


def _example_phone(country: str | None) -> str | None:
    """A mobile number of ``country`` as its people write it (0802 123 4567), or None."""
    example = phonenumbers.example_number_for_type(country, PhoneNumberType.MOBILE) \
        if country else None
    if example is None:
        return None
    return phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.NATIONAL)


def normalise_email(value: str) -> str:
    """An email address as email-validator normalises it, in ASCII as the upstream takes it.

    No DNS (deliverability is unknowable here). The upstream refuses an address whose part before
    the @ is not ASCII (``💸🚀@example.com``): refused here too, at the field, before the order is
    confirmed. A domain written in another script is sent in its ASCII (IDNA) form.
    """
    try:
        checked = validate_email(value, check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError:
        raise ValueError(_("Enter a valid email address, like name@example.com. Use only "
                           "Latin letters, digits and . _ - + before the @.")) from None
    return str(checked.ascii_email or checked.normalized)


# The descriptor types the pages know (spec 2.1); photos (``smile-identity-images``) are asked by
# the KYC step's own inputs, not as a text field.
FIELD_TYPES = frozenset({"string", "date", "email", "phone", "enum"})
PHOTOS_TYPE = "smile-identity-images"
_unknown_types: set[str] = set()


def field_kind(spec: RequiredField) -> str:
    """How a descriptor is asked: its type when the pages know it, else a plain text field (an
    enum without options too: a select with nothing to choose would stop the user). An unknown
    type is logged once per process, so a new upstream type is noticed without flooding logs."""
    kind = (spec.type or "string").strip().lower()
    if kind == "enum" and not spec.options:
        return "string"
    if kind in FIELD_TYPES or kind == PHOTOS_TYPE:
        return kind
    if kind not in _unknown_types:
        _unknown_types.add(kind)
        log.warning("unknown field type %r (field %r): asked as plain text", kind[:40],
                    spec.name[:40])
    return "string"


# What a browser's ``pattern`` attribute can mirror exactly: the whole value (``^...$``) made of
# letters, digits, \d and simple classes of them, each optionally repeated. The attribute is
# compiled with JavaScript's ``v`` flag (where a class like ``[ -]`` is a syntax error) and has no
# case-insensitive flag, so anything else is checked on the server only.
_SIMPLE_ATOM = r"(?:\[(?:[A-Za-z0-9](?:-[A-Za-z0-9])?| )+\]|[A-Za-z0-9]|\\d)(?:\{\d+(?:,\d*)?\}|[+*?])?"
_SIMPLE_PATTERN = re.compile(rf"\^(?:{_SIMPLE_ATOM})+\$")


def browser_pattern(spec: RequiredField) -> str | None:
    """The descriptor's ``regexp`` for the ``pattern`` attribute, where it means the same there."""
    if not spec.regexp or set(spec.regexp_flags or "") - {"g", "u"}:
        return None
    if not _SIMPLE_PATTERN.fullmatch(spec.regexp) or compile_pattern(spec.regexp) is None:
        return None
    return spec.regexp[1:-1]


def describe_format(fmt: str | None) -> str | None:
    """The upstream's ``format`` with what its placeholders stand for: "00000000" alone reads
    like a number to type (and a real check refuses all zeros), so it is "00000000 (0: any
    digit)". Only the length and the kinds of characters are the upstream's to say; the
    pattern it enforces may allow more, so no count is put into words."""
    if not fmt:
        return None
    legend = []
    if "0" in fmt:
        legend.append(_("0: any digit"))
    if "A" in fmt:
        legend.append(_("A: any letter"))
    if not legend:
        return fmt
    return f"{fmt} ({format_list(legend, style='unit', locale=babel_locale())})"


def _clean_descriptor_value(spec: RequiredField, raw: str, country: str | None) -> str:
    kind = field_kind(spec)
    if kind == "enum":
        if raw not in {option.value for option in spec.options}:
            raise ValueError(_("Choose one of the options."))
        return raw
    if kind == "phone":
        cleaned = normalise_phone(raw, country)
    elif kind == "string" and spec.name in BANK_ACCOUNT_FIELDS:
        # The country's national format first (a NUBAN has ten digits), whatever the pattern.
        cleaned = clean_bank_account_number(raw, country)
    elif kind == "email":
        cleaned = normalise_email(raw)
    elif kind == "date":
        try:
            cleaned = date.fromisoformat(raw).isoformat()
        except ValueError:
            raise ValueError(_("Enter a date as YYYY-MM-DD.")) from None
    else:
        cleaned = raw
    pattern = compile_pattern(spec.regexp, spec.regexp_flags)
    # JavaScript's RegExp.test semantics (search; the pattern carries its own anchors). Either the
    # typed or the normalised spelling may be the one the pattern was written for.
    if pattern is not None and not (pattern.search(raw) or pattern.search(cleaned)):
        if kind == "string" and pattern.search(cleaned.upper()):
            # Document numbers are printed in capitals and typed in whatever case the phone's
            # keyboard gives: "ak1234567" is the passport AK1234567.
            return cleaned.upper()
        if spec.format:
            raise ValueError(_("This does not look right. Expected format: %(format)s",
                               format=describe_format(spec.format)))
        raise ValueError(_digits_message(spec.regexp)
                         or _("This does not look right. Check it and try again."))
    return cleaned


# A pattern of digits alone, the whole value: "^[0-9]{10,16}$" (a bank's account numbers).
_DIGITS_RULE = re.compile(r"\^(?:\[0-9\]|\\d)\{(\d+)(?:,(\d+))?\}\$")


def _digits_message(pattern: str | None) -> str | None:
    """What a pattern of digits alone asks, in words ("Enter 10 to 16 digits."); None for any
    other pattern (its words are the upstream's ``format``, when it gives one)."""
    match = _DIGITS_RULE.fullmatch(pattern or "")
    if match is None:
        return None
    low = int(match.group(1))
    high = int(match.group(2) or low)
    if low == high:
        return ngettext("Enter %(num)d digit.", "Enter %(num)d digits.", low)
    return _("Enter %(low)d to %(high)d digits.", low=low, high=high)


def clean_required_fields(specs: Iterable[RequiredField], form: Mapping[str, Any], *,
                          country: str | None, session: SessionLike | None = None) -> FormResult:
    """Clean the offer's required fields; locked claims with the same name win (e.g. phoneNumber)."""
    result = FormResult()
    for spec in specs:
        name = spec.name
        if field_kind(spec) == PHOTOS_TYPE:
            continue                      # photos come as files (checkout.kyc.photos)
        def same(sent: str, claim: Any, spec: RequiredField = spec) -> bool:
            try:
                return (_clean_descriptor_value(spec, sent, country)
                        == _clean_descriptor_value(spec, str(claim), country))
            except ValueError:
                return sent == str(claim)

        if session is not None and take_locked(form, session, name, result, same=same):
            claim = result.values[name]
            if claim not in (None, ""):
                try:
                    result.values[name] = _clean_descriptor_value(spec, str(claim), country)
                except ValueError as exc:
                    result.errors[name] = str(exc)
            continue
        raw = str(form.get(name) or "").strip()
        if not raw:
            if spec.required:
                result.errors[name] = _("This field is required.")
            continue
        if len(raw) > MAX_TEXT:
            result.errors[name] = _("This is too long.")
            continue
        try:
            result.values[name] = _clean_descriptor_value(spec, raw, country)
        except ValueError as exc:
            result.errors[name] = str(exc)
    return result


def display_value(spec: RequiredField | None, value: Any) -> str:
    """A saved field as the user reads it: a phone number grouped the international way (it is
    kept as the upstream's bare digits, 254712345678), an option by its label."""
    text = str(value)
    kind = (spec.type or "").lower() if spec is not None else ""
    if kind == "phone":
        try:
            number = phonenumbers.parse("+" + text.lstrip("+"))
        except phonenumbers.NumberParseException:
            return text
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    if kind == "enum" and spec is not None:
        return next((option.label for option in spec.options if option.value == text), text)
    return text


def phone_example(country: str | None) -> str | None:
    """A mobile number of ``country`` as people there write it, to show what the field expects."""
    if not country:
        return None
    number = phonenumbers.example_number_for_type(country, phonenumbers.PhoneNumberType.MOBILE)
    if number is None:
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)


def input_type(spec: RequiredField) -> str:
    """The HTML input type that brings up the right keyboard on a phone."""
    return {"phone": "tel", "email": "email", "date": "date"}.get(field_kind(spec), "text")


_DIGITS_ONLY = re.compile(r"\^?\[0-9\]\{\d+(,\d+)?\}\$?")


def input_mode(spec: RequiredField) -> str | None:
    """The phone keyboard a field wants beyond its type: digits for account numbers and codes
    (``bankAccountNumber``, ``shortCode``, or a pattern of digits only), else the default."""
    kind = field_kind(spec)
    if kind == "phone":
        return "tel"
    if kind != "string":
        return None
    if spec.name.endswith(("Number", "shortCode")) or (
            spec.regexp and _DIGITS_ONLY.fullmatch(spec.regexp)):
        return "numeric"
    return None


# Browsers fill these KYC fields from the user's own card (spec 4.7's userFields names).
_AUTOCOMPLETE = {"first_name": "given-name", "last_name": "family-name", "dob": "bday",
                 "email": "email"}


@dataclass(frozen=True)
class FieldInput:
    """How one descriptor is asked on a page (``checkout/macros.html``'s ``descriptor_field``):
    the offer's required fields and a KYC document's fields alike."""

    spec: RequiredField
    kind: str                               # field_kind()
    type: str                               # the input's type
    inputmode: str | None
    pattern: str | None                     # browser_pattern()
    autocomplete: str
    hint: str | None                        # the format, or a phone number as people write it
    options: tuple[tuple[str, str], ...]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def label(self) -> str:
        # The upstream's words, or ours on a page in another language (checkout.upstream_text).
        return field_label(self.spec.name, self.spec.label)

    @property
    def required(self) -> bool:
        return self.spec.required


def field_inputs(specs: Iterable[RequiredField], country: str | None) -> list[FieldInput]:
    """The inputs of ``specs``, in order (photos are not among them: see checkout.kyc.photos)."""
    inputs = []
    for spec in specs:
        kind = field_kind(spec)
        if kind == PHOTOS_TYPE:
            continue
        kind_type = input_type(spec)
        hint = _("Format: %(format)s", format=describe_format(spec.format)) \
            if spec.format else None
        if hint is None and kind == "phone":
            example = phone_example(country)
            hint = _("For example %(number)s", number=example) if example else None
        autocomplete = _AUTOCOMPLETE.get(spec.name) or (
            "tel" if kind == "phone" else ("email" if kind == "email" else "off"))
        inputs.append(FieldInput(
            spec=spec, kind=kind, type=kind_type, inputmode=input_mode(spec),
            pattern=browser_pattern(spec), autocomplete=autocomplete, hint=hint,
            options=tuple((o.value, o.label or o.value) for o in spec.options)
            if kind == "enum" else ()))
    return inputs


# -- amounts -------------------------------------------------------------------------------------

class LimitsLike(Protocol):
    min_usd: Decimal
    max_usd: Decimal
    min_local_currency: Decimal
    max_local_currency: Decimal
    min_crypto: Decimal | None
    max_crypto: Decimal | None

    @property
    def available(self) -> bool: ...


def amount_bounds(limits: LimitsLike, currency: str) -> tuple[Decimal | None, Decimal | None]:
    """The bounds of an amount typed in ``currency``: local money, crypto or US dollars."""
    if currency == "crypto":
        return limits.min_crypto, limits.max_crypto
    if currency == "usd":
        return limits.min_usd, limits.max_usd
    return limits.min_local_currency, limits.max_local_currency


AmountFormatter = Callable[[Decimal, str], str]


def check_amount_limits(amount: Decimal, limits: LimitsLike, currency: str,
                        show: AmountFormatter | None = None) -> str | None:
    """The message for an amount outside the corridor's limits, else ``None``.

    ``show(number, currency)`` formats a bound for the user (e.g. with Babel, as money).
    """
    show = show or (lambda number, _currency: _plain(number))
    low, high = amount_bounds(limits, currency)
    if low is not None and amount < low:
        return _("The minimum is %(amount)s.", amount=show(low, currency))
    if high is not None and amount > high:
        return _("The maximum is %(amount)s.", amount=show(high, currency))
    return None


def _plain(number: Decimal) -> str:
    # Formatted for the user by the template; here only for the message, without trailing zeros.
    return f"{number.normalize():f}"


# -- the steps of the flows ---------------------------------------------------------------------

class CatalogLike(Protocol):
    def country(self, code: str | None) -> Any: ...

    def channel(self, country: str | None, channel: str | None) -> Any: ...

    def networks(self) -> list[str]: ...

    def supports(self, network: str | None, asset: str | None) -> bool: ...


def _pick(form: Mapping[str, Any], session: SessionLike, name: str, result: FormResult) -> str:
    if take_locked(form, session, name, result):
        return str(result.values.get(name) or "")
    value = str(form.get(name) or "").strip()
    result.values[name] = value
    return value


def clean_corridor(form: Mapping[str, Any], session: SessionLike,
                   catalog: CatalogLike) -> FormResult:
    """Country, payment channel, carrier (when the channel needs one), network and asset."""
    result = FormResult()
    country_code = _pick(form, session, "countryIsoCode", result)
    country = catalog.country(country_code)
    if country is None:
        result.errors.setdefault("countryIsoCode", _("Choose your country."))
    channel_code = _pick(form, session, "paymentChannel", result)
    channel = catalog.channel(country_code, channel_code) if country is not None else None
    if country is not None and channel is None:
        result.errors.setdefault("paymentChannel", _("Choose how you pay."))
    carrier_code = _pick(form, session, "carrierCode", result)
    if channel is not None and channel.requires_carrier:
        if carrier_code not in {c.code for c in channel.carriers}:
            result.errors.setdefault("carrierCode", _("Choose your mobile network."))
    else:
        result.values["carrierCode"] = None
    network = _pick(form, session, "network", result)
    asset = _pick(form, session, "asset", result)
    known_network = network in catalog.networks()
    if not known_network:
        result.errors.setdefault("network", _("Choose a network."))
    # An empty coin is said at once, beside an empty network: an empty form marks every field
    # to fill in one go, not the coin only after the network is chosen.
    if not asset:
        result.errors.setdefault("asset", _("Choose a coin."))
    elif known_network and not catalog.supports(network, asset):
        result.errors.setdefault("asset", _("This coin is not available on this network."))
    return result


def clean_amount(form: Mapping[str, Any], session: SessionLike, *, locale: Any,
                 currencies: tuple[str, ...], limits: LimitsLike | None,
                 currency_error: str | None = None, check_limits: bool = True,
                 show: AmountFormatter | None = None,
                 places: Mapping[str, int] | None = None) -> FormResult:
    """The amount and what it is in (local money or crypto), within the corridor's limits.

    ``locale`` is how the user writes numbers (:mod:`checkout.typed_amounts`); ``places`` the
    decimals each currency kind allows ("local": 0 for XOF), unchecked for a kind not in it.
    ``check_limits=False`` checks the typing only (while the corridor itself is not valid yet).
    """
    result = FormResult()
    if session.is_locked("amount") and not session.is_locked("currency"):
        # A locked amount is a number in one currency: 100 NGN must not become 100 USDT. Tokens
        # lock the currency with the amount (checkout.launch); this holds for sessions opened
        # before that rule too, with the currency the token gave (or the default, local money).
        currency = str(session.claims.get("currency") or "local")
        sent = str(form.get("currency") or "").strip()
        if sent and sent != currency:
            result.errors["currency"] = locked_message()
        result.values["currency"] = currency
    else:
        currency = _pick(form, session, "currency", result) or "local"
    if currency not in currencies:
        # The flow's page says it in its own words (which currencies it offers).
        result.errors.setdefault("currency",
                                 currency_error or _("Choose what the amount is in."))
        currency = "local"
    result.values["currency"] = currency

    def same_amount(sent: str, claim: Any) -> bool:
        # The read-only field shows the token's number as is ("12.5"), which a French reading
        # would take for 125: either reading that gives the claim back is the same amount.
        for reading in (locale, "en"):
            try:
                if parse_amount(sent, reading) == Decimal(str(claim)):
                    return True
            except (ValueError, InvalidOperation):
                continue
        return False

    if take_locked(form, session, "amount", result, same=same_amount):
        raw = str(result.values.get("amount") or "")
        # A token's amount is a JSON number, not typed text; its precision is the merchant's
        # to get right and the upstream's to refuse, not a question for the user.
        parse_locale, allowed_places = "en", None
    else:
        raw = str(form.get("amount") or "")
        parse_locale, allowed_places = locale, (places or {}).get(currency)
    try:
        amount = parse_amount(raw, parse_locale, allowed_places)
    except ValueError as exc:
        result.errors.setdefault("amount", str(exc))
        # A question ("Did you mean 12.5?") comes with its answers, for the page to offer.
        result.facts["amount_suggestions"] = list(getattr(exc, "suggestions", ()))
        return result
    result.values["amount"] = _plain(amount)
    if not check_limits:
        return result
    if limits is None or not limits.available:
        result.errors.setdefault("amount", _("This payment method is not available right now."))
        return result
    message = check_amount_limits(amount, limits, currency, show)
    if message:
        result.errors.setdefault("amount", message)
    return result


def clean_address(form: Mapping[str, Any], session: SessionLike, result: FormResult, *,
                  network: str) -> None:
    """The wallet address (and memo, where the network has them) for ``network``, checksums
    included, into ``result``."""
    def same_address(sent: str, claim: Any) -> bool:
        try:
            return validate_address(network, sent) == validate_address(network, str(claim))
        except AddressError:
            return sent == str(claim)

    if take_locked(form, session, "address", result, same=same_address):
        raw_address = str(result.values.get("address") or "")
    else:
        raw_address = str(form.get("address") or "")
    try:
        result.values["address"] = validate_address(network, raw_address)
        notice = address_notice(network, raw_address.strip())
        if notice:
            result.notices["address"] = notice
    except AddressError as exc:
        result.errors.setdefault("address", str(exc))

    if network_has_memo(network):
        raw_memo = _pick(form, session, "memo", result)
        try:
            result.values["memo"] = validate_memo(network, raw_memo)
        except AddressError as exc:
            result.errors.setdefault("memo", str(exc))
    else:
        result.values["memo"] = ""


def clean_wallet(form: Mapping[str, Any], session: SessionLike, *, network: str) -> FormResult:
    """The on-ramp's receiving wallet for ``network`` and the email the receipt goes to."""
    result = FormResult()
    clean_address(form, session, result, network=network)
    raw_email = _pick(form, session, "email", result)
    if not raw_email:
        result.errors.setdefault("email", _("Enter your email address: we send the receipt there."))
    else:
        try:
            result.values["email"] = normalise_email(raw_email)
        except ValueError as exc:
            result.errors.setdefault("email", str(exc))
    return result
