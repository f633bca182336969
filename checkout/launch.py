"""Launch tokens: the signed JWT with which a merchant opens a checkout session.

Verification is two steps, as JOSE libraries intend: decode and check the HS256 signature with an
explicit algorithm list (so ``none``, HS512 or an RSA/HMAC confusion never pass), then validate the
claims: ``exp`` (essential), ``iat`` and ``jti`` required, at most 30 minutes of life, no unknown
claim, every prefilled value in the shape the flow expects, ``lock`` naming only prefill claims that
have a value (locking ``amount`` locks ``currency`` too; ``address`` or ``memo`` lock ``network``),
``parentOrigin`` and ``returnUrl`` on origins the merchant allowed in
``CHECKOUT_FRAME_ANCESTORS``.

Every failure raises :class:`~checkout.errors.LaunchTokenError` whose message is safe to show the
user (lazily translated) and whose ``detail`` tells a developer what was wrong. Tokens are never
logged and never echoed back in a page.
"""
from __future__ import annotations

import re
import secrets
import time
from contextlib import nullcontext
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, has_app_context, has_request_context, request, url_for
from flask_babel import lazy_gettext
from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import OctKey

from .addresses import AddressError, validate_address
from .errors import LaunchTokenError
from .inputs import storable
from .keys import secret_bytes
from .public_address import public_base

__all__ = [
    "FLOWS", "KNOWN_CLAIMS", "LOCKABLE_CLAIMS", "MAX_LIFETIME", "MAX_TOKEN_LENGTH", "DEFAULT_TTL",
    "issue_token", "verify_token", "launch_url", "session_claims", "normalize_origin",
    "allowed_origins",
]

ALGORITHMS = ["HS256"]
FLOWS = ("onramp", "offramp")
MAX_TOKEN_LENGTH = 4096           # characters; a real token is well under 1 KB
MAX_LIFETIME = 30 * 60            # seconds between iat and exp (contract)
DEFAULT_TTL = 15 * 60             # what launch_url() gives a token
CLOCK_LEEWAY = 60                 # seconds of clock skew tolerated between merchant and us

# Prefilled choices: the claims a merchant may also lock (the user then cannot change them).
LOCKABLE_CLAIMS = frozenset({
    "network", "asset", "amount", "currency", "countryIsoCode", "paymentChannel", "carrierCode",
    "address", "memo", "email", "phoneNumber",
})
# Claims that configure the session but are not user choices.
SESSION_CLAIMS = LOCKABLE_CLAIMS | {"orderParams", "parentOrigin", "returnUrl", "locale",
                                    "paymentType", "colorScheme"}
# The merchant's page's own mode, for a theme that offers dark (checkout.theme).
COLOR_SCHEMES = ("light", "dark")
# How an off-ramp order is paid: from the user's wallet, or from the merchant's balance.
PAYMENT_TYPES = ("CRYPTO_WALLET", "VIRTUAL_WALLET")
# Registered JWT claims; nbf is tolerated because common JWT libraries add it.
REGISTERED_CLAIMS = frozenset({"jti", "iat", "exp", "nbf"})
KNOWN_CLAIMS = frozenset({"flow", "lock"}) | SESSION_CLAIMS | REGISTERED_CLAIMS

CURRENCIES = {"onramp": ("local", "crypto"), "offramp": ("local", "usd")}
MAX_AMOUNT = Decimal("1e12")
MAX_AMOUNT_PLACES = 18            # an ERC-20 token's decimals; fiat and stablecoins need far fewer
MAX_AMOUNT_CHARACTERS = 40

