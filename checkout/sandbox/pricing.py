"""Quotes and limits of the sandbox upstream: pure functions over ``reference`` data.

All arithmetic is ``Decimal`` with an explicit rounding at every step; results are JSON numbers
(``int`` when whole, else ``float``, which round-trips through ``str`` at these magnitudes).

Units and precision: USD and crypto amounts to 6 places, local currency to the currency's places
(0 for UGX, TZS, XOF, XAF; 2 otherwise).

How a quote is built. One unit is the *anchor*: the unit of the amount the caller fixed (USD for an
on-ramp paid in local money, because the local amount is first turned into the dollars it buys;
crypto for an on-ramp priced in crypto; USD or local for off-ramps). In the anchor unit the total is
rounded against the service's promise (the user never receives more than they paid for), the total
fee is rounded up, the service part half-even, and

    partner part   = fee − service part                 (so fee = service + partner, exactly)
    after fees     = before fees − fee − gas            (so the identity holds exactly)

Every other unit is converted from the anchor amounts with the same rule (before, fee and service
part rounded half-even, the partner part and the after-fees amount derived by subtraction), so the
two identities hold exactly in every unit and each amount agrees with its anchor within one unit of
its last place. Gas is the network fee of an on-ramp payout, quoted apart from the service and
partner fee; it is the same in every quote on a network, so with zero gas "before − fee = after"
holds literally. Off-ramps carry no gas: the user pays the network when sending.

Limits are USD bounds on the amount before fees, per channel (a carrier may override them). Each
limits function derives the bounds in the other units from quotes at those bounds, and the quote
functions check the requested amount against exactly those numbers in the unit the caller chose:
a quote at the minimum or the maximum is accepted, one unit outside is refused. Only the chosen
unit is checked: an on-ramp priced at exactly ``maxCrypto`` may ask for up to one local unit more
than ``maxLocalCurrency`` (the local amount is rounded up so that it pays for the crypto), and is
accepted. Off-ramp local bounds are chosen so that every local amount inside them pays between
``minUsd`` and ``maxUsd``; the other way round, a quote at exactly ``minUsd`` may pay out one local
unit less than ``minLocalCurrency`` (the payout is rounded down), and is accepted. Order creation
must call the same functions (``onramp_quote``/``check_onramp_amount``,
``offramp_quote``/``check_offramp_amount``) with the currency of the order.

Every refusal raises ``PricingError(message)``; the API layer answers HTTP 400 ``{message}``.
Quote ids are not made here: the API layer adds ``quoteId`` (or offer ``_id``) to what these
functions return.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from . import reference as ref
from .reference import Carrier, Country, Fees, Limits

D = Decimal
ZERO = D(0)
Number = int | float


class PricingError(ValueError):
    """The upstream refuses to price this request; ``message`` is safe to show."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---------------------------------------------------------------------------------------------
# Rounding and numbers

def _q(places: int) -> Decimal:
    return D(1).scaleb(-places)


def round_half(value: Decimal, places: int) -> Decimal:
    return value.quantize(_q(places), rounding=ROUND_HALF_EVEN)


def round_down(value: Decimal, places: int) -> Decimal:
    return value.quantize(_q(places), rounding=ROUND_FLOOR)


def round_up(value: Decimal, places: int) -> Decimal:
    return value.quantize(_q(places), rounding=ROUND_CEILING)


def to_number(value: Decimal) -> Number:
    """A JSON number equal to ``value``: ``Decimal(str(to_number(v))) == v``."""
    if value == value.to_integral_value():
        return int(value)
    out = float(value)
    if D(str(out)) != value:   # never silently lose precision on the wire
        raise ArithmeticError(f"{value} does not fit a float exactly")
    return out


def parse_amount(value: Any, places: int, unit: str) -> Decimal:
    """A positive finite amount with at most ``places`` decimals, or ``PricingError``."""
    if isinstance(value, bool) or value is None:
        raise PricingError("amount must be a positive number")
    try:
        amount = D(value.strip()) if isinstance(value, str) else D(str(value))
    except (InvalidOperation, ValueError, TypeError):
        raise PricingError("amount must be a positive number") from None
    if not amount.is_finite() or amount <= 0:
        raise PricingError("amount must be a positive number")
    try:
        exponent = amount.as_tuple().exponent
        assert isinstance(exponent, int)      # finite, checked above
        exact = exponent >= -places or amount == round_half(amount, places)
    except InvalidOperation:   # more digits than any limit allows
        raise PricingError("amount is too large") from None
    if not exact:
        raise PricingError(f"amount has more than {places} decimal places for {unit}")
    return amount


