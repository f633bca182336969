"""Reference data of the sandbox upstream: assets, countries, channels, fees, limits and KYC.

Everything here is immutable (frozen dataclasses, tuples, ``MappingProxyType``): the sandbox's
reference data is the same for every app and every request, and nothing may change it at run time.
Money is ``Decimal`` throughout; ``pricing`` does the arithmetic, this module only describes.

Values follow ``upstream-api.md`` 2.1 (asset lists, exactly) and ``upstream-notes.md`` 7 (realistic
countries, rates, fees, limits, field keys and KYC documents). Where the notes give nothing, the
values are plausible and chosen so that every variant the spec names occurs at least once: every transfer
instruction type, a flat local fee, a carrier that must be chosen, a corridor that cannot be priced.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Literal

D = Decimal

# ---------------------------------------------------------------------------------------------
# Assets (spec 2.1, exactly)

NETWORKS: tuple[str, ...] = (
    "POLYGON", "ETHEREUM", "STELLAR", "AVALANCHE", "SOLANA", "ALGORAND", "CELO", "BASE", "TON",
    "LISK", "ARBITRUM", "OPTIMISM", "BNB",
)
UTIL_NETWORKS: tuple[str, ...] = NETWORKS + ("NEAR", "TRON")
ASSETS: tuple[str, ...] = ("USDC", "USDC_E", "USDT", "CUSD", "CKES")
UTIL_EXTRA_ASSETS: tuple[str, ...] = ("NATIVE", "USDGLO", "CGHS")


@dataclass(frozen=True)
class AssetPair:
    network: str
    asset: str

    def to_json(self) -> dict[str, str]:
        return {"network": self.network, "asset": self.asset}


def _pairs(asset: str, *networks: str) -> tuple[AssetPair, ...]:
    return tuple(AssetPair(n, asset) for n in networks)


ONRAMP_ASSETS: tuple[AssetPair, ...] = (
    _pairs("USDC", "POLYGON", "CELO", "ETHEREUM", "BASE", "AVALANCHE", "SOLANA", "OPTIMISM",
           "STELLAR", "BNB", "ARBITRUM")
    + _pairs("USDC_E", "POLYGON")
    + _pairs("CUSD", "CELO")
    + _pairs("USDT", "POLYGON", "AVALANCHE", "CELO", "ETHEREUM", "TON", "SOLANA", "OPTIMISM",
             "LISK", "BNB", "ARBITRUM")
    + _pairs("CKES", "CELO")
)

OFFRAMP_ASSETS: tuple[AssetPair, ...] = (
    _pairs("USDC", "POLYGON", "CELO", "ETHEREUM", "AVALANCHE")
    + _pairs("CUSD", "CELO")
    + _pairs("USDT", "POLYGON", "AVALANCHE", "CELO", "ETHEREUM")
)


@dataclass(frozen=True)
class UtilAsset:
    network: str
    asset: str
    can_offramp: bool
    can_onramp: bool

    def to_json(self) -> dict[str, Any]:
        return {"network": self.network, "asset": self.asset,
                "canOfframp": self.can_offramp, "canOnramp": self.can_onramp}


# The utility list's off-ramp set is wider than /api/offramp/assets (spec 2.1 lists them apart).
_UTIL_OFFRAMP = (
    _pairs("USDC", "POLYGON", "CELO", "ETHEREUM", "BASE", "AVALANCHE")
    + _pairs("CUSD", "CELO") + _pairs("CKES", "CELO") + _pairs("CGHS", "CELO")
    + _pairs("USDT", "POLYGON", "TRON", "AVALANCHE", "CELO", "ETHEREUM", "TON")
)
_UTIL_ONRAMP_ONLY = (
    _pairs("USDC_E", "POLYGON")
    + _pairs("USDC", "SOLANA", "OPTIMISM", "STELLAR", "BNB", "ARBITRUM")
    + _pairs("USDT", "SOLANA", "OPTIMISM", "LISK", "BNB", "ARBITRUM")
)
_UTIL_NEITHER = (
    tuple(AssetPair(n, "NATIVE") for n in UTIL_NETWORKS)
    + _pairs("USDC", "ALGORAND", "NEAR") + _pairs("USDGLO", "POLYGON", "CELO")
    + _pairs("USDC_E", "AVALANCHE")
)

UTIL_ASSETS: tuple[UtilAsset, ...] = (
    tuple(UtilAsset(p.network, p.asset, True, True) for p in _UTIL_OFFRAMP)
    + tuple(UtilAsset(p.network, p.asset, False, True) for p in _UTIL_ONRAMP_ONLY)
    + tuple(UtilAsset(p.network, p.asset, False, False) for p in _UTIL_NEITHER)
)

# Decimal places of every crypto amount the sandbox quotes (all supported tokens have >= 6).
CRYPTO_PLACES = 6
# USD amounts are carried to the same precision as crypto so a 1:1 stablecoin converts exactly.
USD_PLACES = 6

# What one unit of each asset is worth: None means one US dollar; otherwise the ISO code of the
# fiat currency it is pegged to (one CKES is one Kenyan shilling).
ASSET_PEGS: Mapping[str, str | None] = MappingProxyType({
    "USDC": None, "USDC_E": None, "USDT": None, "CUSD": None, "USDGLO": None,
    "CKES": "KES", "CGHS": "GHS",
})

# Network fee charged on every on-ramp payout, in USD. Flat and deliberately dear on Ethereum
# mainnet. Every value times every pegged rate is exact at CRYPTO_PLACES (tested), so the gas part
# of a quote converts between USD and crypto without rounding.
GAS_USD: Mapping[str, Decimal] = MappingProxyType(
    {n: D("0.01") for n in NETWORKS} | {"ETHEREUM": D("0.35")}
)

# Local currency per US dollar, and the decimal places each currency is quoted in.
USD_RATES: Mapping[str, Decimal] = MappingProxyType({
    "NGN": D("1480"), "KES": D("129"), "GHS": D("15.5"), "UGX": D("3700"), "TZS": D("2650"),
    "ZAR": D("18.2"), "ZMW": D("26.5"), "XOF": D("605"), "XAF": D("605"),
})
CURRENCY_PLACES: Mapping[str, int] = MappingProxyType({
    "NGN": 2, "KES": 2, "GHS": 2, "UGX": 0, "TZS": 0, "ZAR": 2, "ZMW": 2, "XOF": 0, "XAF": 0,
})


def crypto_per_usd(asset: str) -> Decimal:
    """Units of ``asset`` that one US dollar buys (1 for dollar stablecoins)."""
    peg = ASSET_PEGS[asset]
    return D(1) if peg is None else USD_RATES[peg]


def stable_id(*parts: str) -> str:
    """A 24-hex-digit id (the shape of the upstream's ids) that never changes between runs."""
    return hashlib.sha256(":".join(parts).encode()).hexdigest()[:24]


# ---------------------------------------------------------------------------------------------
# Field descriptors (spec 2.2)

FieldType = Literal["string", "date", "email", "phone", "enum", "smile-identity-images"]


@dataclass(frozen=True)
class Option:
    value: str
    label: str


@dataclass(frozen=True)
class RequiredField:
    name: str
    type: FieldType
    label: str
    required: bool = True
    options: tuple[Option, ...] = ()
    format: str | None = None
    regexp: str | None = None
    regexp_flags: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "label": self.label, "required": self.required}
        if self.type == "enum":
            out["options"] = [{"value": o.value, "label": o.label} for o in self.options]
        if self.format is not None:
            out["format"] = self.format
        if self.regexp is not None:
            out["regexp"] = self.regexp
        if self.regexp_flags is not None:
            out["regexpFlags"] = self.regexp_flags
        return out