_CODE = re.compile(r"^[A-Z0-9_]{2,32}$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_CHANNEL = re.compile(r"^[a-z_]{2,32}$")
_CARRIER = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_WALLET = re.compile(r"^\S{1,256}$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}$")
_PHONE = re.compile(r"^\+?[0-9][0-9 ()-]{3,30}$")
_LOCALE = re.compile(r"^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,2}$")
_HOST = re.compile(r"^([a-z0-9-]+(\.[a-z0-9-]+)*\.?|[0-9a-f:.]+)$")
_JTI = re.compile(r"^[\x21-\x7e]{8,128}$")

# User-facing reasons (shown on the 400 page, so they say what to do, not what failed inside).
MALFORMED = lazy_gettext(
    "This checkout link is not valid. Please go back to the shop and start again.")
TAMPERED = lazy_gettext(
    "This checkout link has been changed since the shop created it. Please go back to the shop "
    "and start again.")
EXPIRED = lazy_gettext(
    "This checkout link has expired. Please go back to the shop and start again.")
OVER_LONG = lazy_gettext(
    "This checkout link is too long to be valid. Please go back to the shop and start again.")
BAD_CLAIMS = lazy_gettext(
    "This checkout link contains settings we cannot use. Please go back to the shop and start "
    "again.")
NOT_ALLOWED = lazy_gettext(
    "This checkout cannot be opened from this website. Please go back to the shop and start "
    "again.")


def refused(message: Any, detail: str) -> LaunchTokenError:
    """A LaunchTokenError showing ``message`` to the user and keeping ``detail`` for developers.

    ``detail`` names what was wrong (for the CLI, logs, tests); it never holds a claim's value.
    """
    error = LaunchTokenError(message)
    # Only refusals made here carry a detail (the CLI reads it with getattr), so the class does
    # not declare it.
    error.detail = detail  # type: ignore[attr-defined]
    return error


def _key(app: Flask) -> OctKey:
    return OctKey.import_key(secret_bytes(app.config["CHECKOUT_LAUNCH_SECRET"]))


def issue_token(app: Flask, flow: str, **claims: Any) -> str:
    """Sign a launch token for ``flow`` with ``claims`` exactly as given (with jti, iat, exp).

    Use :func:`launch_url` to get sensible ``jti``/``iat``/``exp``; this is the raw signer, kept
    separate so that tests and merchants' tooling can sign exactly what they mean.
    """
    payload = {"flow": flow, **{k: v for k, v in claims.items() if v is not None}}
    return jwt.encode({"alg": "HS256", "typ": "JWT"}, payload, _key(app), algorithms=ALGORITHMS)


def verify_token(app: Flask, token: str) -> dict[str, Any]:
    """Return the validated, normalised claims of ``token`` or raise :class:`LaunchTokenError`."""
    if not isinstance(token, str) or not token:
        raise refused(MALFORMED, "no token")
    if len(token) > MAX_TOKEN_LENGTH:
        raise refused(OVER_LONG, f"longer than {MAX_TOKEN_LENGTH} characters")
    try:
        decoded = jwt.decode(token, _key(app), algorithms=ALGORITHMS)
    except JoseError as exc:
        # A token that parses but whose signature does not match was altered (or signed with
        # another key); anything else is just not a token of ours.
        reason = TAMPERED if isinstance(exc, BadSignatureError) else MALFORMED
        raise refused(reason, exc.error or "not a JWS") from exc
    except (ValueError, TypeError) as exc:
        raise refused(MALFORMED, "not a JWS") from exc
    if decoded.header.get("alg") not in ALGORITHMS:
        raise refused(MALFORMED, "alg must be HS256")
    claims = dict(decoded.claims)
    _validate_times(claims)
    return _validate_claims(app, claims)


def _validate_times(claims: dict[str, Any]) -> None:
    registry = jwt.JWTClaimsRegistry(
        leeway=CLOCK_LEEWAY,
        exp={"essential": True}, iat={"essential": True}, jti={"essential": True},
    )
    try:
        registry.validate(claims)
    except ExpiredTokenError as exc:
        raise refused(EXPIRED, "exp is in the past") from exc
    except (MissingClaimError, InvalidClaimError) as exc:
        raise refused(BAD_CLAIMS, exc.description) from exc
    # Booleans are ints in Python; the registry already refused them as NumericDates.
    if claims["exp"] - claims["iat"] > MAX_LIFETIME or claims["exp"] <= claims["iat"]:
        raise refused(BAD_CLAIMS, f"exp must be after iat by at most {MAX_LIFETIME} s")
    if not _JTI.match(claims["jti"]):
        raise refused(BAD_CLAIMS, "jti must be 8 to 128 printable ASCII characters")


def _validate_claims(app: Flask, claims: dict[str, Any]) -> dict[str, Any]:
    unknown = set(claims) - KNOWN_CLAIMS
    if unknown:
        raise refused(BAD_CLAIMS, "unknown claims: " + ", ".join(sorted(unknown)[:5])[:200])
    flow = claims.get("flow")
    if flow not in FLOWS:
        raise refused(BAD_CLAIMS, "flow must be onramp or offramp")
    out: dict[str, Any] = {k: claims[k] for k in REGISTERED_CLAIMS | {"flow"} if k in claims}
    for name in SESSION_CLAIMS:
        value = claims.get(name)
        if value is None:
            continue
        out[name] = _normalise(name, value, flow)

    lock = claims.get("lock", [])
    if not isinstance(lock, list) or not all(isinstance(n, str) for n in lock):
        raise refused(BAD_CLAIMS, "lock must be a list of claim names")
    if not set(lock) <= LOCKABLE_CLAIMS:
        raise refused(BAD_CLAIMS, "lock may name only: " + ", ".join(sorted(LOCKABLE_CLAIMS)))
    if any(out.get(n) is None for n in lock):
        raise refused(BAD_CLAIMS, "every locked claim needs a value")
    out["lock"] = sorted(_implied_locks(set(lock), out))
    _checksummed_address(out)
    _check_payment_type(out)

    allowed = allowed_origins(app)
    parent = out.get("parentOrigin")
    if parent is not None and parent not in allowed:
        raise refused(NOT_ALLOWED, "parentOrigin is not in CHECKOUT_FRAME_ANCESTORS")
    return_url = out.get("returnUrl")
    if return_url is not None:
        targets = {parent} if parent else allowed
        if normalize_origin(return_url, allow_path=True) not in targets:
            raise refused(NOT_ALLOWED, "returnUrl must be on parentOrigin or a frame ancestor")
    return out


# A locked claim is only meaningful together with the claim that gives it its unit or scope: a
# locked amount of 100 with a free currency lets the user turn 100 NGN into 100 USDT; a locked
# wallet address with a free network lets the user send to that address on another chain.
LOCK_IMPLIES = {"amount": "currency", "address": "network", "memo": "network"}


def _check_payment_type(claims: dict[str, Any]) -> None:
    """A merchant-funded payout (``VIRTUAL_WALLET``) pays out of the merchant's balance: only a
    signed token may ask for one, for an amount the user cannot change, in a currency the user
    cannot change, with the merchant's own wallet (where a refund would go) fixed too."""
    payment_type = claims.get("paymentType")
    if payment_type is None:
        return
    if claims["flow"] != "offramp":
        raise refused(BAD_CLAIMS, "paymentType is an off-ramp claim")
    if payment_type == "VIRTUAL_WALLET":
        locked = set(claims["lock"])
        if not {"amount", "currency"} <= locked:
            raise refused(BAD_CLAIMS, "paymentType VIRTUAL_WALLET needs amount and currency "
                                      "locked")
        if any(claims.get(name) is None for name in ("address", "network", "asset")):
            raise refused(BAD_CLAIMS, "paymentType VIRTUAL_WALLET needs the merchant's network, "
                                      "asset and address (where a refund goes)")
        # What the merchant's balance pays in, and where a refund goes, are the merchant's.
        claims["lock"] = sorted(locked | {"address", "network", "asset"})


def _implied_locks(lock: set[str], claims: dict[str, Any]) -> set[str]:
    """``lock`` plus the claims its members need locked with them; refuses a token without them.

    A locked amount in local money is an amount of one country's money: 20,000 NGN must not become
    20,000 KES because the user picked Kenya, so the country is locked with it.
    """
    implied = set(lock)
    for name in sorted(lock):
        needed = [LOCK_IMPLIES[name]] if name in LOCK_IMPLIES else []
        if name == "amount" and claims.get("currency", "local") == "local":
            needed.append("countryIsoCode")
        for claim in needed:
            if claims.get(claim) is None:
                raise refused(BAD_CLAIMS,
                              f"locking {name} needs a {claim} claim (it is locked too)")
            implied.add(claim)
    return implied


def _checksummed_address(claims: dict[str, Any]) -> None:
    """The wallet address in the form the network writes it (an EVM address with its EIP-55
    checksum), when the token names the network: a locked address is never rewritten later, and
    every check compares with this form. An address that is not valid is left as given: its step
    says what is wrong."""
    address, network = claims.get("address"), claims.get("network")
    if not address or not network:
        return
    try:
        claims["address"] = validate_address(network, address)
    except AddressError:
        pass


def _normalise(name: str, value: Any, flow: str) -> Any:
    """One claim's value in the form the session stores, or LaunchTokenError."""
    if name == "amount":
        return _amount(value)
    if not isinstance(value, str) or not storable(value):
        # No claim may carry a NUL, a lone surrogate or a control character (checkout.inputs).
        raise refused(BAD_CLAIMS, f"{name} is not valid")
    checks: dict[str, tuple[re.Pattern[str], Any]] = {
        "network": (_CODE, str.upper), "asset": (_CODE, str.upper),
        "countryIsoCode": (_COUNTRY, str.upper), "paymentChannel": (_CHANNEL, str.lower),
        "carrierCode": (_CARRIER, None), "address": (_WALLET, None), "email": (_EMAIL, None),
        "phoneNumber": (_PHONE, None), "locale": (_LOCALE, None),
    }
    if name in checks:
        pattern, fold = checks[name]
        value = fold(value) if fold else value
        if not pattern.match(value):
            raise refused(BAD_CLAIMS, f"{name} is not valid")
        return value
    if name == "colorScheme":
        if value not in COLOR_SCHEMES:
            raise refused(BAD_CLAIMS, f"colorScheme must be one of {', '.join(COLOR_SCHEMES)}")
        return value
    if name == "paymentType":
        if value not in PAYMENT_TYPES:
            raise refused(BAD_CLAIMS, f"paymentType must be one of {', '.join(PAYMENT_TYPES)}")
        return value
    if name == "currency":
        if value not in CURRENCIES[flow]:
            raise refused(BAD_CLAIMS, f"currency must be one of {', '.join(CURRENCIES[flow])}")
        return value
    if name in ("memo", "orderParams"):
        if len(value) > (128 if name == "memo" else 1024) or not storable(value):
            raise refused(BAD_CLAIMS, f"{name} is not valid")
        return value
    if name == "parentOrigin":
        origin = normalize_origin(value)
        if origin is None:
            raise refused(BAD_CLAIMS, "parentOrigin must be scheme://host[:port], no path")
        return origin
    if name == "returnUrl":
        if len(value) > 2048 or normalize_origin(value, allow_path=True) is None:
            raise refused(BAD_CLAIMS, f"{name} is not valid")
        return value
    raise refused(BAD_CLAIMS, f"{name} is not handled")  # pragma: no cover - all are, above


def _amount(value: Any, name: str = "amount") -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise refused(BAD_CLAIMS, f"{name} is not valid")
    text = str(value).strip()
    if len(text) > MAX_AMOUNT_CHARACTERS:
        raise refused(BAD_CLAIMS, f"{name} is not valid")
    try:
        amount = Decimal(text)
    except InvalidOperation as exc:
        raise refused(BAD_CLAIMS, f"{name} is not valid") from exc
    if not amount.is_finite() or amount <= 0 or amount > MAX_AMOUNT:
        raise refused(BAD_CLAIMS, f"{name} must be a positive number")
    # "1e-1000000" is short, positive and finite, and written out it is a million digits (once
    # stored, on every page of the session): no money has more places than MAX_AMOUNT_PLACES.
    exponent = amount.normalize().as_tuple().exponent
    if not isinstance(exponent, int) or exponent < -MAX_AMOUNT_PLACES:
        raise refused(BAD_CLAIMS, f"{name} has more than {MAX_AMOUNT_PLACES} decimal places")
    # A decimal string: JSON numbers would turn 0.1 into a float on the way back from the database.
    return format(amount.normalize(), "f")


def normalize_origin(value: str, *, allow_path: bool = False) -> str | None:
    """``scheme://host[:port]`` in canonical form (lower case, no default port), else None.

    With ``allow_path`` the value may be a full URL and its origin is returned; without it, any
    path other than empty, query, fragment or user info makes the value not an origin.
    """
    if not isinstance(value, str) or len(value) > 2048 or any(c.isspace() for c in value):
        return None
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    if not allow_path and (parts.path not in ("", "/") or parts.query or parts.fragment
                           or value.endswith("/")):
        return None
    host = parts.hostname.lower()
    if not _HOST.match(host):  # wildcards and other oddities are not one origin
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    default_port = {"http": 80, "https": 443}[parts.scheme]
    netloc = host if port in (None, default_port) else f"{host}:{port}"
    return f"{parts.scheme}://{netloc}"


def allowed_origins(app: Flask) -> set[str]:
    """The origins named in ``CHECKOUT_FRAME_ANCESTORS`` (``'self'`` becomes our own origin).

    CSP source expressions other than plain origins (wildcards, bare hosts, ``'none'``) still
    frame unsigned sessions through the CSP, but a token's ``parentOrigin`` must be listed exactly.
    """
    origins: set[str] = set()
    for entry in app.config["CHECKOUT_FRAME_ANCESTORS"]:
        if entry == "'self'":
            if has_request_context():
                origins.add(normalize_origin(request.host_url.rstrip("/")) or "")
            continue
        origin = normalize_origin(entry)
        if origin:
            origins.add(origin)
    origins.discard("")
    return origins


def session_claims(claims: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Split verified claims into what a session keeps (prefill and settings) and its locks."""
    kept = {k: v for k, v in claims.items() if k in SESSION_CLAIMS}
    return kept, list(claims.get("lock", []))


def launch_url(app: Flask, flow: str, *, _external: bool = False, _base_url: str | None = None,
               _ttl: int = DEFAULT_TTL, **claims: Any) -> str:
    """The URL of ``/launch`` with a new token for ``flow`` and ``claims``.

    Adds a random ``jti``, ``iat`` = now and ``exp`` = now + ``_ttl`` seconds (900 by default, at
    most 1800; ``flask checkout launch-url --ttl`` takes seconds too). ``_base_url`` (e.g.
    ``"https://pay.example.com"``) makes the URL absolute on that address;
    ``_external=True`` does so on the public address (``CHECKOUT_PUBLIC_URL``, ``SERVER_NAME``, or
the request's host when trusted: :mod:`checkout.public_address`); otherwise the URL is a
    path. The claims are validated now, so a mistake fails in the merchant's code, not in the
    user's browser.
    """
    if not 0 < _ttl <= MAX_LIFETIME:
        raise ValueError(f"_ttl must be between 1 and {MAX_LIFETIME} seconds")
    now = int(time.time())
    claims = {"jti": secrets.token_urlsafe(18), "iat": now, "exp": now + _ttl, **claims}
    token = issue_token(app, flow, **claims)
    with (nullcontext() if has_app_context() else app.app_context()):
        verify_token(app, token)
        if _external and not _base_url:
            # The trusted public address, never a request's Host (checkout.public_address).
            _base_url = public_base()
            if _base_url is None:
                raise RuntimeError("an external launch URL needs CHECKOUT_PUBLIC_URL, "
                                   "SERVER_NAME, or a request on a trusted host")
        if has_request_context() or app.config.get("SERVER_NAME"):
            # A path, always: outside a request url_for would make it absolute on SERVER_NAME,
            # and the base below would be put in front of a whole URL.
            path = url_for("checkout.launch", token=token, _external=False)
        else:
            adapter = app.url_map.bind("localhost", script_name=app.config.get("APPLICATION_ROOT"))
            path = adapter.build("checkout.launch", {"token": token})
    if _base_url:
        return _base_url.rstrip("/") + path
    return path

