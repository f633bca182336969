"""``/api/kyc/*`` (spec 4.7) and ``/api/user/*`` (spec 4.6): KYC state and submissions, user tokens.

The user endpoints are disabled unless ``SANDBOX_USER_ENDPOINTS`` is true, as they are upstream
until support enables them: 403 with the upstream's message (notes 2).

User tokens are HS256 JWTs signed with a key derived from the sandbox's client credentials. The
sandbox never asks for them back (the spec does not say how they are used), so they carry claims a
merchant can inspect and nothing more.
"""
from __future__ import annotations

import hashlib
import re
import time
import uuid
from decimal import Decimal
from typing import Any

from email_validator import EmailNotValidError, validate_email
from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from joserfc import jwt
from joserfc.jwk import OctKey

from . import reference
from .api_onramp import public_url
from .kyc import (
    FLOWS,
    STATUS_DESCRIPTIONS,
    KycError,
    KycStatus,
    KycUser,
    check_user_fields,
    kyc_store,
    reached_limit,
)
from .orders import iso
from .reference import Country
from .validation import ApiError, Body, InvalidRequest, Query

bp = Blueprint("sandbox_kyc", __name__, url_prefix="/api")

NOT_AVAILABLE = "This feature is not available for this merchant, please contact support"
ACCESS_TOKEN_SECONDS = 15 * 60
REFRESH_TOKEN_SECONDS = 30 * 24 * 3600
_PHONE = re.compile(r"\+?[0-9]{7,15}")


# -- request pieces -------------------------------------------------------------------------------