def fields_json(fields: tuple[RequiredField, ...]) -> dict[str, dict[str, Any]]:
    """The upstream's ``requiredFields`` object: keyed by field name, in declaration order."""
    return {f.name: f.to_json() for f in fields}


PHONE = RequiredField("phoneNumber", "phone", "Phone number")


@dataclass(frozen=True)
class AccountFormat:
    """What a country's bank account numbers look like, as its payment partner checks them:
    digits only, from ``shortest`` to ``longest`` of them.

    The partner publishes it in the offer's descriptor of the account number (``regexp``, and a
    ``format`` where every number has the same length), and its payee check refuses a number that
    does not have it, whatever an offer says (:mod:`.payees`): a bank cannot name the holder of an
    account number that cannot exist.
    """

    shortest: int
    longest: int
    name: str                       # what such a number is called, in the partner's messages

    @property
    def regexp(self) -> str:
        count = str(self.shortest) if self.shortest == self.longest \
            else f"{self.shortest},{self.longest}"
        return f"^[0-9]{{{count}}}$"

    @property
    def format(self) -> str | None:
        """The display mask, where every number has one length."""
        return "0" * self.shortest if self.shortest == self.longest else None

    @property
    def digits(self) -> str:
        if self.shortest == self.longest:
            return f"{self.shortest} digits"
        return f"{self.shortest} to {self.longest} digits"

    def matches(self, number: str) -> bool:
        return number.isascii() and number.isdigit() \
            and self.shortest <= len(number) <= self.longest


# Nigeria has one national format (NUBAN: ten digits, the last a check digit over the bank's
# code); elsewhere each bank has its own length, within these ranges.
ACCOUNT_FORMATS: Mapping[str, AccountFormat] = MappingProxyType({
    "NG": AccountFormat(10, 10, "Nigerian account number (NUBAN)"),
    "KE": AccountFormat(10, 16, "Kenyan bank account number"),
    "GH": AccountFormat(10, 16, "Ghanaian bank account number"),
    "ZA": AccountFormat(9, 11, "South African bank account number"),
    "ZM": AccountFormat(10, 16, "Zambian bank account number"),
})


