"""Typed results of the upstream client: frozen dataclasses built by ``from_json``.

Each keeps ``raw``, the JSON object as received, so nothing the upstream sends is lost to a reader
that needs a field this module does not name.

Parsing is tolerant where the spec is (it calls every order field optional: a missing field becomes
``None``, an empty list or the documented default) and strict where the checkout cannot go on without
a value: a quote without ``quoteId``, an order without an id, limits without their bounds. A strict
failure, or a value of the wrong JSON type, raises ``UpstreamBadResponse`` naming the type and key.

Money and rates are ``decimal.Decimal`` built from ``str(number)``, so the JSON number 0.1 becomes
``Decimal("0.1")`` and not the binary float's 0.1000000000000000055...; an unbounded KYC rule (``max``
given as the string ``"Infinity"``) becomes ``Decimal("Infinity")``, which compares equal to
``float("inf")`` and, unlike a float, can be added to or subtracted from other amounts.
Date-times are timezone-aware ``datetime`` objects.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Generic, TypeVar

from ..errors import UpstreamBadResponse

T = TypeVar("T")



def _raw() -> Any:
    # Excluded from repr (it may hold e-mail addresses and phone numbers in full) and from equality.
    return field(default_factory=dict, repr=False, compare=False)


def camel(name: str) -> str:
    """``fee_amount_usd_service`` -> ``feeAmountUsdService``: the spec's spelling of a field."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def to_decimal(value: object) -> Decimal:
    """A JSON number (or numeric string) as an exact Decimal; raises ``ValueError`` otherwise."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value))               # shortest repr: 0.1 stays 0.1
    if isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            raise ValueError(f"{value!r} is not a number") from None
        if number.is_nan():
            raise ValueError("NaN is not a number")
        return number
    raise ValueError(f"a {type(value).__name__} is not a number")


def to_datetime(value: object) -> datetime:
    """ISO 8601 text (``Z`` allowed), or a number of milliseconds since the epoch as JavaScript
    writes timestamps; naive values are taken as UTC."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if not isinstance(value, str):
        raise ValueError(f"a {type(value).__name__} is not a date-time")
    moment = datetime.fromisoformat(value.strip())
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class _Reader:
    """Reads one JSON object on behalf of one type; errors name the type and the key."""

    def __init__(self, data: object, type_name: str) -> None:
        if not isinstance(data, Mapping):
            raise UpstreamBadResponse(
                f"{type_name}: expected a JSON object, got {type(data).__name__}", body=data)
        self.data: Mapping[str, Any] = data
        self.type_name = type_name

    def bad(self, key: str, problem: str) -> UpstreamBadResponse:
        return UpstreamBadResponse(f"{self.type_name}: {key} {problem}", body=dict(self.data))

    def _present(self, key: str) -> Any:
        value = self.data.get(key)
        if value is None or value == "":
            raise self.bad(key, "is missing")
        return value

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        return None if value is None else self._as_text(key, value)

    def required_text(self, key: str) -> str:
        return self._as_text(key, self._present(key))

    def _as_text(self, key: str, value: object) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.bad(key, f"is a {type(value).__name__}, not text")
        return str(value)                        # ids and codes sometimes arrive as numbers

    def decimal(self, key: str) -> Decimal | None:
        value = self.data.get(key)
        return None if value is None else self._number(key, value)

    def required_decimal(self, key: str) -> Decimal:
        return self._number(key, self._present(key))

    def _number(self, key: str, value: object) -> Decimal:
        try:
            return to_decimal(value)
        except ValueError as exc:
            raise self.bad(key, f"is not a number ({exc})") from None

    def whole(self, key: str) -> int | None:
        number = self.decimal(key)
        if number is None:
            return None
        if number != number.to_integral_value():
            raise self.bad(key, "is not a whole number")
        return int(number)

    def flag(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, bool):
            raise self.bad(key, f"is a {type(value).__name__}, not a boolean")
        return value

    def flag_or(self, key: str, default: bool) -> bool:
        value = self.flag(key)
        return default if value is None else value

    def moment(self, key: str) -> datetime | None:
        value = self.data.get(key)
        if value is None or value == "":
            return None
        try:
            return to_datetime(value)
        except ValueError:
            raise self.bad(key, "is not a date-time") from None

    def nested(self, key: str, parse: Callable[[Any], T]) -> T | None:
        value = self.data.get(key)
        return None if value is None else parse(value)

    def required_nested(self, key: str, parse: Callable[[Any], T]) -> T:
        return parse(self._present(key))

    def items(self, key: str, parse: Callable[[Any], T]) -> list[T]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.bad(key, f"is a {type(value).__name__}, not a list")
        return [parse(item) for item in value]

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.bad(key, f"is a {type(value).__name__}, not an object")
        return dict(value)

    def decimals(self, cls: type, *, besides: tuple[str, ...] = ()) -> dict[str, Decimal | None]:
        """Every field of ``cls`` but ``raw`` and ``besides``, read as an optional number under its
        camelCase name: for the long money blocks, where a hand-written list would drift."""
        skip = {"raw", *besides}
        return {f.name: self.decimal(camel(f.name)) for f in fields(cls) if f.name not in skip}


