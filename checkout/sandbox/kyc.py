"""KYC of the sandbox's users: who submitted which document, and the review's outcome.

A user is known by email and/or phone number. Each submission goes ``pending`` and, after a review
of ``REVIEW_SECONDS`` sandbox seconds (times the time scale), ``approved`` or ``rejected``. The
sandbox approves every well-formed submission except one documented magic value: an ``id_number`` whose
digits are all zeros (``00000000``, ``G0000000``, ``GHA-000000000-0``) is rejected, so merchants can
exercise the rejection path.

Decisions are applied lazily, whenever a user is read, against an injectable ``now`` (tests pass a
fake clock and are instant); when the sandbox has a scheduler, it also settles each submission on
time so that the opt-in ``kyc`` webhook goes out without anyone polling.

Field values are checked against the document's descriptors: patterns with RE2 (linear time, so a
pattern can never hang the sandbox), flag ``i`` meaning case-insensitive.
"""
from __future__ import annotations

import hashlib
import itertools
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

import re2
from email_validator import EmailNotValidError, validate_email
from flask import Flask, current_app, has_app_context

from . import reference as ref
from .orders import iso
from .reference import Country, KycDocument, KycRule, RequiredField

REVIEW_SECONDS = 60.0
MIN_AGE_YEARS = 18
# Smile ID image types: 0 selfie, 1 document front, 5 (or 2, per one public page) the back.
IMAGE_TYPES = frozenset({0, 1, 2, 3, 4, 5, 6, 7})
REQUIRED_IMAGE_TYPES = frozenset({0, 1})
MAX_TEXT = 200

SubmissionStatus = Literal["pending", "approved", "rejected"]
STATUS_DESCRIPTIONS = {
    "none": "No KYC documents have been submitted yet",
    "pending": "The documents are being reviewed",
    "approved": "The documents have been verified",
    "rejected": "The documents could not be verified; submit them again",
}
# Webhook vocabulary (notes 4) for the store's statuses.
EVENT_STATUS = {"pending": "initiated", "approved": "approved", "rejected": "rejected"}