def account_number(iso: str, name: str = "bankAccountNumber",
                   label: str = "Bank account number") -> RequiredField:
    """The descriptor of a bank account number of ``iso``, with the country's format."""
    rule = ACCOUNT_FORMATS[iso]
    return RequiredField(name, "string", label, format=rule.format, regexp=rule.regexp)


# An M-PESA Paybill: the business number (five to seven digits) and the account at that business
# (the biller's own reference: letters, digits and dashes).
PAYBILL_FIELDS = (
    RequiredField("shortCode", "string", "Paybill number", regexp="^[0-9]{5,7}$"),
    RequiredField("accountNumber", "string", "Account number", regexp="^[A-Za-z0-9-]{1,20}$"),
)


def bank_code(*banks: tuple[str, str]) -> RequiredField:
    return RequiredField("bankCode", "enum", "Bank",
                         options=tuple(Option(code, label) for code, label in banks))


# ---------------------------------------------------------------------------------------------
# Channels, fees, limits

TransferType = Literal["manual", "redirect", "ussd", "stk_push", "otp_stk_push"]


@dataclass(frozen=True)
class Fees:
    """A channel's fee schedule. Percents apply to the USD amount before fees.

    ``flat_local`` is a fixed charge in the country's currency, kept by the payment partner
    (``partner`` part). When percent plus flat comes to less than ``min_fee_usd`` the minimum is
    charged instead, split between service and partner in the same proportion.
    """

    service_percent: Decimal
    partner_percent: Decimal
    min_fee_usd: Decimal = D("0.01")
    flat_local: Decimal = D(0)

    @property
    def percent(self) -> Decimal:
        return self.service_percent + self.partner_percent


STANDARD_FEES = Fees(D("1.5"), D("1.0"))
# Airtime partners charge at least 5 cents: on the smallest top-ups the minimum decides.
AIRTIME_FEES = Fees(D("1.5"), D("2.0"), D("0.05"))


@dataclass(frozen=True)
class Limits:
    """Order size in USD before fees. Both zero marks a corridor that cannot be priced now."""

    min_usd: Decimal
    max_usd: Decimal

    @property
    def available(self) -> bool:
        return self.max_usd > 0


UNAVAILABLE = Limits(D(0), D(0))


@dataclass(frozen=True)
class Carrier:
    id: str
    name: str
    code: str
    limits: Limits | None = None   # overrides the channel's limits for this carrier

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "code": self.code}


def carrier(iso: str, code: str, name: str, limits: Limits | None = None) -> Carrier:
    return Carrier(stable_id("carrier", iso, code), name, code, limits)


@dataclass(frozen=True)
class OnrampChannel:
    channel: str
    description: str
    transfer_type: TransferType
    fees: Fees
    limits: Limits
    required_fields: tuple[RequiredField, ...] = ()
    carriers: tuple[Carrier, ...] = ()
    requires_carrier: bool = False

    def carrier(self, code: str) -> Carrier | None:
        return next((c for c in self.carriers if c.code == code), None)


def carrier_field(carriers: tuple[Carrier, ...]) -> RequiredField:
    """``carrierId``: which network an off-ramp payout goes to, chosen from the type's carriers."""
    return RequiredField("carrierId", "enum", "Mobile network",
                         options=tuple(Option(c.id, c.name) for c in carriers))


@dataclass(frozen=True)
class OfframpChannel:
    """An off-ramp type (type-based variant) or payment channel (channel-based): one corridor.

    ``payee_fields`` say who is paid; :attr:`required_fields` adds the carrier when there is one to
    choose, first, so a form asks for the network before the number on it.
    """

    channel: str
    name: str
    fees: Fees
    limits: Limits
    payee_fields: tuple[RequiredField, ...]
    carriers: tuple[Carrier, ...] = ()

    @property
    def needs_carrier(self) -> bool:
        """Airtime always tops up one network; mobile money must say which only if there are several."""
        return bool(self.carriers) and (self.channel == "airtime" or len(self.carriers) > 1)

    @property
    def required_fields(self) -> tuple[RequiredField, ...]:
        if not self.needs_carrier:
            return self.payee_fields
        return (carrier_field(self.carriers),) + self.payee_fields


# ---------------------------------------------------------------------------------------------
# KYC (notes 7: the identity vendor is Smile ID)

DocumentKind = Literal["basic", "advanced"]
KycType = Literal["none", "basic", "advanced"]
KYC_LEVELS: tuple[KycType, ...] = ("none", "basic", "advanced")


# Smile ID ``image_type_id`` values of the images an advanced document asks for (notes 7).
IMAGE_SELFIE = 0
IMAGE_FRONT = 1
IMAGE_BACK = 5      # one public page says 2; the notes and the sandbox use 5
IMAGE_TYPE_NAMES: Mapping[int, str] = MappingProxyType({
    IMAGE_SELFIE: "selfie", IMAGE_FRONT: "document front", IMAGE_BACK: "document back"})
# Document types that are a booklet: the photo page is all there is, so no back is asked. Every
# other advanced document (ID cards, licences, residence cards) is a card with two sides.
NO_BACK_TYPES = frozenset({"PASSPORT"})