def _email(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    try:
        return validate_email(value, check_deliverability=False).normalized
    except EmailNotValidError:
        raise InvalidRequest(f"{name} must be an email address") from None


def phone_country(value: str, name: str) -> Country:
    if not _PHONE.fullmatch(value):
        raise InvalidRequest(f"{name} must be an international phone number, digits only "
                             "(e.g. 2348012345678)")
    country = reference.country_for_phone(value)
    if country is None:
        raise InvalidRequest(f"{name} is not a phone number of a supported country")
    return country


def _country(value: str | None, name: str = "countryIsoCode") -> Country:
    country = reference.country(value or "")
    if country is None or value != country.iso:
        raise InvalidRequest(f"{name} {value!r} is not a supported country")
    return country


def volumes(*, email: str | None, phone: str | None) -> dict[str, Decimal]:
    """The user's order volume per flow in USD, when the order store can tell it (else 0)."""
    orders = getattr(current_app.extensions.get("sandbox"), "orders", None)
    volume = getattr(orders, "volume_usd", None)
    if volume is None or not (email or phone):
        return {}
    return {flow: Decimal(str(volume(email=email, phone=phone, family=flow))) for flow in FLOWS}


def status_of(user: KycUser | None, country: Country | None = None, *,
              email: str | None = None, phone: str | None = None) -> KycStatus:
    """A user's KYC status. One the KYC store does not know (no submission, no user API call)
    has passed nothing, yet may have orders: by the ``email`` or ``phone`` asked about, they
    still count towards ``reachedKycLimit`` in ``country``."""
    if user is None:
        reached = country is not None and reached_limit(
            country, "none", volumes(email=email, phone=phone))
        return KycStatus("none", "none", STATUS_DESCRIPTIONS["none"], reached)
    return kyc_store().status(user, volumes(email=user.email, phone=user.phone))


def _checked_fields(document: reference.KycDocument, values: Any) -> dict[str, Any]:
    try:
        return check_user_fields(document, values, kyc_store().now().date())
    except KycError as exc:
        raise InvalidRequest(exc.message) from None


def _submit(user: KycUser, document: reference.KycDocument, fields: dict[str, Any]) -> None:
    try:
        kyc_store().submit(user, document, fields)
    except KycError as exc:
        raise InvalidRequest(exc.message) from None


def _rules(rules: tuple[reference.KycRule, ...]) -> list[dict[str, Any]]:
    return [{"type": r.type, "minAmount": r.to_json()["min"]} for r in rules]


# -- /api/kyc -------------------------------------------------------------------------------------

@bp.get("/kyc/state")
def kyc_state() -> ResponseReturnValue:
    """Where a user stands with KYC, and the documents their country accepts."""
    query = Query(request)
    phone = query.text("phoneNumber", required=True)
    email = _email(query.text("email"), "email")
    country = phone_country(phone, "phoneNumber")
    user = kyc_store().find(phone=phone, email=email)
    status = status_of(user, country, email=email, phone=phone)
    return jsonify({
        # The partner's hosted verification page, at the address browsers use (under the
        # checkout's prefix when the sandbox is embedded): see kyc_page.
        "kycUrl": public_url("sandbox_kyc_console.kyc_page", phoneNumber=phone.lstrip("+")),
        "offrampKycRules": _rules(country.kyc_offramp),
        "onrampKycRules": _rules(country.kyc_onramp),
        "passedKyc": status.passed_type != "none",
        "kycStatus": status.status,
        "kycStatusDescription": status.description,
        "reachedKycLimit": status.reached_limit,
        "documentTypes": [{k: v for k, v in d.to_json().items() if k != "type"}
                          for d in country.documents],
    })


@bp.post("/kyc/submit")
def kyc_submit() -> ResponseReturnValue:
    """Submit identity documents for the user with this phone number."""
    body = Body(request, allowed=("phone", "idType", "userFields"))
    phone = body.text("phone", required=True)
    id_type = body.text("idType", required=True)
    if body.data.get("userFields") is None:
        raise InvalidRequest("userFields is required")
    country = phone_country(phone, "phone")
    document = country.document_by_value(id_type)
    if document is None:
        values = ", ".join(d.value for d in country.documents)
        raise InvalidRequest(f"idType must be one of: {values}")
    fields = _checked_fields(document, body.data["userFields"])
    try:
        user, _ = kyc_store().get_or_create(country, phone=phone, email=fields.get("email"))
    except KycError as exc:
        raise InvalidRequest(exc.message) from None
    _submit(user, document, fields)
    return jsonify(success=True)


# -- /api/user ------------------------------------------------------------------------------------

def _require_user_endpoints() -> None:
    if not current_app.config.get("SANDBOX_USER_ENDPOINTS"):
        raise ApiError(403, {"message": NOT_AVAILABLE})


def _user_for(body: Body) -> tuple[KycUser, bool]:
    """The user named by ``email`` in ``countryIsoCode``, created when absent."""
    email = _email(body.text("email", required=True, max_length=254), "email")
    country = _country(body.text("countryIsoCode", required=True))
    try:
        return kyc_store().get_or_create(country, email=email)
    except KycError as exc:
        raise InvalidRequest(exc.message) from None


def _token_key() -> OctKey:
    cfg = current_app.config
    seed = cfg.get("SANDBOX_CLIENT_SECRET") or cfg.get("SANDBOX_CLIENT_ID") or "sandbox"
    return OctKey.import_key(hashlib.sha256(f"sandbox-user-tokens:{seed}".encode()).digest())


def _token(user: KycUser, kind: str, lifetime: int) -> str:
    now = int(time.time())
    claims = {"sub": user.id, "email": user.email, "countryIsoCode": user.country.iso,
              "type": kind, "iat": now, "exp": now + lifetime, "jti": uuid.uuid4().hex}
    return jwt.encode({"alg": "HS256", "typ": "JWT"}, claims, _token_key())


@bp.post("/user/tokens")
def user_tokens() -> ResponseReturnValue:
    """Access and refresh tokens for a user, created if none exists for the email."""
    _require_user_endpoints()
    body = Body(request, allowed=("email", "countryIsoCode"))
    user, created = _user_for(body)
    _emit_auth(user, "register" if created else "login")
    return jsonify(accessToken=_token(user, "access", ACCESS_TOKEN_SECONDS),
                   refreshToken=_token(user, "refresh", REFRESH_TOKEN_SECONDS))


@bp.post("/user/kyc/status")
def user_kyc_status() -> ResponseReturnValue:
    """A user's KYC status and the documents (with ``_id``) they may submit."""
    _require_user_endpoints()
    body = Body(request, allowed=("email", "countryIsoCode"))
    user, _ = _user_for(body)
    status = status_of(user)
    return jsonify({
        "passedKycType": status.passed_type,
        "kycStatus": status.status,
        "kycStatusDescription": status.description,
        "reachedKycLimit": status.reached_limit,
        "basicDocuments": [d.to_json(with_id=True) for d in user.country.basic_documents],
        "advancedDocuments": [d.to_json(with_id=True) for d in user.country.advanced_documents],
    })


@bp.post("/user/kyc/submit")
def user_kyc_submit() -> ResponseReturnValue:
    """Submit a document (by its ``_id``) for a user known by email."""
    _require_user_endpoints()
    body = Body(request, allowed=("email", "documentId", "userFields"))
    email = _email(body.text("email", required=True, max_length=254), "email")
    document_id = body.text("documentId", required=True)
    if body.data.get("userFields") is None:
        raise InvalidRequest("userFields is required")
    user = kyc_store().find(email=email)
    if user is None:
        raise InvalidRequest("no user has this email: create it with /api/user/tokens or "
                             "/api/user/kyc/status first")
    found = reference.document_by_id(document_id or "")
    if found is None or found[0] is not user.country:
        raise InvalidRequest(f"documentId is not a document of {user.country.iso}")
    document = found[1]
    fields = _checked_fields(document, body.data["userFields"])
    _submit(user, document, fields)
    return jsonify(success=True)


def _emit_auth(user: KycUser, operation: str) -> None:
    """The opt-in ``auth`` event, when the sandbox app can send it."""
    emit = getattr(current_app.extensions.get("sandbox"), "emit_auth_event", None)
    if emit is None:
        return
    from .webhooks import auth_payload

    emit(auth_payload(operation=operation, status="success", user_email=user.email or "",
                      date=iso(kyc_store().now()),
                      user_country_iso_code=user.country.iso, user_id=user.id))