# ---------------------------------------------------------------------------------------------
# Amount blocks

@dataclass(frozen=True)
class Unit:
    """A unit an amount is quoted in: how many of it make one USD, and its decimal places."""

    name: str
    per_usd: Decimal
    places: int


@dataclass(frozen=True)
class Amounts:
    """One quote in one unit: ``before − fee − gas == after``, ``fee == service + partner``."""

    before: Decimal
    fee: Decimal
    service: Decimal
    gas: Decimal

    @property
    def partner(self) -> Decimal:
        return self.fee - self.service

    @property
    def after(self) -> Decimal:
        return self.before - self.fee - self.gas

    def convert(self, source: Unit, target: Unit) -> Amounts:
        """The same quote in ``target``: each part rounded half-even, the rest derived."""
        factor = target.per_usd / source.per_usd

        def conv(v: Decimal) -> Decimal:
            return round_half(v * factor, target.places)

        return Amounts(conv(self.before), conv(self.fee), conv(self.service), conv(self.gas))


def _fee_parts(before: Decimal, fees: Fees, flat: Decimal, minimum: Decimal
               ) -> tuple[Decimal, Decimal]:
    """Exact (service, partner) fee on ``before``, in the unit of ``flat`` and ``minimum``."""
    service = before * fees.service_percent / 100
    partner = before * fees.partner_percent / 100 + flat
    total = service + partner
    if total >= minimum:
        return service, partner
    if total == 0:
        share = fees.service_percent / fees.percent if fees.percent else D(1)
    else:
        share = service / total
    return minimum * share, minimum * (1 - share)


def _fees_in(anchor_before: Decimal, fees: Fees, unit: Unit, rate: Decimal
             ) -> tuple[Decimal, Decimal]:
    """(fee, service part) on ``anchor_before``, rounded in ``unit``: fee up, service half-even."""
    flat = fees.flat_local / rate * unit.per_usd
    service, partner = _fee_parts(anchor_before, fees, flat, fees.min_fee_usd * unit.per_usd)
    fee = round_up(service + partner, unit.places)
    return fee, min(round_half(service, unit.places), fee)


def _solve_before(after_plus_gas: Decimal, fees: Fees, unit: Unit, rate: Decimal) -> Decimal:
    """The exact amount before fees whose ``before − fee`` is ``after_plus_gas``."""
    flat = fees.flat_local / rate * unit.per_usd
    minimum = fees.min_fee_usd * unit.per_usd
    p = fees.percent / 100
    before = (after_plus_gas + flat) / (1 - p)
    if before * p + flat < minimum:
        before = after_plus_gas + minimum
    return before


# ---------------------------------------------------------------------------------------------
# Corridors

@dataclass(frozen=True)
class Corridor:
    """Everything a quote depends on, resolved and validated."""

    country: Country
    channel: str
    fees: Fees
    limits: Limits
    required_fields: tuple[ref.RequiredField, ...]
    network: str
    asset: str
    carrier: Carrier | None = None

    @property
    def rate(self) -> Decimal:
        return self.country.usd_rate

    @property
    def usd(self) -> Unit:
        return Unit("USD", D(1), ref.USD_PLACES)

    @property
    def local(self) -> Unit:
        return Unit(self.country.currency, self.rate, self.country.currency_places)

    @property
    def crypto(self) -> Unit:
        return Unit(self.asset, ref.crypto_per_usd(self.asset), ref.CRYPTO_PLACES)


def _country(iso: Any) -> Country:
    c = ref.country(iso) if isinstance(iso, str) else None
    if c is None:
        raise PricingError(f"country {iso!r} is not supported")
    return c


def _check_pair(network: Any, asset: Any, onramp: bool) -> None:
    pairs = ref.ONRAMP_ASSETS if onramp else ref.OFFRAMP_ASSETS
    if ref.AssetPair(network, asset) not in pairs:
        direction = "on-ramp" if onramp else "off-ramp"
        raise PricingError(f"{asset} on {network} is not supported for {direction}")


def _carrier(channel: ref.OnrampChannel | ref.OfframpChannel, country: Country,
             code: str | None, *, by_id: bool = False) -> Carrier | None:
    name = "carrierId" if by_id else "carrierCode"
    if code in (None, ""):
        if getattr(channel, "requires_carrier", False):
            raise PricingError(f"{name} is required for {channel.channel} in {country.iso}")
        return None
    found = next((c for c in channel.carriers if (c.id if by_id else c.code) == code), None)
    if found is None:
        known = ", ".join((c.id if by_id else c.code) for c in channel.carriers) or "none"
        raise PricingError(f"{name} {code!r} is not offered for {channel.channel} in "
                           f"{country.iso} (offered: {known})")
    return found