@dataclass(frozen=True)
class KycDocument:
    id: str
    kind: DocumentKind
    type: str       # the document's country-specific kind, e.g. "NATIONAL_ID"
    title: str
    value: str      # what /api/kyc/submit takes as idType
    required_fields: tuple[RequiredField, ...]

    @property
    def has_back(self) -> bool:
        """Whether a photo of the document's back is part of it (a card, not a passport)."""
        return self.type not in NO_BACK_TYPES

    @property
    def image_types(self) -> tuple[int, ...]:
        """The ``image_type_id`` values a submission must carry, each once (none for basic)."""
        if self.kind != "advanced":
            return ()
        back = (IMAGE_BACK,) if self.has_back else ()
        return (IMAGE_SELFIE, IMAGE_FRONT) + back

    def to_json(self, *, with_id: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"_id": self.id} if with_id else {}
        out.update(type=self.type, title=self.title, value=self.value,
                   requiredFields=fields_json(self.required_fields))
        return out


_PERSON_FIELDS = (
    RequiredField("first_name", "string", "First name"),
    RequiredField("last_name", "string", "Last name"),
    RequiredField("dob", "date", "Date of birth"),
    RequiredField("email", "email", "Email"),
)
# The images field's label says which photos the document needs: the only place the upstream's
# document shape (spec 2.8) can say it.
IMAGES = RequiredField("images", "smile-identity-images",
                       "Selfie and photos of the front and back of the document")
IMAGES_NO_BACK = RequiredField("images", "smile-identity-images",
                               "Selfie and a photo of the document's photo page")


def document(iso: str, kind: DocumentKind, value: str, title: str, regexp: str, fmt: str,
             flags: str | None = None) -> KycDocument:
    id_number = RequiredField("id_number", "string", "ID number", format=fmt,
                              regexp=regexp, regexp_flags=flags)
    images = IMAGES_NO_BACK if value in NO_BACK_TYPES else IMAGES
    fields = _PERSON_FIELDS + (id_number,) + ((images,) if kind == "advanced" else ())
    return KycDocument(stable_id("kyc-document", iso, kind, value), kind, value, title, value,
                       fields)


@dataclass(frozen=True)
class KycRule:
    """KYC ``type`` required for orders from ``min`` to ``max`` USD; ``max`` None is unbounded.

    Like the upstream's (Kenya's on-ramp: none below 15 USD, basic from 15 to 99.99, advanced from
    100), a rule ends a cent below the next one's ``min``: an amount between the two (14.995) is
    still below the next threshold and needs the lower level.
    """

    min: Decimal
    max: Decimal | None
    type: KycType

    def to_json(self) -> dict[str, Any]:
        return {"min": _plain(self.min),
                "max": "Infinity" if self.max is None else _plain(self.max),
                "type": self.type}


def _plain(d: Decimal) -> int | float:
    return int(d) if d == d.to_integral_value() else float(d)


CENT = D("0.01")


def kyc_rules(*thresholds: tuple[int | str, KycType], top: int | None = None
              ) -> tuple[KycRule, ...]:
    """Rules from ``(min USD, type)`` steps: each ends a cent below the next step's ``min``; the
    last ends at ``top`` USD, or never (``'Infinity'``) when ``top`` is None."""
    mins = [D(str(m)) for m, _ in thresholds]
    ends: list[Decimal | None] = [m - CENT for m in mins[1:]]
    ends.append(None if top is None else D(top))
    return tuple(KycRule(m, end, kind) for m, end, (_, kind) in zip(mins, ends, thresholds,
                                                                    strict=True))


def basic_only(basic_from: int, top: int | None = None) -> tuple[KycRule, ...]:
    """Rules of a country without advanced documents: none, then basic from ``basic_from``."""
    return kyc_rules((0, "none"), (basic_from, "basic"), top=top)


# ---------------------------------------------------------------------------------------------
# Countries

@dataclass(frozen=True)
class Country:
    iso: str
    currency: str
    name: str
    calling_code: str
    onramp: tuple[OnrampChannel, ...]
    offramp: tuple[OfframpChannel, ...]
    basic_documents: tuple[KycDocument, ...]
    advanced_documents: tuple[KycDocument, ...] = ()
    kyc_onramp: tuple[KycRule, ...] = ()
    kyc_offramp: tuple[KycRule, ...] = ()

    @property
    def usd_rate(self) -> Decimal:
        """Local currency per US dollar."""
        return USD_RATES[self.currency]

    @property
    def currency_places(self) -> int:
        return CURRENCY_PLACES[self.currency]

    @property
    def documents(self) -> tuple[KycDocument, ...]:
        return self.basic_documents + self.advanced_documents

    def onramp_channel(self, channel: str) -> OnrampChannel | None:
        return next((c for c in self.onramp if c.channel == channel), None)

    def offramp_channel(self, channel: str) -> OfframpChannel | None:
        return next((c for c in self.offramp if c.channel == channel), None)

    def document_by_value(self, value: str) -> KycDocument | None:
        return next((d for d in self.documents if d.value == value), None)

    @property
    def carriers(self) -> tuple[Carrier, ...]:
        """Every carrier named in the country's channels, once each, in order of appearance."""
        seen: dict[str, Carrier] = {}
        for ch in self.onramp + self.offramp:
            for c in ch.carriers:
                seen.setdefault(c.code, c)
        return tuple(seen.values())