class KycError(ValueError):
    """A submission the upstream refuses (HTTP 400); ``message`` names the field."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class Submission:
    id: str
    document: KycDocument
    submitted_at: datetime
    decide_at: datetime
    outcome: SubmissionStatus
    status: SubmissionStatus = "pending"

    @property
    def hash(self) -> str:
        """``passedKycHash``: identifies this submission without revealing its contents."""
        return hashlib.sha256(f"kyc:{self.id}".encode()).hexdigest()


@dataclass
class KycUser:
    id: str
    country: Country
    email: str | None = None
    phone: str | None = None
    submissions: list[Submission] = field(default_factory=list)

    @property
    def latest(self) -> Submission | None:
        return self.submissions[-1] if self.submissions else None

    @property
    def passed(self) -> Submission | None:
        """The approved submission of the highest level (the latest among equals)."""
        approved = [s for s in self.submissions if s.status == "approved"]
        return max(approved, key=lambda s: ref.KYC_LEVELS.index(s.document.kind), default=None)

    @property
    def passed_type(self) -> str:
        passed = self.passed
        return passed.document.kind if passed else "none"


@dataclass(frozen=True)
class KycStatus:
    passed_type: str
    status: str
    description: str
    reached_limit: bool


def allowed_volume(rules: tuple[KycRule, ...], passed_type: str) -> Decimal | None:
    """The order volume in USD a user with ``passed_type`` may reach; None means unbounded."""
    rank = ref.KYC_LEVELS.index(passed_type)
    covered = [r for r in rules if ref.KYC_LEVELS.index(r.type) <= rank]
    if any(r.max is None for r in covered):
        return None
    return max((r.max for r in covered if r.max is not None), default=Decimal(0))


class KycStore:
    """Thread-safe, in-memory users and submissions of one sandbox app."""

    def __init__(self, now: Callable[[], datetime] = _utcnow, *, scale: float = 1.0,
                 emit: Callable[[dict[str, Any]], None] | None = None,
                 schedule: Callable[..., Any] | None = None) -> None:
        self._now = now
        self.scale = scale
        self._emit = emit            # sends an opt-in `kyc` webhook payload
        self._schedule = schedule    # call_later(sandbox_seconds, fn, *args)
        self._lock = threading.RLock()
        self._by_email: dict[str, KycUser] = {}
        self._by_phone: dict[str, KycUser] = {}
        self._ids = itertools.count(1)
        self._user_ids: set[str] = set()

    def now(self) -> datetime:
        return self._now()

    # -- users ------------------------------------------------------------------------------------

    def find(self, *, email: str | None = None, phone: str | None = None) -> KycUser | None:
        with self._lock:
            user = (self._by_phone.get(_phone_key(phone)) if phone else None) or \
                (self._by_email.get(email.lower()) if email else None)
        if user is not None:
            self._settle(user)
        return user

    def get_or_create(self, country: Country, *, email: str | None = None,
                      phone: str | None = None) -> tuple[KycUser, bool]:
        """The user known by ``phone``, else by ``email``, else a new one.

        A user first known by email (``/api/user/tokens``) who then submits KYC by phone with
        that email is one person: the phone is linked to them, so their submission shows in
        ``/api/user/kyc/status``, in ``kyc`` events (with their email) and in order webhooks.
        A phone or email already held by another user is never moved; a user of another country
        is refused (``KycError``).
        """
        with self._lock:
            user = self.find(phone=phone) if phone else None
            if user is None and email:
                user = self.find(email=email)
            if user is not None and user.country is not country:
                # Linking a phone of one country to a user of another would mix their documents.
                raise KycError(f"this user is registered in {user.country.iso}, "
                               f"not {country.iso}")
            created = user is None
            if user is None:
                user = KycUser(self._new_id(email.lower() if email else f"phone:{phone}"),
                               country)
                self._user_ids.add(user.id)
            if email and user.email is None and email.lower() not in self._by_email:
                user.email = email
                self._by_email[email.lower()] = user
            if phone and _phone_key(phone) not in self._by_phone:
                # A user found by email may already have another phone: both now reach them.
                if user.phone is None:
                    user.phone = phone
                self._by_phone[_phone_key(phone)] = user
            return user, created

    def _new_id(self, seed: str) -> str:
        """A stable id derived from ``seed``, never one another user already has: two users
        sharing an id would merge in order webhooks and tokens."""
        candidate = ref.stable_id("user", seed)
        for n in itertools.count(2):
            if candidate not in self._user_ids:
                return candidate
            candidate = ref.stable_id("user", f"{seed}#{n}")
        raise AssertionError("unreachable")

    # -- submissions ------------------------------------------------------------------------------

    def submit(self, user: KycUser, document: KycDocument, fields: dict[str, Any]) -> Submission:
        """Record a checked submission; refuse one while another is pending or already passed."""
        with self._lock:
            self._settle(user)
            latest = user.latest
            if latest is not None and latest.status == "pending":
                raise KycError("a KYC submission is already under review")
            rank = ref.KYC_LEVELS.index
            if rank(user.passed_type) >= rank(document.kind):
                raise KycError(f"{user.passed_type} KYC is already approved for this user")
            now = self.now()
            outcome: SubmissionStatus = "rejected" if _is_magic_reject(fields) else "approved"
            submission = Submission(
                id=f"kyc_{next(self._ids):06d}_{uuid.uuid4().hex[:8]}", document=document,
                submitted_at=now, decide_at=now + timedelta(seconds=REVIEW_SECONDS * self.scale),
                outcome=outcome)
            user.submissions.append(submission)
        self._notify(user, submission)
        if self._schedule is not None:
            self._schedule(REVIEW_SECONDS, self.settle_submission, user, submission)
        return submission

    def settle_submission(self, user: KycUser, submission: Submission) -> None:
        """Apply a submission's decision now (the scheduler's timer may fire a hair early)."""
        with self._lock:
            decided = submission.status == "pending"
            if decided:
                submission.status = submission.outcome
        if decided:
            self._notify(user, submission)

    def _settle(self, user: KycUser) -> None:
        now = self.now()
        with self._lock:
            due = [s for s in user.submissions if s.status == "pending" and s.decide_at <= now]
            for s in due:
                s.status = s.outcome
        for s in due:
            self._notify(user, s)

    def status(self, user: KycUser, volume_usd: Decimal = Decimal(0)) -> KycStatus:
        """Where the user stands; ``reached_limit`` compares their volume with the rules."""
        self._settle(user)
        with self._lock:
            latest = user.latest
            status = latest.status if latest else "none"
            passed = user.passed_type
        allowed = allowed_volume(user.country.kyc_onramp, passed)
        return KycStatus(passed, status, STATUS_DESCRIPTIONS[status],
                         allowed is not None and volume_usd >= allowed)

    def webhook_user_kyc(self, email: str) -> dict[str, Any]:
        """``data.userKyc`` of an order webhook (spec 6.2): every field optional."""
        user = self.find(email=email)
        if user is None:
            return {}
        out: dict[str, Any] = {}
        passed = user.passed
        if passed is not None:
            out.update(passedKycType=passed.document.kind, passedKycHash=passed.hash)
        if user.latest is not None:
            out.update(latestKycType=user.latest.document.kind,
                       latestKycStatus=EVENT_STATUS[user.latest.status])
        return out

    def _notify(self, user: KycUser, submission: Submission) -> None:
        if self._emit is None:
            return
        from .webhooks import kyc_payload

        self._emit(kyc_payload(
            kyc_id=submission.id, status=EVENT_STATUS[submission.status],
            kyc_type=submission.document.kind, user_id=user.id, user_email=user.email or "",
            user_country_iso_code=user.country.iso, kyc_document=submission.document.value,
            date=iso(self.now())))


def _phone_key(phone: str) -> str:
    return phone.lstrip("+")


def _is_magic_reject(fields: dict[str, Any]) -> bool:
    digits = re.sub(r"[^0-9]", "", str(fields.get("id_number", "")))
    return bool(digits) and set(digits) == {"0"}


# -- field checks ---------------------------------------------------------------------------------

def check_user_fields(document: KycDocument, values: Any, today: date,
                      name: str = "userFields") -> dict[str, Any]:
    """The submitted values, checked against the document's descriptors, or ``KycError``."""
    if not isinstance(values, dict):
        raise KycError(f"{name} must be an object")
    known = {f.name for f in document.required_fields}
    unknown = sorted(set(values) - known)
    if unknown:
        raise KycError(f"{name} has unknown field(s): {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for descriptor in document.required_fields:
        key = f"{name}.{descriptor.name}"
        value = values.get(descriptor.name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if descriptor.required:
                raise KycError(f"{key} is required")
            continue
        out[descriptor.name] = _check_field(key, descriptor, value, document, today)
    return out


def _check_field(key: str, descriptor: RequiredField, value: Any, document: KycDocument,
                 today: date) -> Any:
    if descriptor.type == "smile-identity-images":
        return _check_images(key, value)
    if not isinstance(value, str):
        raise KycError(f"{key} must be a string")
    if len(value) > MAX_TEXT:
        raise KycError(f"{key} is too long (at most {MAX_TEXT} characters)")
    if descriptor.type == "date":
        born = _parse_date(key, value)
        if born >= today:
            raise KycError(f"{key} must be a date in the past")
        if _age(born, today) < MIN_AGE_YEARS:
            raise KycError(f"{key}: the user must be at least {MIN_AGE_YEARS} years old")
        return born.isoformat()
    if descriptor.type == "email":
        try:
            return validate_email(value, check_deliverability=False).normalized
        except EmailNotValidError:
            raise KycError(f"{key} must be an email address") from None
    if descriptor.type == "enum":
        allowed = [o.value for o in descriptor.options]
        if value not in allowed:
            raise KycError(f"{key} must be one of: {', '.join(allowed)}")
    if descriptor.type == "phone" and not re.fullmatch(r"\+?[0-9]{7,15}", value):
        raise KycError(f"{key} must be an international phone number")
    if descriptor.regexp is not None and not _pattern(descriptor).search(value):
        example = f" (e.g. {descriptor.format})" if descriptor.format else ""
        raise KycError(f"{key} does not match the format of {document.title}{example}")
    return value


def _pattern(descriptor: RequiredField) -> Any:
    options = re2.Options()
    options.case_sensitive = "i" not in (descriptor.regexp_flags or "")
    return re2.compile(descriptor.regexp, options)


def _parse_date(key: str, value: str) -> date:
    """An ISO 8601 date, or a date-time (the spec's dob is a date-time) reduced to its date."""
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        return datetime.fromisoformat(value).date()
    except ValueError:
        raise KycError(f"{key} must be an ISO 8601 date (YYYY-MM-DD)") from None


def _age(born: date, today: date) -> int:
    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))