def onramp_corridor(network: str, asset: str | None, country: str, payment_channel: str,
                    carrier_code: str | None = None, *, carrier_by_id: bool = False,
                    need_carrier: bool = True) -> Corridor:
    """Resolve an on-ramp corridor or raise ``PricingError`` naming what is wrong.

    ``need_carrier`` False lets a carrier-only channel be resolved without a carrier: its limits
    are then the channel's own (what the limits endpoints show before a carrier is picked).
    """
    c = _country(country)
    if asset is None:
        asset = ref.default_onramp_asset(network) or ""
        if not asset:
            raise PricingError(f"network {network!r} is not supported for on-ramp")
    _check_pair(network, asset, onramp=True)
    channel = c.onramp_channel(payment_channel)
    if channel is None:
        offered = ", ".join(ch.channel for ch in c.onramp)
        raise PricingError(f"paymentChannel {payment_channel!r} is not offered for on-ramp in "
                           f"{c.iso} (offered: {offered})")
    chosen = None
    if need_carrier or carrier_code not in (None, ""):
        chosen = _carrier(channel, c, carrier_code, by_id=carrier_by_id)
    limits = chosen.limits if chosen and chosen.limits else channel.limits
    return Corridor(c, channel.channel, channel.fees, limits, channel.required_fields, network,
                    asset, chosen)


def offramp_corridor(network: str | None, asset: str | None, country: str,
                     payment_channel: str, *, field: str = "paymentChannel") -> Corridor:
    """Resolve an off-ramp corridor; ``network``/``asset`` None when limits ignore them."""
    c = _country(country)
    if network is not None or asset is not None:
        _check_pair(network, asset, onramp=False)
    channel = c.offramp_channel(payment_channel)
    if channel is None:
        offered = ", ".join(ch.channel for ch in c.offramp)
        raise PricingError(f"{field} {payment_channel!r} is not offered for off-ramp in "
                           f"{c.iso} (offered: {offered})")
    return Corridor(c, channel.channel, channel.fees, channel.limits, channel.required_fields,
                    network or "", asset or "USDC")


def _require_available(corridor: Corridor) -> None:
    if not corridor.limits.available:
        raise PricingError(f"{corridor.channel} in {corridor.country.iso} is unavailable at "
                           "the moment; try another payment channel")


# ---------------------------------------------------------------------------------------------
# On-ramp

@dataclass(frozen=True)
class OnrampBreakdown:
    corridor: Corridor
    local_amount: Decimal   # what the user pays
    usd: Amounts
    crypto: Amounts
    local: Amounts          # fees and gas in local currency (``before`` is the local amount)

    def cashout(self) -> dict[str, Number]:
        u, c, loc = self.usd, self.crypto, self.local
        fees = self.corridor.fees
        return {k: to_number(v) for k, v in {
            "localCurrencyAmount": self.local_amount,
            "totalAmountUsd": u.before, "withdrawAmountUsd": u.after,
            "totalAmountCrypto": c.before, "withdrawAmountCrypto": c.after,
            "feePercent": fees.percent, "feePercentService": fees.service_percent,
            "feePercentPartner": fees.partner_percent,
            "feeAmountUsd": u.fee, "feeAmountUsdService": u.service,
            "feeAmountUsdPartner": u.partner,
            "feeAmountLocalCurrency": loc.fee, "feeAmountLocalCurrencyService": loc.service,
            "feeAmountLocalCurrencyPartner": loc.partner,
            "feeAmountCrypto": c.fee, "feeAmountCryptoService": c.service,
            "feeAmountCryptoPartner": c.partner,
            "gasAmountUsd": u.gas, "gasAmountLocalCurrency": loc.gas,
        }.items()}


def _onramp_from_local(corridor: Corridor, local_amount: Decimal) -> OnrampBreakdown:
    usd_unit = corridor.usd
    # The dollars the payment buys, never more.
    before = round_down(local_amount / corridor.rate, usd_unit.places)
    fee, service = _fees_in(before, corridor.fees, usd_unit, corridor.rate)
    usd = Amounts(before, fee, service, ref.GAS_USD[corridor.network])
    return _onramp_breakdown(corridor, local_amount, usd, usd.convert(usd_unit, corridor.crypto))