def list_of(data: object, parse: Callable[[Any], T], type_name: str) -> list[T]:
    if not isinstance(data, list):
        raise UpstreamBadResponse(f"{type_name}: expected a JSON list, got {type(data).__name__}",
                                  body=data)
    return [parse(item) for item in data]


# ---------------------------------------------------------------------------------------------
# Reference data: assets, countries, channels, carriers, limits


@dataclass(frozen=True, kw_only=True)
class AssetPair:
    network: str
    asset: str
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> AssetPair:
        r = _Reader(data, cls.__name__)
        return cls(network=r.required_text("network"), asset=r.required_text("asset"),
                   raw=r.data)

    @classmethod
    def list_from_json(cls, data: object) -> list[AssetPair]:
        return list_of(data, cls.from_json, cls.__name__)


@dataclass(frozen=True, kw_only=True)
class UtilAsset:
    """An entry of ``/api/util/assets``: a pair and whether each flow supports it."""

    network: str
    asset: str
    can_onramp: bool = False
    can_offramp: bool = False
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> UtilAsset:
        r = _Reader(data, cls.__name__)
        return cls(network=r.required_text("network"), asset=r.required_text("asset"),
                   can_onramp=r.flag_or("canOnramp", False), can_offramp=r.flag_or("canOfframp", False),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class Carrier:
    """A mobile carrier. On-ramp entries carry ``id`` and ``code``, type-based off-ramp entries
    ``id`` only, utility entries ``code`` only."""

    name: str
    id: str | None = None
    code: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> Carrier:
        r = _Reader(data, cls.__name__)
        return cls(name=r.required_text("name"), id=r.text("id"), code=r.text("code"),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class CarrierCountry:
    """An entry of ``/api/util/carriers``."""

    country_iso_code: str
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> CarrierCountry:
        r = _Reader(data, cls.__name__)
        return cls(country_iso_code=r.required_text("countryIsoCode"),
                   carriers=r.items("carriers", Carrier.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OnrampChannel:
    payment_channel: str
    description: str | None = None
    requires_carrier: bool = False
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OnrampChannel:
        r = _Reader(data, cls.__name__)
        return cls(payment_channel=r.required_text("paymentChannel"),
                   description=r.text("description"),
                   requires_carrier=r.flag_or("requiresCarrier", False),
                   carriers=r.items("carriers", Carrier.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OnrampCountry:
    """An entry of ``/api/onramp/payment-channels``."""

    country_iso_code: str
    currency_iso_code: str
    name: str | None = None
    payment_channels: list[OnrampChannel] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OnrampCountry:
        r = _Reader(data, cls.__name__)
        return cls(country_iso_code=r.required_text("countryIsoCode"),
                   currency_iso_code=r.required_text("currencyIsoCode"),
                   name=r.text("name"),
                   payment_channels=r.items("paymentChannels", OnrampChannel.from_json),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OfframpChannel:
    payment_channel: str
    name: str | None = None
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpChannel:
        r = _Reader(data, cls.__name__)
        return cls(payment_channel=r.required_text("paymentChannel"), name=r.text("name"),
                   carriers=r.items("carriers", Carrier.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OfframpChannelCountry:
    """An entry of ``/api/offramp/payment-channels`` (channel-based off-ramp)."""

    country_iso_code: str
    currency_iso_code: str
    name: str | None = None
    payment_channels: list[OfframpChannel] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpChannelCountry:
        r = _Reader(data, cls.__name__)
        return cls(country_iso_code=r.required_text("countryIsoCode"),
                   currency_iso_code=r.required_text("currencyIsoCode"),
                   name=r.text("name"),
                   payment_channels=r.items("paymentChannels", OfframpChannel.from_json),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OfframpType:
    type: str
    name: str | None = None
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpType:
        r = _Reader(data, cls.__name__)
        return cls(type=r.required_text("type"), name=r.text("name"),
                   carriers=r.items("carriers", Carrier.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OfframpTypeCountry:
    """An entry of ``/api/offramp/countries`` (type-based off-ramp)."""

    country_iso_code: str
    currency_iso_code: str
    name: str | None = None
    offramp_types: list[OfframpType] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpTypeCountry:
        r = _Reader(data, cls.__name__)
        return cls(country_iso_code=r.required_text("countryIsoCode"),
                   currency_iso_code=r.required_text("currencyIsoCode"),
                   name=r.text("name"),
                   offramp_types=r.items("offrampTypes", OfframpType.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Order amount bounds of one corridor (fees applied). Off-ramp limits have no crypto bounds."""

    min_usd: Decimal
    max_usd: Decimal
    min_local_currency: Decimal
    max_local_currency: Decimal
    min_crypto: Decimal | None = None
    max_crypto: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @property
    def available(self) -> bool:
        """False for a corridor the upstream cannot price: it answers 200 with every limit 0
        (upstream-notes 2). An empty range (max below min) cannot take an order either."""
        return (self.max_usd > 0 and self.max_local_currency > 0
                and self.max_usd >= self.min_usd
                and self.max_local_currency >= self.min_local_currency)

    @classmethod
    def from_json(cls, data: object) -> Limits:
        r = _Reader(data, cls.__name__)
        return cls(min_usd=r.required_decimal("minUsd"),
                   max_usd=r.required_decimal("maxUsd"),
                   min_local_currency=r.required_decimal("minLocalCurrency"),
                   max_local_currency=r.required_decimal("maxLocalCurrency"),
                   min_crypto=r.decimal("minCrypto"), max_crypto=r.decimal("maxCrypto"),
                   raw=r.data)


# ---------------------------------------------------------------------------------------------
# Required fields (spec 2.2): the form the user fills in for an offer, a KYC document or a confirm


@dataclass(frozen=True, kw_only=True)
class Option:
    value: str
    label: str
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> Option:
        r = _Reader(data, cls.__name__)
        value = r.required_text("value")
        return cls(value=value, label=r.text("label") or value, raw=r.data)


@dataclass(frozen=True, kw_only=True)
class RequiredField:
    """One field descriptor. ``required`` defaults to True when absent: asking for a field the
    upstream did not need costs the user a keystroke, omitting one it needs fails the order."""

    name: str
    type: str = "string"
    label: str = ""
    required: bool = True
    options: list[Option] = field(default_factory=list)
    format: str | None = None
    regexp: str | None = None
    regexp_flags: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object, name: str | None = None) -> RequiredField:
        r = _Reader(data, cls.__name__)
        name = name or r.text("name") or r.text("key") or r.text("id")
        if not name:
            raise r.bad("name", "is missing")
        return cls(name=name, type=r.text("type") or "string", label=r.text("label") or name,
                   required=r.flag_or("required", True),
                   options=r.items("options", Option.from_json), format=r.text("format"),
                   regexp=r.text("regexp"), regexp_flags=r.text("regexpFlags"), raw=r.data)


def required_fields_from_json(data: object) -> list[RequiredField]:
    """``requiredFields`` as a list in the upstream's order.

    The spec gives an object keyed by field name; ``fieldsToConfirmOrder`` is described as a list of
    descriptors, each then naming itself (``name``, ``key`` or ``id``). Both shapes are read.
    """
    if data is None:
        return []
    if isinstance(data, Mapping):
        return [RequiredField.from_json(value, name=str(name)) for name, value in data.items()]
    if isinstance(data, list):
        return [RequiredField.from_json(item) for item in data]
    raise UpstreamBadResponse(f"requiredFields: expected an object or a list, got "
                              f"{type(data).__name__}", body=data)


def _required_fields(r: _Reader, key: str) -> list[RequiredField]:
    return required_fields_from_json(r.data.get(key))


# ---------------------------------------------------------------------------------------------
# On-ramp


@dataclass(frozen=True, kw_only=True)
class OnrampCashout:
    """The price breakdown of an on-ramp quote (spec 2.3): totals before and after fees, and each
    fee split into the service's part and the partner's part."""

    local_currency_amount: Decimal | None = None
    total_amount_usd: Decimal | None = None
    withdraw_amount_usd: Decimal | None = None
    total_amount_crypto: Decimal | None = None
    withdraw_amount_crypto: Decimal | None = None
    fee_percent: Decimal | None = None
    fee_percent_service: Decimal | None = None
    fee_percent_partner: Decimal | None = None
    fee_amount_usd: Decimal | None = None
    fee_amount_usd_service: Decimal | None = None
    fee_amount_usd_partner: Decimal | None = None
    fee_amount_local_currency: Decimal | None = None
    fee_amount_local_currency_service: Decimal | None = None
    fee_amount_local_currency_partner: Decimal | None = None
    fee_amount_crypto: Decimal | None = None
    fee_amount_crypto_service: Decimal | None = None
    fee_amount_crypto_partner: Decimal | None = None
    gas_amount_usd: Decimal | None = None
    gas_amount_local_currency: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OnrampCashout:
        r = _Reader(data, cls.__name__)
        return cls(**r.decimals(cls), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OnrampOffer:
    country_iso_code: str | None = None
    currency_iso_code: str | None = None
    exchange_rate: Decimal | None = None
    crypto_exchange_rate: Decimal | None = None
    payment_channel: str | None = None
    required_fields: list[RequiredField] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OnrampOffer:
        r = _Reader(data, cls.__name__)
        return cls(country_iso_code=r.text("countryIsoCode"),
                   currency_iso_code=r.text("currencyIsoCode"),
                   exchange_rate=r.decimal("exchangeRate"),
                   crypto_exchange_rate=r.decimal("cryptoExchangeRate"),
                   payment_channel=r.text("paymentChannel"),
                   required_fields=_required_fields(r, "requiredFields"), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OnrampQuote:
    """The answer of ``/api/onramp/best-offer``; ``quote_id`` is what an order is created from."""

    quote_id: str
    offer: OnrampOffer
    cashout: OnrampCashout
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OnrampQuote:
        r = _Reader(data, cls.__name__)
        return cls(quote_id=r.required_text("quoteId"),
                   offer=r.required_nested("offer", OnrampOffer.from_json),
                   cashout=r.required_nested("cashout", OnrampCashout.from_json),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class TransferDetail:
    """One line the user copies to pay by hand (bank name, account number, amount, narration...)."""

    id: str
    label: str
    value: str
    description: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> TransferDetail:
        r = _Reader(data, cls.__name__)
        detail_id = r.required_text("id")
        return cls(id=detail_id, label=r.text("label") or detail_id,
                   value=r.required_text("value"), description=r.text("description"),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class TransferInstructions:
    """How the user pays for an on-ramp order: a tagged union on ``type`` (upstream-notes 3).

    ``manual`` uses ``transfer_details``; ``redirect`` uses ``payment_url``; ``ussd`` uses
    ``ussd_code`` (which may hold a ``{pin}`` placeholder); ``stk_push`` and ``otp_stk_push`` use the
    ``intermediate_action_*`` fields (retrying the push), ``otp_stk_push`` also ``otp_verified``.
    Fields of the other variants are ``None``. Unknown types are kept as they come so that a new
    variant degrades to its ``instructions_text`` instead of breaking the order page.
    """

    MANUAL = "manual"
    REDIRECT = "redirect"
    USSD = "ussd"
    STK_PUSH = "stk_push"
    OTP_STK_PUSH = "otp_stk_push"

    type: str
    instructions_text: str | None = None
    warning_text: str | None = None
    transfer_details: list[TransferDetail] = field(default_factory=list)
    fields_to_confirm_order: list[RequiredField] = field(default_factory=list)
    payment_url: str | None = None
    redirected_to_payment_url: bool | None = None
    ussd_code: str | None = None
    is_intermediate_action_available: bool | None = None
    intermediate_action_max_attempts: int | None = None
    intermediate_action_attempts: int | None = None
    intermediate_action_next_attempt_available_at: datetime | None = None
    intermediate_action_timeout_ms: int | None = None
    otp_verified: bool | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> TransferInstructions:
        r = _Reader(data, cls.__name__)
        return cls(
            type=r.required_text("type"),
            instructions_text=r.text("instructionsText"),
            warning_text=r.text("warningText"),
            transfer_details=r.items("transferDetails", TransferDetail.from_json),
            fields_to_confirm_order=_required_fields(r, "fieldsToConfirmOrder"),
            payment_url=r.text("paymentUrl"),
            redirected_to_payment_url=r.flag("redirectedToPaymentUrl"),
            ussd_code=r.text("ussdCode"),
            is_intermediate_action_available=r.flag("isIntermediateActionAvailable"),
            intermediate_action_max_attempts=r.whole("intermediateActionMaxAttempts"),
            intermediate_action_attempts=r.whole("intermediateActionAttempts"),
            intermediate_action_next_attempt_available_at=r.moment(
                "intermediateActionNextAttemptAvailableAt"),
            intermediate_action_timeout_ms=r.whole("intermediateActionTimeoutMs"),
            otp_verified=r.flag("otpVerified"),
            raw=r.data,
        )

    def detail(self, detail_id: str) -> TransferDetail | None:
        return next((d for d in self.transfer_details if d.id == detail_id), None)


_ONRAMP_ORDER_NUMBERS = (
    "local_currency_amount", "amount", "amount_crypto",
    "fee_percent", "fee_percent_service", "fee_percent_partner",
    "fee_amount_usd", "fee_amount_local_currency",
    "fee_amount_usd_service", "fee_amount_local_currency_service",
    "fee_amount_usd_partner", "fee_amount_local_currency_partner",
    "gas_amount_usd", "gas_amount_local_currency",
)
_ONRAMP_ORDER_TEXTS = (
    "status", "phone_number", "email", "currency_iso_code", "country_iso_code", "payment_channel",
    "network", "asset", "address", "memo", "hash", "order_params", "resume_url", "carrier_id",
    "redirect_url",
)


@dataclass(frozen=True, kw_only=True)
class OnrampOrder:
    """An on-ramp order (spec 2.4). ``id`` is ``_id`` (or ``orderId``, the same value); ``amount``
    is in USD, ``amount_crypto`` in the asset, ``local_currency_amount`` what the user pays."""

    id: str
    status: str | None = None
    date: datetime | None = None
    phone_number: str | None = None
    email: str | None = None
    local_currency_amount: Decimal | None = None
    currency_iso_code: str | None = None
    country_iso_code: str | None = None
    payment_channel: str | None = None
    amount: Decimal | None = None
    amount_crypto: Decimal | None = None
    network: str | None = None
    asset: str | None = None
    address: str | None = None
    memo: str | None = None
    hash: str | None = None
    order_params: str | None = None
    resume_url: str | None = None
    carrier_id: str | None = None
    fee_percent: Decimal | None = None
    fee_percent_service: Decimal | None = None
    fee_percent_partner: Decimal | None = None
    fee_amount_usd: Decimal | None = None
    fee_amount_local_currency: Decimal | None = None
    fee_amount_usd_service: Decimal | None = None
    fee_amount_local_currency_service: Decimal | None = None
    fee_amount_usd_partner: Decimal | None = None
    fee_amount_local_currency_partner: Decimal | None = None
    gas_amount_usd: Decimal | None = None
    gas_amount_local_currency: Decimal | None = None
    transfer_instructions: TransferInstructions | None = None
    redirect_url: str | None = None
    # Not in spec 2.4, but sent alongside it: ``updated_at`` orders status changes (notes 4).
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OnrampOrder:
        r = _Reader(data, cls.__name__)
        order_id = r.text("_id") or r.text("orderId")
        if not order_id:
            raise r.bad("_id", "is missing (and so is orderId)")
        plain: dict[str, Any] = {name: r.text(camel(name)) for name in _ONRAMP_ORDER_TEXTS}
        plain.update((name, r.decimal(camel(name))) for name in _ONRAMP_ORDER_NUMBERS)
        return cls(
            id=order_id,
            date=r.moment("date"),
            created_at=r.moment("createdAt"),
            updated_at=r.moment("updatedAt"),
            expires_at=r.moment("expiresAt"),
            transfer_instructions=r.nested("transferInstructions",
                                           TransferInstructions.from_json),
            **plain,
            raw=r.data,
        )


@dataclass(frozen=True, kw_only=True)
class Page(Generic[T]):
    """One page of an orders list; pass ``next_cursor`` as ``cursor`` for the next one."""

    items: list[T]
    next_cursor: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object, parse_item: Callable[[Any], T]) -> Page[T]:
        r = _Reader(data, "Page")
        return cls(items=r.items("list", parse_item), next_cursor=r.text("nextCursor") or None,
                   raw=r.data)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


# ---------------------------------------------------------------------------------------------
# Legacy on-ramp (/api/pay-widget-merchant)


@dataclass(frozen=True, kw_only=True)
class LegacyBuySwap:
    id: str | None = None
    buyer_user_phone: str | None = None
    buyer_user_email: str | None = None
    seller_user_phone: str | None = None
    amount: Decimal | None = None               # in cents of the local currency
    airtime_amount: Decimal | None = None
    status: str | None = None
    provider: str | None = None
    expires_at: datetime | None = None
    created_at: datetime | None = None
    buyer_confirmed_at: datetime | None = None
    country_iso_code: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyBuySwap:
        r = _Reader(data, cls.__name__)
        return cls(id=r.text("_id"), buyer_user_phone=r.text("buyerUserPhone"),
                   buyer_user_email=r.text("buyerUserEmail"),
                   seller_user_phone=r.text("sellerUserPhone"), amount=r.decimal("amount"),
                   airtime_amount=r.decimal("airtimeAmount"), status=r.text("status"),
                   provider=r.text("provider"), expires_at=r.moment("expiresAt"),
                   created_at=r.moment("createdAt"),
                   buyer_confirmed_at=r.moment("buyerConfirmedAt"),
                   country_iso_code=r.text("countryIsoCode"), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LegacyWithdrawal:
    id: str | None = None
    status: str | None = None
    withdraw_amount: Decimal | None = None       # USD
    withdraw_crypto_amount: Decimal | None = None
    transaction_hash: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyWithdrawal:
        r = _Reader(data, cls.__name__)
        return cls(id=r.text("_id"), status=r.text("status"),
                   withdraw_amount=r.decimal("withdrawAmount"),
                   withdraw_crypto_amount=r.decimal("withdrawCryptoAmount"),
                   transaction_hash=r.text("transactionHash"), raw=r.data)


_LEGACY_ORDER_NUMBERS = (
    "fee_percent", "service_fee_percent", "partner_fee_percent", "gas_usd_amount",
    "fee_amount", "local_currency_fee_amount", "service_fee_amount",
    "local_currency_service_fee_amount", "partner_fee_amount", "local_currency_partner_fee_amount",
    "network_fee_amount", "local_currency_network_fee_amount",
)


@dataclass(frozen=True, kw_only=True)
class LegacyOrder:
    """A legacy on-ramp order (spec 2.5); ``wallet_type`` is the network."""

    id: str
    wallet_type: str | None = None
    asset: str | None = None
    wallet_address: str | None = None
    merchant_id: str | None = None
    created_at: datetime | None = None
    buy_swap: LegacyBuySwap | None = None
    withdrawal: LegacyWithdrawal | None = None
    resume_url: str | None = None
    fee_percent: Decimal | None = None
    service_fee_percent: Decimal | None = None
    partner_fee_percent: Decimal | None = None
    gas_usd_amount: Decimal | None = None
    fee_amount: Decimal | None = None
    local_currency_fee_amount: Decimal | None = None
    service_fee_amount: Decimal | None = None
    local_currency_service_fee_amount: Decimal | None = None
    partner_fee_amount: Decimal | None = None
    local_currency_partner_fee_amount: Decimal | None = None
    network_fee_amount: Decimal | None = None
    local_currency_network_fee_amount: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyOrder:
        r = _Reader(data, cls.__name__)
        return cls(id=r.required_text("_id"), wallet_type=r.text("walletType"),
                   asset=r.text("asset"), wallet_address=r.text("walletAddress"),
                   merchant_id=r.text("merchantId"), created_at=r.moment("createdAt"),
                   buy_swap=r.nested("buySwap", LegacyBuySwap.from_json),
                   withdrawal=r.nested("withdrawal", LegacyWithdrawal.from_json),
                   resume_url=r.text("resumeUrl"),
                   **{name: r.decimal(camel(name)) for name in _LEGACY_ORDER_NUMBERS},
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LegacyPrice:
    """The legacy price response (spec 2.6). The ``usdc_*`` fields are deprecated upstream."""

    quote_id: str
    crypto_total_amount: Decimal | None = None
    crypto_withdraw_amount: Decimal | None = None
    crypto_fee_amount: Decimal | None = None
    crypto_gas_amount: Decimal | None = None
    local_currency_amount: Decimal | None = None
    fee_percent: Decimal | None = None
    service_fee_percent: Decimal | None = None
    partner_fee_percent: Decimal | None = None
    total_amount: Decimal | None = None
    withdraw_amount: Decimal | None = None
    fee_amount: Decimal | None = None
    local_currency_fee_amount: Decimal | None = None
    service_fee_amount: Decimal | None = None
    local_currency_service_fee_amount: Decimal | None = None
    partner_fee_amount: Decimal | None = None
    local_currency_partner_fee_amount: Decimal | None = None
    network_fee_amount: Decimal | None = None
    local_currency_network_fee_amount: Decimal | None = None
    usdc_total_amount: Decimal | None = None
    usdc_withdraw_amount: Decimal | None = None
    usdc_fee_amount: Decimal | None = None
    usdc_gas_amount: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyPrice:
        r = _Reader(data, cls.__name__)
        return cls(quote_id=r.required_text("quoteId"),
                   **r.decimals(cls, besides=("quote_id",)), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class MinMax:
    min: Decimal | None = None
    max: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> MinMax:
        r = _Reader(data, cls.__name__)
        return cls(min=r.decimal("min"), max=r.decimal("max"), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LocalCurrencyLimits:
    """``open_range`` uses min, max, step and with_cents; ``fixed_list`` uses ``values``."""

    OPEN_RANGE = "open_range"
    FIXED_LIST = "fixed_list"

    type: str | None = None
    min: Decimal | None = None
    max: Decimal | None = None
    step: Decimal | None = None
    with_cents: bool | None = None
    values: list[Decimal] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LocalCurrencyLimits:
        r = _Reader(data, cls.__name__)

        def number(value: object) -> Decimal:
            try:
                return to_decimal(value)
            except ValueError:
                raise r.bad("values", "holds something that is not a number") from None

        return cls(type=r.text("type"), min=r.decimal("min"), max=r.decimal("max"),
                   step=r.decimal("step"), with_cents=r.flag("withCents"),
                   values=r.items("values", number), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LegacyFees:
    fee_percent: Decimal | None = None
    service_fee_percent: Decimal | None = None
    partner_fee_percent: Decimal | None = None
    gas_amount: Decimal | None = None
    min_fee: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyFees:
        r = _Reader(data, cls.__name__)
        return cls(**r.decimals(cls), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LegacyLimits:
    """The answer of ``/api/pay-widget-merchant/limits``."""

    crypto_limits: MinMax | None = None
    local_currency_limits: LocalCurrencyLimits | None = None
    fees: LegacyFees | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyLimits:
        r = _Reader(data, cls.__name__)
        return cls(crypto_limits=r.nested("cryptoLimits", MinMax.from_json),
                   local_currency_limits=r.nested("localCurrencyLimits",
                                                  LocalCurrencyLimits.from_json),
                   fees=r.nested("fees", LegacyFees.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LegacyNetworkLimits:
    """One network's entry in a legacy provider's ``limits`` (keyed by network)."""

    crypto_limits: MinMax | None = None
    fees: LegacyFees | None = None
    local_currency: LocalCurrencyLimits | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyNetworkLimits:
        r = _Reader(data, cls.__name__)
        return cls(crypto_limits=r.nested("cryptoLimits", MinMax.from_json),
                   fees=r.nested("fees", LegacyFees.from_json),
                   local_currency=r.nested("localCurrency", LocalCurrencyLimits.from_json),
                   raw=r.data)


def _limits_by_network(r: _Reader) -> dict[str, LegacyNetworkLimits]:
    return {str(network): LegacyNetworkLimits.from_json(value)
            for network, value in r.mapping("limits").items()}


@dataclass(frozen=True, kw_only=True)
class LegacyCarrier:
    id: str | None = None
    name: str | None = None
    limits: dict[str, LegacyNetworkLimits] = field(default_factory=dict)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyCarrier:
        r = _Reader(data, cls.__name__)
        return cls(id=r.text("id"), name=r.text("name"), limits=_limits_by_network(r), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LegacyProvider:
    name: str
    description: str | None = None
    requires_carrier: bool = False
    limits: dict[str, LegacyNetworkLimits] = field(default_factory=dict)
    carriers: list[LegacyCarrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyProvider:
        r = _Reader(data, cls.__name__)
        return cls(name=r.required_text("name"), description=r.text("description"),
                   requires_carrier=r.flag_or("requiresCarrier", False),
                   limits=_limits_by_network(r),
                   carriers=r.items("carriers", LegacyCarrier.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class LegacyProviderCountry:
    """An entry of ``/api/pay-widget-merchant/providers``."""

    country_iso_code: str
    currency_iso_code: str | None = None
    providers: list[LegacyProvider] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> LegacyProviderCountry:
        r = _Reader(data, cls.__name__)
        return cls(country_iso_code=r.required_text("countryIsoCode"),
                   currency_iso_code=r.text("currencyIsoCode"),
                   providers=r.items("providers", LegacyProvider.from_json), raw=r.data)


# ---------------------------------------------------------------------------------------------
# Off-ramp


@dataclass(frozen=True, kw_only=True)
class OfframpCashout:
    """The off-ramp price breakdown (spec 2.3)."""

    local_currency_amount: Decimal | None = None
    usd_amount: Decimal | None = None
    crypto_amount: Decimal | None = None
    fee_amount_usd: Decimal | None = None
    fee_amount_usd_service: Decimal | None = None
    fee_amount_usd_partner: Decimal | None = None
    fee_amount_local_currency: Decimal | None = None
    fee_amount_local_currency_service: Decimal | None = None
    fee_amount_local_currency_partner: Decimal | None = None
    fee_amount_crypto: Decimal | None = None
    fee_amount_crypto_service: Decimal | None = None
    fee_amount_crypto_partner: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpCashout:
        r = _Reader(data, cls.__name__)
        return cls(**r.decimals(cls), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OfframpOffer:
    """The offer of an off-ramp best-offer. Channel-based offers carry ``payment_channel``;
    type-based ones carry ``type`` and ``offer_id`` (their ``_id``)."""

    offer_id: str | None = None
    country_iso_code: str | None = None
    currency_iso_code: str | None = None
    exchange_rate: Decimal | None = None
    payment_channel: str | None = None
    type: str | None = None
    required_fields: list[RequiredField] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpOffer:
        r = _Reader(data, cls.__name__)
        return cls(offer_id=r.text("_id"), country_iso_code=r.text("countryIsoCode"),
                   currency_iso_code=r.text("currencyIsoCode"),
                   exchange_rate=r.decimal("exchangeRate"),
                   payment_channel=r.text("paymentChannel"), type=r.text("type"),
                   required_fields=_required_fields(r, "requiredFields"), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OfframpQuote:
    """An off-ramp best-offer: ``quote_id`` (channel-based) or ``offer_id`` (type-based), never
    neither, since an order cannot be created without one of them."""

    offer: OfframpOffer
    cashout: OfframpCashout
    quote_id: str | None = None
    offer_id: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpQuote:
        r = _Reader(data, cls.__name__)
        offer = r.required_nested("offer", OfframpOffer.from_json)
        quote_id = r.text("quoteId")
        if not quote_id and not offer.offer_id:
            raise r.bad("quoteId", "is missing and the offer has no _id")
        return cls(offer=offer, cashout=r.required_nested("cashout", OfframpCashout.from_json),
                   quote_id=quote_id, offer_id=offer.offer_id, raw=r.data)


@dataclass(frozen=True, kw_only=True)
class StatusChange:
    status: str
    changed_at: datetime | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> StatusChange:
        r = _Reader(data, cls.__name__)
        return cls(status=r.required_text("status"), changed_at=r.moment("changedAt"),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class SuppliedField:
    """A field as the user supplied it on an off-ramp order, with its display value."""

    label: str | None = None
    type: str | None = None
    value: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> SuppliedField:
        r = _Reader(data, cls.__name__)
        return cls(label=r.text("label"), type=r.text("type"), value=r.text("value"), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class OfframpOrder:
    """An off-ramp order (spec 2.7). ``to_address`` is where the user sends the crypto.

    ``status_history`` is kept as received: list responses may repeat a status twice in a row.
    """

    id: str
    offer_id: str | None = None
    payment_type: str | None = None
    network: str | None = None
    asset: str | None = None
    payment_channel: str | None = None
    exchange_rate: Decimal | None = None
    cashout: OfframpCashout | None = None
    from_address: str | None = None
    to_address: str | None = None
    status: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None                # sent alongside spec 2.7
    expires_at: datetime | None = None
    hash: str | None = None
    status_history: list[StatusChange] = field(default_factory=list)
    required_fields: dict[str, Any] = field(default_factory=dict)
    country_iso_code: str | None = None
    currency_iso_code: str | None = None
    offer_required_fields: list[SuppliedField] = field(default_factory=list)
    user_phone_number: str | None = None
    user_email: str | None = None
    order_params: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> OfframpOrder:
        r = _Reader(data, cls.__name__)
        texts = ("offer_id", "payment_type", "network", "asset", "payment_channel",
                 "from_address", "to_address", "status", "hash", "country_iso_code",
                 "currency_iso_code", "user_phone_number", "user_email", "order_params")
        return cls(id=r.required_text("_id"),
                   exchange_rate=r.decimal("exchangeRate"),
                   cashout=r.nested("cashout", OfframpCashout.from_json),
                   created_at=r.moment("createdAt"), updated_at=r.moment("updatedAt"),
                   expires_at=r.moment("expiresAt"),
                   status_history=r.items("statusHistory", StatusChange.from_json),
                   required_fields=r.mapping("requiredFields"),
                   offer_required_fields=r.items("offerRequiredFields", SuppliedField.from_json),
                   **{name: r.text(camel(name)) for name in texts},
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class FieldDetail:
    """What ``/api/offramp/validate-fields`` found, e.g. the account holder's name to check."""

    label: str
    value: str
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> FieldDetail:
        r = _Reader(data, cls.__name__)
        label = r.required_text("label")
        return cls(label=label, value=r.text("value") or "", raw=r.data)


def field_details_from_json(data: object) -> list[FieldDetail]:
    """The answer of ``/api/offramp/validate-fields``: ``{details: [{label, value}]}``."""
    return _Reader(data, "ValidatedFields").items("details", FieldDetail.from_json)


# ---------------------------------------------------------------------------------------------
# Utility, KYC and user


@dataclass(frozen=True, kw_only=True)
class KycRule:
    """Orders from ``min`` up to ``max`` need KYC of ``type`` (none, basic, advanced)."""

    type: str
    min: Decimal = Decimal(0)
    max: Decimal = Decimal("Infinity")
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> KycRule:
        r = _Reader(data, cls.__name__)
        upper = r.decimal("max")                 # absent means unbounded, like "Infinity"
        return cls(type=r.required_text("type"), min=r.decimal("min") or Decimal(0),
                   max=Decimal("Infinity") if upper is None else upper, raw=r.data)

    def covers(self, amount: Decimal) -> bool:
        return self.min <= amount <= self.max


@dataclass(frozen=True, kw_only=True)
class KycRules:
    onramp: list[KycRule] = field(default_factory=list)
    offramp: list[KycRule] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> KycRules:
        r = _Reader(data, cls.__name__)
        return cls(onramp=r.items("onramp", KycRule.from_json),
                   offramp=r.items("offramp", KycRule.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class KycThreshold:
    """An entry of ``onrampKycRules``/``offrampKycRules`` in the KYC state."""

    type: str
    min_amount: Decimal | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> KycThreshold:
        r = _Reader(data, cls.__name__)
        return cls(type=r.required_text("type"), min_amount=r.decimal("minAmount"),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class KycDocument:
    """A kind of identity document and the fields its submission needs. ``value`` is what
    ``kyc_submit(id_type=...)`` takes; ``id`` (``_id``) is what ``user_kyc_submit`` takes."""

    title: str | None = None
    value: str | None = None
    type: str | None = None
    id: str | None = None
    required_fields: list[RequiredField] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> KycDocument:
        r = _Reader(data, cls.__name__)
        return cls(title=r.text("title"), value=r.text("value"), type=r.text("type"),
                   id=r.text("_id"), required_fields=_required_fields(r, "requiredFields"),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class UtilCountry:
    """An entry of ``/api/util/countries``: documents accepted and KYC rules by amount."""

    country_iso_code: str
    currency_iso_code: str | None = None
    name: str | None = None
    basic_documents: list[KycDocument] = field(default_factory=list)
    advanced_documents: list[KycDocument] = field(default_factory=list)
    kyc_rules: KycRules = field(default_factory=KycRules)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> UtilCountry:
        r = _Reader(data, cls.__name__)
        return cls(country_iso_code=r.required_text("countryIsoCode"),
                   currency_iso_code=r.text("currencyIsoCode"), name=r.text("name"),
                   basic_documents=r.items("basicDocuments", KycDocument.from_json),
                   advanced_documents=r.items("advancedDocuments", KycDocument.from_json),
                   kyc_rules=r.nested("kycRules", KycRules.from_json) or KycRules(),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class KycState:
    """The answer of ``/api/kyc/state``."""

    kyc_url: str | None = None
    onramp_kyc_rules: list[KycThreshold] = field(default_factory=list)
    offramp_kyc_rules: list[KycThreshold] = field(default_factory=list)
    passed_kyc: bool = False
    kyc_status: str | None = None
    kyc_status_description: str | None = None
    reached_kyc_limit: bool = False
    document_types: list[KycDocument] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> KycState:
        r = _Reader(data, cls.__name__)
        return cls(kyc_url=r.text("kycUrl"),
                   onramp_kyc_rules=r.items("onrampKycRules", KycThreshold.from_json),
                   offramp_kyc_rules=r.items("offrampKycRules", KycThreshold.from_json),
                   passed_kyc=r.flag_or("passedKyc", False), kyc_status=r.text("kycStatus"),
                   kyc_status_description=r.text("kycStatusDescription"),
                   reached_kyc_limit=r.flag_or("reachedKycLimit", False),
                   document_types=r.items("documentTypes", KycDocument.from_json), raw=r.data)


@dataclass(frozen=True, kw_only=True)
class UserKycStatus:
    """The answer of ``/api/user/kyc/status``."""

    passed_kyc_type: str | None = None
    kyc_status: str | None = None
    kyc_status_description: str | None = None
    reached_kyc_limit: bool = False
    basic_documents: list[KycDocument] = field(default_factory=list)
    advanced_documents: list[KycDocument] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> UserKycStatus:
        r = _Reader(data, cls.__name__)
        return cls(passed_kyc_type=r.text("passedKycType"), kyc_status=r.text("kycStatus"),
                   kyc_status_description=r.text("kycStatusDescription"),
                   reached_kyc_limit=r.flag_or("reachedKycLimit", False),
                   basic_documents=r.items("basicDocuments", KycDocument.from_json),
                   advanced_documents=r.items("advancedDocuments", KycDocument.from_json),
                   raw=r.data)


@dataclass(frozen=True, kw_only=True)
class UserTokens:
    """A user's JWTs. They are credentials: kept out of ``repr`` (and ``raw`` is, as everywhere)."""

    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> UserTokens:
        r = _Reader(data, cls.__name__)
        return cls(access_token=r.required_text("accessToken"),
                   refresh_token=r.required_text("refreshToken"), raw=r.data)


def success_from_json(data: object, type_name: str) -> bool:
    """``{success: boolean}`` answers (KYC submissions)."""
    r = _Reader(data, type_name)
    success = r.flag("success")
    if success is None:
        raise r.bad("success", "is missing")
    return success


def address_used_from_json(data: object) -> bool:
    """The answer of ``/api/util/check-address``: ``{used: boolean}``."""
    r = _Reader(data, "AddressCheck")
    used = r.flag("used")
    if used is None:
        raise r.bad("used", "is missing")
    return used