def _check_images(key: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise KycError(f"{key} must be a list of {{image_type_id, image}}")
    seen = set()
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"image_type_id", "image"}:
            raise KycError(f"{key}[{i}] must be an object with image_type_id and image")
        type_id, image = item["image_type_id"], item["image"]
        if isinstance(type_id, bool) or type_id not in IMAGE_TYPES:
            raise KycError(f"{key}[{i}].image_type_id must be one of 0 (selfie), "
                           "1 (document front), 5 (document back)")
        if not isinstance(image, str) or not image.strip():
            raise KycError(f"{key}[{i}].image must be base64 data or a URL")
        seen.add(type_id)
    missing = sorted(REQUIRED_IMAGE_TYPES - seen)
    if missing:
        raise KycError(f"{key} needs a selfie (0) and the document front (1)")
    return value


# -- per-app store --------------------------------------------------------------------------------

EXTENSION_KEY = "sandbox_kyc"


def kyc_store(app: Flask | None = None) -> KycStore:
    """The app's store, created on first use from the sandbox state when there is one.

    Tests may put their own ``KycStore(now=fake_clock)`` in ``app.extensions["sandbox_kyc"]``.
    """
    # current_app is werkzeug's LocalProxy, which Flask's annotations present as the app itself.
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    store: KycStore | None = app.extensions.get(EXTENSION_KEY)
    if store is None:
        sandbox = app.extensions.get("sandbox")
        clock = getattr(sandbox, "clock", None)
        scheduler = getattr(sandbox, "scheduler", None)
        store = KycStore(
            now=clock.now if clock is not None else _utcnow,
            # With a sandbox scheduler, call_later scales the wait itself: keep them in step.
            scale=getattr(clock, "scale", None) or float(app.config.get("SANDBOX_TIME_SCALE",
                                                                        1.0)),
            emit=getattr(sandbox, "emit_kyc_event", None),
            schedule=getattr(scheduler, "call_later", None))
        store = app.extensions.setdefault(EXTENSION_KEY, store)
    return store


def webhook_user_kyc(email: str, app: Flask | None = None) -> dict[str, Any]:
    """``data.userKyc`` for an order webhook; empty outside an app context."""
    if app is None and not has_app_context():
        return {}
    return kyc_store(app).webhook_user_kyc(email)