def _ng() -> Country:
    airtime = (carrier("NG", "MTN", "MTN"), carrier("NG", "AIRTEL", "Airtel"),
               carrier("NG", "GLO", "Glo"),
               # A smaller network with a lower ceiling: carrier limits override channel limits.
               carrier("NG", "9MOBILE", "9mobile", Limits(D(1), D(20))))
    wallets = (carrier("NG", "OPAY", "OPay"), carrier("NG", "PALMPAY", "PalmPay"))
    banks = bank_code(("011:02", "First Bank of Nigeria"), ("044:02", "Access Bank"),
                      ("058:02", "Guaranty Trust Bank"), ("033:02", "United Bank for Africa"),
                      ("057:02", "Zenith Bank"), ("232:02", "Sterling Bank"))
    return Country(
        "NG", "NGN", "Nigeria", "234",
        onramp=(
            OnrampChannel("bank", "Bank transfer to a Nigerian account", "manual", STANDARD_FEES,
                          Limits(D(1), D(200))),
            OnrampChannel("airtime", "Pay with airtime; a USSD code moves the credit", "ussd",
                          AIRTIME_FEES, Limits(D(1), D(50)), (PHONE,), airtime,
                          requires_carrier=True),
            OnrampChannel("mobile_money", "Mobile wallet (OPay, PalmPay)", "manual",
                          STANDARD_FEES, Limits(D(1), D(200)), (PHONE,), wallets),
        ),
        offramp=(
            OfframpChannel("bank", "Bank account", STANDARD_FEES, Limits(D(1), D(500)),
                           (banks, account_number("NG"))),
            OfframpChannel("airtime", "Airtime top-up", AIRTIME_FEES, Limits(D(1), D(50)),
                           (PHONE,), airtime),
            OfframpChannel("mobile_money", "Mobile wallet", STANDARD_FEES,
                           Limits(D(1), D(200)), (PHONE,), wallets),
        ),
        basic_documents=(
            document("NG", "basic", "BVN", "Bank Verification Number", "^[0-9]{11}$",
                     "00000000000"),
            document("NG", "basic", "NIN", "National Identification Number", "^[0-9]{11}$",
                     "00000000000"),
            document("NG", "basic", "VOTER_ID", "Voter's card", "^[a-zA-Z0-9 ]{9,29}$",
                     "0000000000000000000", "i"),
        ),
        advanced_documents=(
            document("NG", "advanced", "DRIVERS_LICENSE", "Driver's licence",
                     "^[a-zA-Z]{3}([ -]{1})?[A-Z0-9]{6,12}$", "ABC000000000", "i"),
            # A booklet: its photo page is all there is, so no back is asked (NO_BACK_TYPES).
            document("NG", "advanced", "PASSPORT", "International passport", "^[A-Z][0-9]{8}$",
                     "A00000000", "i"),
        ),
        # Every level within the corridors: none up to 24.99 USD (any channel), basic from 25
        # (bank, mobile money; airtime tops out at 50), advanced from 100 (bank, mobile money).
        kyc_onramp=kyc_rules((0, "none"), (25, "basic"), (100, "advanced")),
        # Off-ramp: advanced from 200 USD, reached by bank payouts (to 500) and mobile money (200).
        kyc_offramp=kyc_rules((0, "none"), (50, "basic"), (200, "advanced")),
    )