def _onramp_from_crypto(corridor: Corridor, withdraw: Decimal) -> OnrampBreakdown:
    unit = corridor.crypto
    gas = round_half(ref.GAS_USD[corridor.network] * unit.per_usd, unit.places)
    before = round_up(_solve_before(withdraw + gas, corridor.fees, unit, corridor.rate),
                      unit.places)
    fee = before - withdraw - gas   # absorbs the rounding: the user receives exactly `withdraw`
    exact_service, exact_partner = _fee_parts(
        before, corridor.fees, corridor.fees.flat_local / corridor.rate * unit.per_usd,
        corridor.fees.min_fee_usd * unit.per_usd)
    exact_fee = exact_service + exact_partner
    share = exact_service / exact_fee if exact_fee else D(1)
    crypto = Amounts(before, fee, round_half(fee * share, unit.places), gas)
    usd = crypto.convert(unit, corridor.usd)
    # The local amount pays for at least the dollars quoted.
    local_amount = round_up(usd.before * corridor.rate, corridor.country.currency_places)
    return _onramp_breakdown(corridor, local_amount, usd, crypto)


def _onramp_breakdown(corridor: Corridor, local_amount: Decimal, usd: Amounts, crypto: Amounts
                      ) -> OnrampBreakdown:
    if crypto.after <= 0 or usd.after <= 0:
        raise PricingError("amount does not cover the fees")
    local = usd.convert(corridor.usd, corridor.local)
    return OnrampBreakdown(corridor, local_amount, usd, crypto,
                           Amounts(local_amount, local.fee, local.service, local.gas))


@dataclass(frozen=True)
class OnrampBounds:
    min_usd: Decimal
    max_usd: Decimal
    min_local: Decimal
    max_local: Decimal
    min_crypto: Decimal
    max_crypto: Decimal

    def to_json(self) -> dict[str, Number]:
        return {"minUsd": to_number(self.min_usd), "maxUsd": to_number(self.max_usd),
                "minLocalCurrency": to_number(self.min_local),
                "maxLocalCurrency": to_number(self.max_local),
                "minCrypto": to_number(self.min_crypto), "maxCrypto": to_number(self.max_crypto)}


def _onramp_bounds(corridor: Corridor) -> OnrampBounds:
    if not corridor.limits.available:
        return OnrampBounds(ZERO, ZERO, ZERO, ZERO, ZERO, ZERO)
    lim, places = corridor.limits, corridor.country.currency_places
    min_local = round_up(lim.min_usd * corridor.rate, places)
    max_local = round_down(lim.max_usd * corridor.rate, places)
    return OnrampBounds(
        lim.min_usd, lim.max_usd, min_local, max_local,
        _onramp_from_local(corridor, min_local).crypto.after,
        _onramp_from_local(corridor, max_local).crypto.after,
    )


def show(value: Decimal) -> str:
    """An amount as people read it: no exponent, no trailing zeros."""
    return format(value.normalize(), "f")


def _amount_outside(amount: Decimal, unit: str, low: Decimal, high: Decimal,
                    other: str) -> PricingError:
    side = "below the minimum" if amount < low else "above the maximum"
    return PricingError(f"amount {show(amount)} {unit} is {side}: allowed from {show(low)} to "
                        f"{show(high)} {unit} ({other})")


def _check_onramp(corridor: Corridor, currency: str, amount: Any) -> tuple[Decimal, OnrampBounds]:
    if currency not in ("local", "crypto"):
        raise PricingError("currency must be 'local' or 'crypto'")
    _require_available(corridor)
    bounds = _onramp_bounds(corridor)
    local_code = corridor.country.currency
    local_range = f"{show(bounds.min_local)} to {show(bounds.max_local)} {local_code}"
    crypto_range = f"{show(bounds.min_crypto)} to {show(bounds.max_crypto)} {corridor.asset}"
    if currency == "local":
        value = parse_amount(amount, corridor.country.currency_places, corridor.country.currency)
        if not bounds.min_local <= value <= bounds.max_local:
            raise _amount_outside(value, corridor.country.currency, bounds.min_local,
                                  bounds.max_local, f"{crypto_range} after fees")
    else:
        value = parse_amount(amount, ref.CRYPTO_PLACES, corridor.asset)
        if not bounds.min_crypto <= value <= bounds.max_crypto:
            raise _amount_outside(value, corridor.asset, bounds.min_crypto, bounds.max_crypto,
                                  f"{local_range} before fees")
    return value, bounds


def check_onramp_amount(network: str, asset: str, currency: str, amount: Any, country: str,
                        payment_channel: str, carrier_code: str | None = None) -> Decimal:
    """The validated amount, or ``PricingError``: the very check best-offer and limits use."""
    corridor = onramp_corridor(network, asset, country, payment_channel, carrier_code)
    return _check_onramp(corridor, currency, amount)[0]


