"""The sandbox's KYC pages: the partner's hosted verification page (``kycUrl``) and the console.

The hosted page (no script, laid out for a phone):

- ``GET /sandbox/kyc?phoneNumber=<digits>``: what ``/api/kyc/state`` gives as ``kycUrl``. It stands
  in for the verification partner's page a checkout may send its user to. It shows the user's KYC
  status (level passed, the latest submission and, when rejected, why) and, as a sandbox shortcut
  labelled as one, a button per level above the one passed: "Pass basic verification", "Pass
  advanced verification" (where the country has advanced documents).
- ``POST /sandbox/kyc`` ``{phoneNumber, level}``: the shortcut. It records a submission of the
  country's first document of that level, approved at once (``kyc`` events ``initiated`` then
  ``approved``), creating the user by phone if needed. Refused (400) while a submission is pending or
  when the level is already passed. A form post answers 303 to the page; a JSON post answers the user
  as ``/sandbox/kyc/users.json`` shows them.

The console:

- ``GET /sandbox/kyc/users`` (and ``.json``): every user, their level, order volume against what it
  allows, and their submissions, with buttons for the ones still pending.
- ``POST /sandbox/kyc/submissions/<id>/decision`` ``{decision: approve|reject|pending, reason?}``:
  decide a pending submission now; ``pending`` keeps it pending until decided here (its review no
  longer decides it). A form post answers 303 to the console; a JSON post answers the submission.

Every POST has the console's cross-site guard (403). Links are built with ``url_for``, so under a
checkout that serves these pages at ``{prefix}/sandbox/...`` they stay under that prefix.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from . import reference
from .api_kyc import phone_country, status_of, volumes
from .console_orders import refuse_cross_site_posts
from .kyc import (
    DECISIONS,
    FLOWS,
    REASON_DEFAULT,
    KycError,
    KycUser,
    Submission,
    allowed_volume,
    kyc_store,
    rules_of,
)
from .orders import iso
from .reference import Country, KycDocument
from .validation import InvalidRequest, Query, form_or_json

bp = Blueprint("sandbox_kyc_console", __name__)
bp.before_request(refuse_cross_site_posts)

LEVELS = ("basic", "advanced")


def _wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best == "application/json"


def _text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"{name} must be a string")
    return value


def shortcut_document(country: Country, level: str) -> KycDocument | None:
    """The document the hosted page's shortcut records for ``level``: the country's first."""
    documents = country.advanced_documents if level == "advanced" else country.basic_documents
    return documents[0] if documents else None


def _limit(value: Decimal | None) -> float | str:
    return "Infinity" if value is None else float(value)


def submission_json(submission: Submission) -> dict[str, Any]:
    """A submission as the console shows it: never the submitted field values or images."""
    return {
        "id": submission.id, "kycType": submission.document.kind,
        "idType": submission.document.value, "documentTitle": submission.document.title,
        "status": submission.status, "outcome": submission.outcome,
        "source": submission.source, "reason": submission.reason,
        "submittedAt": iso(submission.submitted_at),
        "decideAt": iso(submission.decide_at) if submission.decide_at else None,
        "decidedAt": iso(submission.decided_at) if submission.decided_at else None,
    }


def user_json(user: KycUser) -> dict[str, Any]:
    """A user as the console shows them, with what ``/api/kyc/state`` would say."""
    status = status_of(user)
    volume = volumes(email=user.email, phone=user.phone)
    return {
        "id": user.id, "countryIsoCode": user.country.iso, "phone": user.phone,
        "email": user.email, "passedKycType": status.passed_type, "kycStatus": status.status,
        "kycStatusDescription": status.description, "reachedKycLimit": status.reached_limit,
        "volumeUsd": {flow: float(volume.get(flow, Decimal(0))) for flow in FLOWS},
        "allowedVolumeUsd": {flow: _limit(allowed_volume(rules_of(user.country, flow),
                                                         status.passed_type))
                             for flow in FLOWS},
        "submissions": [submission_json(s) for s in user.submissions],
    }


# -- the hosted verification page -----------------------------------------------------------------

def _page_context(phone: str, country: Country) -> dict[str, Any]:
    user = kyc_store().find(phone=phone)
    status = status_of(user, country, phone=phone)
    latest = user.latest if user is not None else None
    rank = reference.KYC_LEVELS.index
    offers = []
    if status.status != "pending":
        for level in LEVELS:
            document = shortcut_document(country, level)
            if document is not None and rank(level) > rank(status.passed_type):
                offers.append({"level": level, "document": document})
    return {"phone": phone, "country": country, "status": status, "latest": latest,
            "offers": offers}


@bp.get("/sandbox/kyc")
def kyc_page() -> ResponseReturnValue:
    """The partner's hosted verification page (``kycUrl``), with the sandbox's shortcut."""
    phone = Query(request).text("phoneNumber", required=True)
    country = phone_country(phone, "phoneNumber")
    return render_template("sandbox/kyc.html", **_page_context(phone, country))


@bp.post("/sandbox/kyc")
def kyc_verify() -> ResponseReturnValue:
    """The sandbox shortcut: pass ``level`` now, as if the partner had verified the user."""
    data = form_or_json(request)
    phone = _text(data, "phoneNumber")
    if phone is None:
        raise InvalidRequest("phoneNumber is required")
    country = phone_country(phone, "phoneNumber")
    level = _text(data, "level")
    if level not in LEVELS:
        raise InvalidRequest(f"level must be one of: {', '.join(LEVELS)}")
    document = shortcut_document(country, level)
    if document is None:
        raise InvalidRequest(f"{country.name} has no {level} documents")
    store = kyc_store()
    try:
        user, _ = store.get_or_create(country, phone=phone)
        store.verify_now(user, document)
    except KycError as exc:
        raise InvalidRequest(exc.message) from None
    if _wants_json():
        return user_json(user)
    return redirect(url_for(".kyc_page", phoneNumber=phone), code=303)


# -- the console ----------------------------------------------------------------------------------

@bp.get("/sandbox/kyc/users")
def users_page() -> ResponseReturnValue:
    """Every KYC user and their submissions, with decisions for the pending ones."""
    users = [user_json(u) for u in kyc_store().users()]
    return render_template("sandbox/kyc_users.html", users=users,
                           default_reason=REASON_DEFAULT, highlight=request.args.get("highlight"))


@bp.get("/sandbox/kyc/users.json")
def users_json() -> ResponseReturnValue:
    return {"users": [user_json(u) for u in kyc_store().users()]}


@bp.post("/sandbox/kyc/submissions/<submission_id>/decision")
def decide(submission_id: str) -> ResponseReturnValue:
    """Approve, reject (with a reason) or keep pending a submission still pending."""
    data = form_or_json(request)
    decision = _text(data, "decision")
    if decision not in DECISIONS:
        raise InvalidRequest(f"decision must be one of: {', '.join(DECISIONS)}")
    try:
        submission = kyc_store().decide(submission_id, decision, _text(data, "reason"))
    except KeyError:
        abort(404, "no such KYC submission")
    except KycError as exc:
        raise InvalidRequest(exc.message) from None
    if _wants_json():
        return submission_json(submission)
    return redirect(url_for(".users_page", highlight=submission.id, _anchor=submission.id),
                    code=303)