def _ke() -> Country:
    safaricom = carrier("KE", "SAFARICOM", "Safaricom")
    airtime = (safaricom, carrier("KE", "AIRTEL", "Airtel Kenya"))
    banks = bank_code(("01:00", "Kenya Commercial Bank"), ("68:00", "Equity Bank"),
                      ("11:00", "Co-operative Bank of Kenya"), ("03:00", "Absa Bank Kenya"),
                      ("63:00", "Diamond Trust Bank"))
    # M-PESA payouts carry the partner's flat 30 KES charge on top of the service percent.
    mpesa_fees = Fees(D("1.5"), D(0), D("0.01"), D(30))
    return Country(
        "KE", "KES", "Kenya", "254",
        onramp=(
            OnrampChannel("mobile_money", "M-PESA: approve the payment on your phone", "stk_push",
                          STANDARD_FEES, Limits(D(1), D(500)), (PHONE,), (safaricom,)),
            OnrampChannel("airtime", "Pay with Safaricom or Airtel airtime", "ussd", AIRTIME_FEES,
                          Limits(D(1), D(30)), (PHONE,), airtime, requires_carrier=True),
            OnrampChannel("bank", "Bank transfer (PesaLink)", "manual",
                          Fees(D("1.5"), D(0), D("0.01"), D(30)), Limits(D(2), D(500))),
        ),
        offramp=(
            OfframpChannel("mobile_money", "M-PESA", mpesa_fees, Limits(D(1), D(500)), (PHONE,),
                           (safaricom,)),
            OfframpChannel("paybill", "M-PESA Paybill", mpesa_fees, Limits(D(1), D(500)),
                           PAYBILL_FIELDS),
            OfframpChannel("bank", "Bank account", STANDARD_FEES, Limits(D(5), D(500)),
                           (banks, account_number("KE"))),
            OfframpChannel("airtime", "Airtime top-up", AIRTIME_FEES, Limits(D(1), D(30)),
                           (PHONE,), airtime),
        ),
        basic_documents=(
            document("KE", "basic", "NATIONAL_ID", "National ID", "^[0-9]{1,9}$", "00000000"),
            document("KE", "basic", "PASSPORT", "Passport", "^[A-Z0-9]{7,9}$", "A0000000"),
        ),
        advanced_documents=(
            # A citizen's choice at the advanced level too (Smile ID checks Kenyan driving
            # licences with photos); the alien card is for residents who are not citizens.
            document("KE", "advanced", "DRIVERS_LICENSE", "Driving licence",
                     "^[A-Z0-9]{6,12}$", "AB000000", "i"),
            document("KE", "advanced", "ALIEN_CARD", "Alien card", "^[0-9]{6,9}$", "000000"),
        ),
        # As the service documents it: no KYC below 15 USD, basic from 15 to 99.99, advanced from
        # 100 up to the 500 USD limit of M-PESA and bank (the rule itself is open-ended).
        kyc_onramp=kyc_rules((0, "none"), (15, "basic"), (100, "advanced")),
        # Off-ramp advanced ends at 500 USD: a user verified to the top level reaches their limit
        # (reachedKycLimit) once their payouts add up to 500 USD (kyc.allowed_volume).
        kyc_offramp=kyc_rules((0, "none"), (25, "basic"), (150, "advanced"), top=500),
    )


# What a mobile money payment asks of the user, by how it is made: said under the choice, where
# the channel's own name ("Mobile money") tells nothing of it.
MOBILE_MONEY_DESCRIPTIONS: Mapping[str, str] = MappingProxyType({
    "otp_stk_push": "Enter the code sent by SMS, then approve the payment on your phone",
    "ussd": "Dial a USSD code on your phone to pay",
    "redirect": "Pay on your mobile money provider's page",
})


def _gh() -> Country:
    momo = (carrier("GH", "MTN", "MTN MoMo"), carrier("GH", "TELECEL", "Telecel Cash"),
            carrier("GH", "AIRTELTIGO", "AirtelTigo Money"))
    banks = bank_code(("300304", "GCB Bank"), ("300312", "Ecobank Ghana"),
                      ("300329", "Access Bank Ghana"), ("300302", "Standard Chartered Ghana"))
    return Country(
        "GH", "GHS", "Ghana", "233",
        onramp=(
            OnrampChannel("bank", "Pay on your bank's payment page", "redirect", STANDARD_FEES,
                          Limits(D(1), D(300))),
            OnrampChannel("mobile_money", MOBILE_MONEY_DESCRIPTIONS["otp_stk_push"],
                          "otp_stk_push", STANDARD_FEES, Limits(D(1), D(300)), (PHONE,), momo,
                          requires_carrier=True),
        ),
        offramp=(
            OfframpChannel("bank", "Bank account", STANDARD_FEES, Limits(D(1), D(500)),
                           (banks, account_number("GH"))),
            OfframpChannel("mobile_money", "Mobile money", STANDARD_FEES, Limits(D(1), D(300)),
                           (PHONE,), momo),
        ),
        basic_documents=(
            document("GH", "basic", "PASSPORT", "Passport", "^[A-Z][0-9]{7,9}$", "G0000000",
                     "i"),
            document("GH", "basic", "GHANA_CARD", "Ghana Card", "^GHA-[0-9]{9}-[0-9]$",
                     "GHA-000000000-0", "i"),
        ),
        # No advanced documents, so basic is the top level: on the on-ramp it ends at the 300 USD
        # limit, and a verified user's volume can reach it (reachedKycLimit).
        kyc_onramp=basic_only(30, top=300),
        kyc_offramp=basic_only(50),
    )