def onramp_breakdown(network: str, asset: str, currency: str, amount: Any, country: str,
                     payment_channel: str, carrier_code: str | None = None, *,
                     carrier_by_id: bool = False) -> OnrampBreakdown:
    """The Decimal breakdown behind ``onramp_quote`` (also used by the legacy price)."""
    corridor = onramp_corridor(network, asset, country, payment_channel, carrier_code,
                               carrier_by_id=carrier_by_id)
    value, _ = _check_onramp(corridor, currency, amount)
    if currency == "local":
        return _onramp_from_local(corridor, value)
    return _onramp_from_crypto(corridor, value)


def onramp_limits(network: str, country: str, payment_channel: str, asset: str | None = None,
                  carrier_code: str | None = None) -> dict[str, Number]:
    """``GET /api/onramp/limits``: bounds before fees in USD and local, after fees in crypto.

    An unavailable corridor answers all zeros (notes 2), not an error.
    """
    corridor = onramp_corridor(network, asset, country, payment_channel, carrier_code,
                               need_carrier=False)
    return _onramp_bounds(corridor).to_json()


def onramp_quote(network: str, asset: str, currency: str, amount: Any, country: str,
                 payment_channel: str, carrier_code: str | None = None) -> dict[str, Any]:
    """``GET /api/onramp/best-offer`` without ``quoteId``: ``{offer, cashout}``.

    ``currency`` 'local': ``amount`` is what the user pays. 'crypto': ``amount`` is what the user
    receives after fees, exactly (``withdrawAmountCrypto == amount``).
    """
    b = onramp_breakdown(network, asset, currency, amount, country, payment_channel,
                         carrier_code)
    c = b.corridor
    return {
        "offer": {
            "countryIsoCode": c.country.iso, "currencyIsoCode": c.country.currency,
            "exchangeRate": to_number(c.rate),
            "cryptoExchangeRate": to_number(round_half(c.rate / c.crypto.per_usd,
                                                       ref.CRYPTO_PLACES)),
            "paymentChannel": c.channel,
            "requiredFields": ref.fields_json(c.required_fields),
        },
        "cashout": b.cashout(),
    }


# ---------------------------------------------------------------------------------------------
# Off-ramp

@dataclass(frozen=True)
class OfframpBreakdown:
    corridor: Corridor
    usd: Amounts      # ``before`` is what the user pays in USD
    crypto: Amounts   # ``before`` is the crypto the user sends
    local: Amounts    # ``after`` is the local amount the user receives

    def cashout(self) -> dict[str, Number]:
        u, c, loc = self.usd, self.crypto, self.local
        return {k: to_number(v) for k, v in {
            "localCurrencyAmount": loc.after, "usdAmount": u.before, "cryptoAmount": c.before,
            "feeAmountUsd": u.fee, "feeAmountUsdService": u.service,
            "feeAmountUsdPartner": u.partner,
            "feeAmountLocalCurrency": loc.fee, "feeAmountLocalCurrencyService": loc.service,
            "feeAmountLocalCurrencyPartner": loc.partner,
            "feeAmountCrypto": c.fee, "feeAmountCryptoService": c.service,
            "feeAmountCryptoPartner": c.partner,
        }.items()}


def _offramp_from_usd(corridor: Corridor, paid_usd: Decimal) -> OfframpBreakdown:
    fee, service = _fees_in(paid_usd, corridor.fees, corridor.usd, corridor.rate)
    usd = Amounts(paid_usd, fee, service, ZERO)
    # What the user receives: the dollars left after fees, never rounded up.
    received = round_down(usd.after * corridor.rate, corridor.country.currency_places)
    return _offramp_breakdown(corridor, usd, received)


def _offramp_from_local(corridor: Corridor, received: Decimal) -> OfframpBreakdown:
    usd_unit = corridor.usd
    paid = round_up(_solve_before(received / corridor.rate, corridor.fees, usd_unit,
                                  corridor.rate), usd_unit.places)
    fee, service = _fees_in(paid, corridor.fees, usd_unit, corridor.rate)
    return _offramp_breakdown(corridor, Amounts(paid, fee, service, ZERO), received)


def _offramp_breakdown(corridor: Corridor, usd: Amounts, received: Decimal) -> OfframpBreakdown:
    if usd.after <= 0 or received <= 0:
        raise PricingError("amount does not cover the fees")
    local = usd.convert(corridor.usd, corridor.local)
    local = Amounts(received + local.fee, local.fee, local.service, ZERO)
    return OfframpBreakdown(corridor, usd, usd.convert(corridor.usd, corridor.crypto), local)


