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

import functools
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Generic, Self, TypeVar, Union, get_args, get_origin, get_type_hints

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

    def numbers(self, key: str) -> list[Decimal]:
        return self.items(key, functools.partial(self._number, key))

    def fields_of(self, cls: type, *, besides: tuple[str, ...] = ()) -> dict[str, Any]:
        """The fields of ``cls`` found in this object, each read as its annotation says, but
        ``raw`` and ``besides``. Absent optional fields are left out, so the dataclass's defaults
        apply."""
        found = {}
        for name, read in _plan(cls):
            if name not in besides and (value := read(self)) is not None:
                found[name] = value
        return found


def list_of(data: object, parse: Callable[[Any], T], type_name: str) -> list[T]:
    if not isinstance(data, list):
        raise UpstreamBadResponse(f"{type_name}: expected a JSON list, got {type(data).__name__}",
                                  body=data)
    return [parse(item) for item in data]


def spelled(key: str, **kwargs: Any) -> Any:
    """A field the upstream spells otherwise than as its name in camelCase (``_id``)."""
    return field(metadata={"key": key}, **kwargs)


class FromJson:
    """What the types below share: ``from_json`` reads each field of the dataclass under its
    camelCase name (or the key given by ``spelled``), in the way its annotation says.

    ``str``, ``Decimal``, ``int``, ``bool`` and ``datetime`` are read as such; another type of this
    module through its own ``from_json``; ``list[...]`` item by item; ``dict[str, Any]`` as the
    object it is. A field without a default is required. Each field is so named once, in its
    class: a hand-written reader per type would name it a second time, and could drift from it.
    """

    @classmethod
    def from_json(cls, data: object) -> Self:
        r = _Reader(data, cls.__name__)
        return cls(**r.fields_of(cls) | {"raw": r.data})


Read = Callable[[_Reader], Any]


@functools.cache
def _plan(cls: type) -> tuple[tuple[str, Read], ...]:
    """How to read each field of ``cls``: worked out once per type from its annotations."""
    hints = get_type_hints(cls)
    return tuple(
        (f.name, _reader(hints[f.name], f.metadata.get("key") or camel(f.name),
                         required=f.default is MISSING and f.default_factory is MISSING))
        for f in fields(cls) if f.name != "raw")


_SCALARS: dict[Any, tuple[Callable[..., Any], Callable[..., Any] | None]] = {
    # type: (read when optional, read when required)
    str: (_Reader.text, _Reader.required_text),
    Decimal: (_Reader.decimal, _Reader.required_decimal),
    int: (_Reader.whole, None),
    bool: (_Reader.flag, None),
    datetime: (_Reader.moment, None),
}


def _reader(hint: Any, key: str, *, required: bool) -> Read:
    if get_origin(hint) in (Union, types.UnionType):         # X | None
        (hint,) = (arg for arg in get_args(hint) if arg is not type(None))
    origin, args = get_origin(hint), get_args(hint)
    if origin is list:
        (item,) = args
        if item is RequiredField:                  # an object keyed by name, or a list
            return lambda r: required_fields_from_json(r.data.get(key))
        if item is Decimal:
            return lambda r: r.numbers(key)
        parse_item = _parser(item, key)
        return lambda r: r.items(key, parse_item)
    if origin is dict:
        if args[1] is Any:
            return lambda r: r.mapping(key)
        parse_value = _parser(args[1], key)
        return lambda r: {str(k): parse_value(v) for k, v in r.mapping(key).items()}
    if hint in _SCALARS:
        optional, strict = _SCALARS[hint]
        read = strict if required else optional
        if read is None:
            raise TypeError(f"a required {hint.__name__} field ({key}) has no reader")
        return lambda r: read(r, key)
    parse = _parser(hint, key)
    if required:
        return lambda r: r.required_nested(key, parse)
    return lambda r: r.nested(key, parse)


def _parser(hint: Any, key: str) -> Callable[[Any], Any]:
    if not (isinstance(hint, type) and issubclass(hint, FromJson)):
        raise TypeError(f"no reader for {key}: {hint!r}")
    return hint.from_json


# ---------------------------------------------------------------------------------------------
# Reference data: assets, countries, channels, carriers, limits