def _mobile_money_country(iso: str, currency: str, name: str, calling_code: str,
                          transfer_type: TransferType, carriers: tuple[tuple[str, str], ...],
                          id_title: str, id_regexp: str, id_format: str,
                          kyc: tuple[int, int], limits: Limits = Limits(D(1), D(200))) -> Country:
    """A market served by mobile money alone (most of East, Southern and francophone Africa).

    ``kyc``: the USD amounts from which on-ramp and off-ramp orders need basic KYC (the country has
    no advanced documents).
    """
    wallets = tuple(carrier(iso, code, label) for code, label in carriers)
    return Country(
        iso, currency, name, calling_code,
        onramp=(OnrampChannel("mobile_money", MOBILE_MONEY_DESCRIPTIONS[transfer_type],
                              transfer_type, STANDARD_FEES, limits, (PHONE,), wallets,
                              requires_carrier=len(wallets) > 1),),
        offramp=(OfframpChannel("mobile_money", "Mobile money", STANDARD_FEES, limits, (PHONE,),
                                wallets),),
        basic_documents=(document(iso, "basic", "NATIONAL_ID", id_title, id_regexp, id_format),),
        kyc_onramp=basic_only(kyc[0]), kyc_offramp=basic_only(kyc[1]),
    )


def _za() -> Country:
    banks = bank_code(("632005", "Absa Bank"), ("250655", "First National Bank"),
                      ("051001", "Standard Bank"), ("198765", "Nedbank"),
                      ("470010", "Capitec Bank"))
    return Country(
        "ZA", "ZAR", "South Africa", "27",
        onramp=(
            OnrampChannel("bank", "EFT to a South African account", "manual", STANDARD_FEES,
                          Limits(D(1), D(500)),
                          (account_number("ZA", "buyerBankAccountNumber",
                                          "Your bank account number"),)),
        ),
        offramp=(OfframpChannel("bank", "Bank account", STANDARD_FEES, Limits(D(1), D(500)),
                                (banks, account_number("ZA"))),),
        basic_documents=(document("ZA", "basic", "NATIONAL_ID", "South African ID",
                                  "^[0-9]{13}$", "0000000000000"),),
        kyc_onramp=basic_only(100), kyc_offramp=basic_only(150),
    )


def _zm() -> Country:
    base = _mobile_money_country(
        "ZM", "ZMW", "Zambia", "260", "ussd",
        (("MTN", "MTN Mobile Money"), ("AIRTEL", "Airtel Money")),
        "National Registration Card", "^[0-9]{6}/[0-9]{2}/[0-9]$", "000000/00/0", (20, 30))
    # Zambian bank payouts exist but the partner has no liquidity: the upstream answers this
    # corridor with all limits 0 (notes 2) and refuses to price it.
    closed_bank = OfframpChannel("bank", "Bank account", STANDARD_FEES, UNAVAILABLE,
                                 (bank_code(("ZANACO", "Zanaco"), ("STANBIC", "Stanbic Zambia")),
                                  account_number("ZM")))
    closed_onramp = OnrampChannel("bank", "Bank transfer to a Zambian account", "manual",
                                  STANDARD_FEES, UNAVAILABLE)
    return Country(base.iso, base.currency, base.name, base.calling_code,
                   base.onramp + (closed_onramp,), base.offramp + (closed_bank,),
                   base.basic_documents, kyc_onramp=base.kyc_onramp,
                   kyc_offramp=base.kyc_offramp)


COUNTRIES: tuple[Country, ...] = (
    _ng(), _ke(), _gh(),
    _mobile_money_country("UG", "UGX", "Uganda", "256", "otp_stk_push",
                          (("MTN", "MTN Mobile Money"), ("AIRTEL", "Airtel Money")),
                          "National ID (NIN)", "^C[MF][A-Z0-9]{12}$", "CM00000000000A", (20, 40)),
    _mobile_money_country("TZ", "TZS", "Tanzania", "255", "ussd",
                          (("VODACOM", "Vodacom M-Pesa"), ("AIRTEL", "Airtel Money"),
                           ("TIGO", "Tigo Pesa")),
                          "NIDA National ID", "^[0-9]{20}$", "00000000000000000000", (25, 50)),
    _za(), _zm(),
    _mobile_money_country("SN", "XOF", "Senegal", "221", "redirect",
                          (("ORANGE", "Orange Money"), ("WAVE", "Wave"), ("FREE", "Free Money")),
                          "Carte d'identité CEDEAO", "^[0-9]{13,17}$", "0000000000000", (30, 50)),
    _mobile_money_country("CI", "XOF", "Côte d'Ivoire", "225", "otp_stk_push",
                          (("ORANGE", "Orange Money"), ("MTN", "MTN MoMo"),
                           ("MOOV", "Moov Money"), ("WAVE", "Wave")),
                          "Carte nationale d'identité", "^[A-Z0-9]{9,11}$", "CI000000000", (25, 50)),
    _mobile_money_country("BJ", "XOF", "Benin", "229", "ussd",
                          (("MTN", "MTN MoMo"), ("MOOV", "Moov Money")),
                          "Carte d'identité", "^[0-9]{10,12}$", "0000000000", (20, 40)),
    _mobile_money_country("CM", "XAF", "Cameroon", "237", "redirect",
                          (("MTN", "MTN MoMo"), ("ORANGE", "Orange Money")),
                          "Carte nationale d'identité", "^[0-9]{9,17}$", "000000000", (30, 50)),
)