@dataclass(frozen=True)
class OfframpBounds:
    min_usd: Decimal
    max_usd: Decimal
    min_local: Decimal
    max_local: Decimal

    def to_json(self) -> dict[str, Number]:
        return {"minUsd": to_number(self.min_usd), "maxUsd": to_number(self.max_usd),
                "minLocalCurrency": to_number(self.min_local),
                "maxLocalCurrency": to_number(self.max_local)}


def _offramp_bounds(corridor: Corridor) -> OfframpBounds:
    lim = corridor.limits
    if not lim.available:
        return OfframpBounds(ZERO, ZERO, ZERO, ZERO)
    # The local bounds are the amounts received whose quotes pay within the USD bounds: the
    # smallest at or above what minUsd buys, the largest at or below what maxUsd buys. What a quote
    # at minUsd pays out is rounded down, so taken as is it would be a local minimum that pays
    # less than minUsd (KE mobile money: 97.06 KES from 0.999961 USD).
    unit = _q(corridor.country.currency_places)
    min_local = _offramp_from_usd(corridor, lim.min_usd).local.after
    while _offramp_from_local(corridor, min_local).usd.before < lim.min_usd:
        min_local += unit
    max_local = _offramp_from_usd(corridor, lim.max_usd).local.after
    while _offramp_from_local(corridor, max_local).usd.before > lim.max_usd:
        max_local -= unit
    return OfframpBounds(lim.min_usd, lim.max_usd, min_local, max_local)


def _check_offramp(corridor: Corridor, currency: str, amount: Any) -> tuple[str, Decimal]:
    """Validate ``amount`` in the caller's unit; returns ('usd'|'local', value in that unit)."""
    if currency not in ("local", "usd", "crypto"):
        raise PricingError("currency must be 'local' or 'usd'")
    _require_available(corridor)
    b = _offramp_bounds(corridor)
    local_code = corridor.country.currency
    local_range = f"{show(b.min_local)} to {show(b.max_local)} {local_code} after fees"
    if currency == "local":
        value = parse_amount(amount, corridor.country.currency_places, corridor.country.currency)
        if not b.min_local <= value <= b.max_local:
            raise _amount_outside(value, corridor.country.currency, b.min_local, b.max_local,
                                  f"{show(b.min_usd)} to {show(b.max_usd)} USD before fees")
        return "local", value
    unit = corridor.crypto if currency == "crypto" else corridor.usd
    sent = parse_amount(amount, unit.places, unit.name)
    # Off-ramp assets are dollar stablecoins, so this conversion is exact; it is kept general.
    value = round_half(sent / unit.per_usd, ref.USD_PLACES)
    if not b.min_usd <= value <= b.max_usd:
        raise _amount_outside(sent, unit.name, b.min_usd * unit.per_usd,
                              b.max_usd * unit.per_usd, local_range)
    return "usd", value


def check_offramp_amount(network: str, asset: str, currency: str, amount: Any, country: str,
                         payment_channel: str) -> Decimal:
    """The validated amount (USD for 'usd'/'crypto', local for 'local') or ``PricingError``."""
    corridor = offramp_corridor(network, asset, country, payment_channel)
    return _check_offramp(corridor, currency, amount)[1]


def offramp_breakdown(network: str, asset: str, currency: str, amount: Any, country: str,
                      payment_channel: str, *, field: str = "paymentChannel"
                      ) -> OfframpBreakdown:
    corridor = offramp_corridor(network, asset, country, payment_channel, field=field)
    unit, value = _check_offramp(corridor, currency, amount)
    if unit == "local":
        return _offramp_from_local(corridor, value)
    return _offramp_from_usd(corridor, value)


def _offramp_offer(b: OfframpBreakdown, key: str) -> dict[str, Any]:
    c = b.corridor
    return {"countryIsoCode": c.country.iso, "currencyIsoCode": c.country.currency,
            "exchangeRate": to_number(c.rate),
            "requiredFields": ref.fields_json(c.required_fields), key: c.channel}


def offramp_limits(network: str, asset: str, country: str, payment_channel: str
                   ) -> dict[str, Number]:
    """``GET /api/offramp/limits`` (channel-based): USD paid and local received, fees applied."""
    return _offramp_bounds(offramp_corridor(network, asset, country, payment_channel)).to_json()