@dataclass(frozen=True, kw_only=True)
class AssetPair(FromJson):
    network: str
    asset: str
    raw: Mapping[str, Any] = _raw()


    @classmethod
    def list_from_json(cls, data: object) -> list[AssetPair]:
        return list_of(data, cls.from_json, cls.__name__)


@dataclass(frozen=True, kw_only=True)
class UtilAsset(FromJson):
    """An entry of ``/api/util/assets``: a pair and whether each flow supports it."""

    network: str
    asset: str
    can_onramp: bool = False
    can_offramp: bool = False
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class Carrier(FromJson):
    """A mobile carrier. On-ramp entries carry ``id`` and ``code``, type-based off-ramp entries
    ``id`` only, utility entries ``code`` only."""

    name: str
    id: str | None = None
    code: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class CarrierCountry(FromJson):
    """An entry of ``/api/util/carriers``."""

    country_iso_code: str
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OnrampChannel(FromJson):
    payment_channel: str
    description: str | None = None
    requires_carrier: bool = False
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OnrampCountry(FromJson):
    """An entry of ``/api/onramp/payment-channels``."""

    country_iso_code: str
    currency_iso_code: str
    name: str | None = None
    payment_channels: list[OnrampChannel] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OfframpChannel(FromJson):
    payment_channel: str
    name: str | None = None
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OfframpChannelCountry(FromJson):
    """An entry of ``/api/offramp/payment-channels`` (channel-based off-ramp)."""

    country_iso_code: str
    currency_iso_code: str
    name: str | None = None
    payment_channels: list[OfframpChannel] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OfframpType(FromJson):
    type: str
    name: str | None = None
    carriers: list[Carrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OfframpTypeCountry(FromJson):
    """An entry of ``/api/offramp/countries`` (type-based off-ramp)."""

    country_iso_code: str
    currency_iso_code: str
    name: str | None = None
    offramp_types: list[OfframpType] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class Limits(FromJson):
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



# ---------------------------------------------------------------------------------------------
# Required fields (spec 2.2): the form the user fills in for an offer, a KYC document or a confirm


@dataclass(frozen=True, kw_only=True)
class Option(FromJson):
    value: str
    label: str = ""                                # the value, when the upstream gives none
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> Option:
        r = _Reader(data, cls.__name__)
        found = r.fields_of(cls)
        return cls(**found | {"label": found.get("label") or found["value"]}, raw=r.data)


@dataclass(frozen=True, kw_only=True)
class RequiredField(FromJson):
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
        """``name`` is the descriptor's key when they come as an object keyed by name; in a list
        each names itself (``name``, ``key`` or ``id``). An empty type or label is no answer."""
        r = _Reader(data, cls.__name__)
        name = name or r.text("name") or r.text("key") or r.text("id")
        if not name:
            raise r.bad("name", "is missing")
        found = r.fields_of(cls, besides=("name",))
        return cls(**found | {"name": name, "type": found.get("type") or "string",
                              "label": found.get("label") or name}, raw=r.data)


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


# ---------------------------------------------------------------------------------------------
# On-ramp


@dataclass(frozen=True, kw_only=True)
class OnrampCashout(FromJson):
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


@dataclass(frozen=True, kw_only=True)
class OnrampOffer(FromJson):
    country_iso_code: str | None = None
    currency_iso_code: str | None = None
    exchange_rate: Decimal | None = None
    crypto_exchange_rate: Decimal | None = None
    payment_channel: str | None = None
    required_fields: list[RequiredField] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OnrampQuote(FromJson):
    """The answer of ``/api/onramp/best-offer``; ``quote_id`` is what an order is created from."""

    quote_id: str
    offer: OnrampOffer
    cashout: OnrampCashout
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class TransferDetail(FromJson):
    """One line the user copies to pay by hand (bank name, account number, amount, narration...)."""

    id: str
    label: str = ""                                # the id, when the upstream gives none
    value: str
    description: str | None = None
    raw: Mapping[str, Any] = _raw()

    @classmethod
    def from_json(cls, data: object) -> TransferDetail:
        r = _Reader(data, cls.__name__)
        found = r.fields_of(cls)
        return cls(**found | {"label": found.get("label") or found["id"]}, raw=r.data)


@dataclass(frozen=True, kw_only=True)
class TransferInstructions(FromJson):
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


    def detail(self, detail_id: str) -> TransferDetail | None:
        return next((d for d in self.transfer_details if d.id == detail_id), None)


@dataclass(frozen=True, kw_only=True)
class OnrampOrder(FromJson):
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
        return cls(id=order_id, **r.fields_of(cls, besides=("id",)), raw=r.data)


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
class LegacyBuySwap(FromJson):
    id: str | None = spelled("_id", default=None)
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


@dataclass(frozen=True, kw_only=True)
class LegacyWithdrawal(FromJson):
    id: str | None = spelled("_id", default=None)
    status: str | None = None
    withdraw_amount: Decimal | None = None       # USD
    withdraw_crypto_amount: Decimal | None = None
    transaction_hash: str | None = None
    raw: Mapping[str, Any] = _raw()



@dataclass(frozen=True, kw_only=True)
class LegacyOrder(FromJson):
    """A legacy on-ramp order (spec 2.5); ``wallet_type`` is the network."""

    id: str = spelled("_id")
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


@dataclass(frozen=True, kw_only=True)
class LegacyPrice(FromJson):
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


@dataclass(frozen=True, kw_only=True)
class MinMax(FromJson):
    min: Decimal | None = None
    max: Decimal | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class LocalCurrencyLimits(FromJson):
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


@dataclass(frozen=True, kw_only=True)
class LegacyFees(FromJson):
    fee_percent: Decimal | None = None
    service_fee_percent: Decimal | None = None
    partner_fee_percent: Decimal | None = None
    gas_amount: Decimal | None = None
    min_fee: Decimal | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class LegacyLimits(FromJson):
    """The answer of ``/api/pay-widget-merchant/limits``."""

    crypto_limits: MinMax | None = None
    local_currency_limits: LocalCurrencyLimits | None = None
    fees: LegacyFees | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class LegacyNetworkLimits(FromJson):
    """One network's entry in a legacy provider's ``limits`` (keyed by network)."""

    crypto_limits: MinMax | None = None
    fees: LegacyFees | None = None
    local_currency: LocalCurrencyLimits | None = None
    raw: Mapping[str, Any] = _raw()



@dataclass(frozen=True, kw_only=True)
class LegacyCarrier(FromJson):
    id: str | None = None
    name: str | None = None
    limits: dict[str, LegacyNetworkLimits] = field(default_factory=dict)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class LegacyProvider(FromJson):
    name: str
    description: str | None = None
    requires_carrier: bool = False
    limits: dict[str, LegacyNetworkLimits] = field(default_factory=dict)
    carriers: list[LegacyCarrier] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class LegacyProviderCountry(FromJson):
    """An entry of ``/api/pay-widget-merchant/providers``."""

    country_iso_code: str
    currency_iso_code: str | None = None
    providers: list[LegacyProvider] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()



# ---------------------------------------------------------------------------------------------
# Off-ramp


@dataclass(frozen=True, kw_only=True)
class OfframpCashout(FromJson):
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


@dataclass(frozen=True, kw_only=True)
class OfframpOffer(FromJson):
    """The offer of an off-ramp best-offer. Channel-based offers carry ``payment_channel``;
    type-based ones carry ``type`` and ``offer_id`` (their ``_id``)."""

    offer_id: str | None = spelled("_id", default=None)
    country_iso_code: str | None = None
    currency_iso_code: str | None = None
    exchange_rate: Decimal | None = None
    payment_channel: str | None = None
    type: str | None = None
    required_fields: list[RequiredField] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OfframpQuote(FromJson):
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
        found = r.fields_of(cls, besides=("offer_id",))
        offer_id = found["offer"].offer_id
        if not found.get("quote_id") and not offer_id:
            raise r.bad("quoteId", "is missing and the offer has no _id")
        return cls(**found, offer_id=offer_id, raw=r.data)


@dataclass(frozen=True, kw_only=True)
class StatusChange(FromJson):
    status: str
    changed_at: datetime | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class SuppliedField(FromJson):
    """A field as the user supplied it on an off-ramp order, with its display value."""

    label: str | None = None
    type: str | None = None
    value: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OfframpOrder(FromJson):
    """An off-ramp order (spec 2.7). ``to_address`` is where the user sends the crypto.

    ``status_history`` is kept as received: list responses may repeat a status twice in a row.
    """

    id: str = spelled("_id")
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


@dataclass(frozen=True, kw_only=True)
class FieldDetail(FromJson):
    """What ``/api/offramp/validate-fields`` found, e.g. the account holder's name to check."""

    label: str
    value: str = ""        # a detail the partner could not resolve may come empty or null
    raw: Mapping[str, Any] = _raw()



# ---------------------------------------------------------------------------------------------
# The legs of an order as a webhook summarises it (spec 6.2)


@dataclass(frozen=True, kw_only=True)
class LegCashout(FromJson):
    exchange_rate: Decimal | None = None
    exchange_rate_after_fees: Decimal | None = None
    amount_before_fees: Decimal | None = None
    amount_after_fees: Decimal | None = None
    amount_before_fees_usd: Decimal | None = None
    amount_after_fees_usd: Decimal | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class LegTransactionMeta(FromJson):
    transaction_hash: str | None = None
    from_address: str | None = None
    to_address: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class LegTransaction(FromJson):
    meta: LegTransactionMeta | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class OrderLeg(FromJson):
    """One leg of an order (``deposit``, ``payout``, ``refund``): what moved, in
    ``currency_code`` (a currency, or an asset when ``currency_type`` is ``crypto``), and on a
    crypto leg its transaction."""

    payment_channel: str | None = None
    currency_type: str | None = None
    currency_code: str | None = None
    cashout: LegCashout | None = None
    transaction: LegTransaction | None = None
    raw: Mapping[str, Any] = _raw()


def field_details_from_json(data: object) -> list[FieldDetail]:
    """The answer of ``/api/offramp/validate-fields``: ``{details: [{label, value}]}``."""
    return _Reader(data, "ValidatedFields").items("details", FieldDetail.from_json)


# ---------------------------------------------------------------------------------------------
# Utility, KYC and user


@dataclass(frozen=True, kw_only=True)
class KycRule(FromJson):
    """Orders from ``min`` up to ``max`` need KYC of ``type`` (none, basic, advanced)."""

    type: str
    min: Decimal = Decimal(0)
    max: Decimal = Decimal("Infinity")
    raw: Mapping[str, Any] = _raw()


    def covers(self, amount: Decimal) -> bool:
        return self.min <= amount <= self.max


@dataclass(frozen=True, kw_only=True)
class KycRules(FromJson):
    onramp: list[KycRule] = field(default_factory=list)
    offramp: list[KycRule] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class KycThreshold(FromJson):
    """An entry of ``onrampKycRules``/``offrampKycRules`` in the KYC state."""

    type: str
    min_amount: Decimal | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class KycDocument(FromJson):
    """A kind of identity document and the fields its submission needs. ``value`` is what
    ``kyc_submit(id_type=...)`` takes; ``id`` (``_id``) is what ``user_kyc_submit`` takes."""

    title: str | None = None
    value: str | None = None
    type: str | None = None
    id: str | None = spelled("_id", default=None)
    required_fields: list[RequiredField] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class UtilCountry(FromJson):
    """An entry of ``/api/util/countries``: documents accepted and KYC rules by amount."""

    country_iso_code: str
    currency_iso_code: str | None = None
    name: str | None = None
    basic_documents: list[KycDocument] = field(default_factory=list)
    advanced_documents: list[KycDocument] = field(default_factory=list)
    kyc_rules: KycRules = field(default_factory=KycRules)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class KycState(FromJson):
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


@dataclass(frozen=True, kw_only=True)
class UserKycStatus(FromJson):
    """The answer of ``/api/user/kyc/status``."""

    passed_kyc_type: str | None = None
    kyc_status: str | None = None
    kyc_status_description: str | None = None
    reached_kyc_limit: bool = False
    basic_documents: list[KycDocument] = field(default_factory=list)
    advanced_documents: list[KycDocument] = field(default_factory=list)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, kw_only=True)
class UserTokens(FromJson):
    """A user's JWTs. They are credentials: kept out of ``repr`` (and ``raw`` is, as everywhere)."""

    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    raw: Mapping[str, Any] = _raw()



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