_BY_ISO: Mapping[str, Country] = MappingProxyType({c.iso: c for c in COUNTRIES})
_DOCUMENTS_BY_ID: Mapping[str, tuple[Country, KycDocument]] = MappingProxyType(
    {d.id: (c, d) for c in COUNTRIES for d in c.documents}
)

# Legacy pay-widget provider names and the channel each stands for (spec 4.2). In Kenya mobile
# money is M-PESA, and the legacy API names it so.
LEGACY_PROVIDERS: Mapping[str, str] = MappingProxyType({
    "bank_transfer": "bank", "mobile_money": "mobile_money", "mpesa": "mobile_money",
    "carrier": "airtime",
})
# Networks keyed in the legacy /providers limits (spec 4.2).
LEGACY_LIMIT_NETWORKS: tuple[str, ...] = (
    "AVALANCHE", "CELO", "POLYGON", "STELLAR", "SOLANA", "BASE", "TON",
)


# ---------------------------------------------------------------------------------------------
# Lookups

def country(iso: str) -> Country | None:
    return _BY_ISO.get(iso.upper()) if isinstance(iso, str) else None


def onramp_channel(iso: str, channel: str) -> OnrampChannel | None:
    c = country(iso)
    return c.onramp_channel(channel) if c else None


def offramp_channel(iso: str, channel: str) -> OfframpChannel | None:
    c = country(iso)
    return c.offramp_channel(channel) if c else None


def is_onramp_pair(network: str, asset: str) -> bool:
    return AssetPair(network, asset) in ONRAMP_ASSETS


def is_offramp_pair(network: str, asset: str) -> bool:
    return AssetPair(network, asset) in OFFRAMP_ASSETS


def default_onramp_asset(network: str) -> str | None:
    """The asset limits are given in when the caller names none: USDC where it exists."""
    assets = [p.asset for p in ONRAMP_ASSETS if p.network == network]
    if not assets:
        return None
    return "USDC" if "USDC" in assets else assets[0]


def country_for_phone(phone: str) -> Country | None:
    """The supported country whose calling code starts an international phone number."""
    digits = phone.lstrip("+")
    return next((c for c in COUNTRIES if digits.startswith(c.calling_code)), None)


def document_by_id(document_id: str) -> tuple[Country, KycDocument] | None:
    return _DOCUMENTS_BY_ID.get(document_id)


def legacy_provider_name(iso: str, channel: str) -> str:
    if channel == "mobile_money":
        return "mpesa" if iso == "KE" else "mobile_money"
    return {"bank": "bank_transfer", "airtime": "carrier"}[channel]


# ---------------------------------------------------------------------------------------------
# JSON shapes of the list endpoints (spec 2.8)

def onramp_payment_channels_json() -> list[dict[str, Any]]:
    return [
        {"countryIsoCode": c.iso, "currencyIsoCode": c.currency, "name": c.name,
         "paymentChannels": [
             {"paymentChannel": ch.channel, "description": ch.description,
              "requiresCarrier": ch.requires_carrier,
              "carriers": [k.to_json() for k in ch.carriers]}
             for ch in c.onramp]}
        for c in COUNTRIES
    ]


def offramp_payment_channels_json() -> list[dict[str, Any]]:
    out = []
    for c in COUNTRIES:
        channels = []
        for ch in c.offramp:
            entry: dict[str, Any] = {"paymentChannel": ch.channel, "name": ch.name}
            if ch.carriers:
                entry["carriers"] = [k.to_json() for k in ch.carriers]
            channels.append(entry)
        out.append({"countryIsoCode": c.iso, "currencyIsoCode": c.currency, "name": c.name,
                    "paymentChannels": channels})
    return out


def offramp_countries_json() -> list[dict[str, Any]]:
    """Type-based variant: the same corridors, keyed by ``type`` (notes 5)."""
    out = []
    for c in COUNTRIES:
        types = []
        for ch in c.offramp:
            entry: dict[str, Any] = {"type": ch.channel, "name": ch.name}
            if ch.carriers:
                entry["carriers"] = [{"id": k.id, "name": k.name} for k in ch.carriers]
            types.append(entry)
        out.append({"countryIsoCode": c.iso, "currencyIsoCode": c.currency, "name": c.name,
                    "offrampTypes": types})
    return out


def util_countries_json() -> list[dict[str, Any]]:
    out = []
    for c in COUNTRIES:
        entry: dict[str, Any] = {
            "countryIsoCode": c.iso, "currencyIsoCode": c.currency, "name": c.name,
            "basicDocuments": [d.to_json() for d in c.basic_documents],
        }
        if c.advanced_documents:
            entry["advancedDocuments"] = [d.to_json() for d in c.advanced_documents]
        entry["kycRules"] = {"onramp": [r.to_json() for r in c.kyc_onramp],
                             "offramp": [r.to_json() for r in c.kyc_offramp]}
        out.append(entry)
    return out


def util_carriers_json() -> list[dict[str, Any]]:
    return [{"countryIsoCode": c.iso,
             "carriers": [{"name": k.name, "code": k.code} for k in c.carriers]}
            for c in COUNTRIES if c.carriers]