def offramp_quote(network: str, asset: str, currency: str, amount: Any, country: str,
                  payment_channel: str) -> dict[str, Any]:
    """``GET /api/offramp/best-offer`` (channel-based) without ``quoteId``: ``{offer, cashout}``.

    ``currency`` 'usd': ``amount`` is the USD the user pays; 'crypto': the crypto the user sends
    (the same number for the dollar stablecoins of the off-ramp list); 'local': the local amount
    the user receives after fees, exactly.
    """
    b = offramp_breakdown(network, asset, currency, amount, country, payment_channel)
    return {"offer": _offramp_offer(b, "paymentChannel"), "cashout": b.cashout()}


def offramp_typed_limits(type: str, country: str, network: str | None = None,
                         asset: str | None = None) -> dict[str, Number]:
    """``GET /api/offramp/limits?type=&country=`` (type-based variant, notes 5)."""
    return _offramp_bounds(offramp_corridor(network, asset, country, type, field="type")
                           ).to_json()


def offramp_typed_quote(network: str, asset: str, currency: str, amount: Any, country: str,
                        type: str) -> dict[str, Any]:
    """Type-based ``best-offer`` without the offer ``_id``: ``{offer: {..., type}, cashout}``."""
    b = offramp_breakdown(network, asset, currency, amount, country, type, field="type")
    return {"offer": _offramp_offer(b, "type"), "cashout": b.cashout()}


# ---------------------------------------------------------------------------------------------
# Legacy pay-widget (spec 4.2, 2.6)

def _legacy_channel(country: Country, provider: str) -> str:
    channel = ref.LEGACY_PROVIDERS.get(provider)
    if channel is None or country.onramp_channel(channel) is None or \
            ref.legacy_provider_name(country.iso, channel) != provider:
        offered = ", ".join(ref.legacy_provider_name(country.iso, ch.channel)
                            for ch in country.onramp)
        raise PricingError(f"provider {provider!r} is not offered in {country.iso} "
                           f"(offered: {offered})")
    return channel


def _legacy_corridor(network: str, asset: str | None, country: str, provider: str,
                     carrier_id: str | None, *, need_carrier: bool = True) -> Corridor:
    c = _country(country)
    return onramp_corridor(network, asset, c.iso, _legacy_channel(c, provider), carrier_id,
                           carrier_by_id=True, need_carrier=need_carrier)


def airtime_values(corridor: Corridor) -> tuple[Decimal, ...]:
    """Airtime is sold in fixed denominations: the 1-2-5 series inside the local limits."""
    bounds = _onramp_bounds(corridor)
    values: list[Decimal] = []
    step = D(1)
    while step <= bounds.max_local:
        for m in (1, 2, 5):
            v = step * m
            if bounds.min_local <= v <= bounds.max_local:
                values.append(v)
        step *= 10
    return tuple(values)


def _legacy_local_limits(corridor: Corridor) -> dict[str, Any]:
    bounds = _onramp_bounds(corridor)
    with_cents = corridor.country.currency_places > 0
    if corridor.channel == "airtime" and corridor.limits.available:
        values = airtime_values(corridor)
        return {"type": "fixed_list", "min": to_number(values[0]), "max": to_number(values[-1]),
                "step": 1, "withCents": False, "values": [to_number(v) for v in values]}
    return {"type": "open_range", "min": to_number(bounds.min_local),
            "max": to_number(bounds.max_local), "step": 1, "withCents": with_cents}


def _legacy_crypto_limits(corridor: Corridor) -> dict[str, Number]:
    if corridor.channel == "airtime" and corridor.limits.available:
        values = airtime_values(corridor)
        return {"min": to_number(_onramp_from_local(corridor, values[0]).crypto.after),
                "max": to_number(_onramp_from_local(corridor, values[-1]).crypto.after)}
    bounds = _onramp_bounds(corridor)
    return {"min": to_number(bounds.min_crypto), "max": to_number(bounds.max_crypto)}


def _legacy_fees(corridor: Corridor) -> dict[str, Number]:
    f = corridor.fees
    return {"feePercent": to_number(f.percent), "serviceFeePercent": to_number(f.service_percent),
            "partnerFeePercent": to_number(f.partner_percent),
            "gasAmount": to_number(ref.GAS_USD[corridor.network]),
            "minFee": to_number(f.min_fee_usd)}


def _legacy_limits_block(corridor: Corridor) -> dict[str, Any]:
    return {"cryptoLimits": _legacy_crypto_limits(corridor),
            "localCurrencyLimits": _legacy_local_limits(corridor),
            "fees": _legacy_fees(corridor)}


def legacy_limits(network: str, country: str, provider: str, asset: str | None = None,
                  carrier_id: str | None = None) -> dict[str, Any]:
    """``GET /api/pay-widget-merchant/limits``; airtime is a ``fixed_list`` of denominations."""
    return _legacy_limits_block(_legacy_corridor(network, asset, country, provider, carrier_id,
                                                 need_carrier=False))


def legacy_price(network: str, asset: str, currency: str, amount: Any, country: str,
                 provider: str, carrier_id: str | None = None) -> dict[str, Number]:
    """``GET /api/pay-widget-merchant/price`` without ``quoteId`` (spec 2.6 fields).

    ``currency`` 'local': the local amount paid; 'usdc': the crypto received after fees. Airtime
    is priced only in local currency and only at one of the denominations of ``legacy_limits``.
    The deprecated ``usdc*`` fields carry the USD amounts (one USDC is one dollar).
    """
    if currency not in ("usdc", "local"):
        raise PricingError("currency must be 'usdc' or 'local'")
    corridor = _legacy_corridor(network, asset, country, provider, carrier_id)
    if corridor.channel == "airtime":
        _require_available(corridor)
        if currency != "local":
            raise PricingError("airtime is sold in fixed local amounts: use currency 'local'")
        values = airtime_values(corridor)
        value = parse_amount(amount, corridor.country.currency_places, corridor.country.currency)
        if value not in values:
            raise PricingError(f"amount must be one of {', '.join(show(v) for v in values)} "
                               f"{corridor.country.currency}")
    b = onramp_breakdown(network, corridor.asset, "local" if currency == "local" else "crypto",
                         amount, corridor.country.iso, corridor.channel, carrier_id,
                         carrier_by_id=True)
    u, c, loc = b.usd, b.crypto, b.local
    f = corridor.fees
    return {k: to_number(v) for k, v in {
        "cryptoTotalAmount": c.before, "cryptoWithdrawAmount": c.after,
        "cryptoFeeAmount": c.fee, "cryptoGasAmount": c.gas,
        "localCurrencyAmount": b.local_amount,
        "feePercent": f.percent, "serviceFeePercent": f.service_percent,
        "partnerFeePercent": f.partner_percent,
        "totalAmount": u.before, "withdrawAmount": u.after,
        "feeAmount": u.fee, "localCurrencyFeeAmount": loc.fee,
        "serviceFeeAmount": u.service, "localCurrencyServiceFeeAmount": loc.service,
        "partnerFeeAmount": u.partner, "localCurrencyPartnerFeeAmount": loc.partner,
        "networkFeeAmount": u.gas, "localCurrencyNetworkFeeAmount": loc.gas,
        "usdcTotalAmount": u.before, "usdcWithdrawAmount": u.after,
        "usdcFeeAmount": u.fee, "usdcGasAmount": u.gas,
    }.items()}


def legacy_providers(include_limits: bool = True, network: str | None = None
                     ) -> list[dict[str, Any]]:
    """``GET /api/pay-widget-merchant/providers``: per country, its providers and carriers.

    ``limits`` are keyed by network (the networks of spec 4.2, or only ``network`` when given) and
    left out entirely when ``include_limits`` is false.
    """
    if network is None:
        networks = ref.LEGACY_LIMIT_NETWORKS
    elif ref.default_onramp_asset(network) is None:
        raise PricingError(f"network {network!r} is not supported for on-ramp")
    else:
        networks = (network,)

    def limits(country: Country, channel: str, carrier_id: str | None) -> dict[str, Any]:
        out = {}
        for n in networks:
            blk = _legacy_limits_block(onramp_corridor(n, None, country.iso, channel, carrier_id,
                                                       carrier_by_id=True, need_carrier=False))
            out[n] = {"cryptoLimits": blk["cryptoLimits"], "fees": blk["fees"],
                      "localCurrency": blk["localCurrencyLimits"]}
        return out

    result = []
    for country in ref.COUNTRIES:
        providers = []
        for ch in country.onramp:
            entry: dict[str, Any] = {
                "name": ref.legacy_provider_name(country.iso, ch.channel),
                "description": ch.description, "requiresCarrier": ch.requires_carrier,
            }
            if include_limits:
                entry["limits"] = limits(country, ch.channel, None)
            carriers = []
            for k in ch.carriers:
                item: dict[str, Any] = {"id": k.id, "name": k.name}
                if include_limits:
                    item["limits"] = limits(country, ch.channel, k.id)
                carriers.append(item)
            entry["carriers"] = carriers
            providers.append(entry)
        result.append({"countryIsoCode": country.iso, "currencyIsoCode": country.currency,
                       "providers": providers})
    return result
