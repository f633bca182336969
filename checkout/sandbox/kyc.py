"""KYC of the sandbox's users: who submitted which document, and the review's outcome.

A user is known by email and/or phone number. Each submission goes ``pending`` and, after a review
of ``REVIEW_SECONDS`` sandbox seconds (times the time scale), ``approved`` or ``rejected``; or it stays
``pending`` until someone decides it on the console. What the review decides (the forced outcome,
like an order's) comes from, first to last:

1. a magic ``last_name`` in the submitted fields: ``Approve``, ``Reject`` or ``Pending`` (any case);
2. an ``id_number`` whose digits are all zeros (``00000000``, ``G0000000``, ``GHA-000000000-0``):
   rejected, as a number the issuer does not know;
3. the config key ``SANDBOX_KYC_OUTCOME`` (``approve``, ``reject`` or ``pending``);
4. approve.

The console (``console_kyc``) can decide any submission still pending at any time: approve it, reject
it with a reason, or keep it pending (its review timer no longer decides it). A rejection carries a
reason in plain words, given as ``kycStatusDescription``.

Decisions are applied lazily, whenever a user is read, against an injectable ``now`` (tests pass a
fake clock and are instant); when the sandbox has a scheduler, it also settles each submission on
time so that the opt-in ``kyc`` webhook goes out without anyone polling.

Field values are checked against the document's descriptors: patterns with RE2 (linear time, so a
pattern can never hang the sandbox), flag ``i`` meaning case-insensitive. Images (advanced documents)
must be the selfie, the front and, for a card, the back, each base64 of a JPEG or PNG or an https URL.
Nothing submitted is kept: the store remembers which document a user submitted and its outcome, never
the field values or images, and no message repeats them.
"""
from __future__ import annotations

import binascii
import hashlib
import itertools
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import re2
from email_validator import EmailNotValidError, validate_email
from flask import Flask, current_app, has_app_context

from . import reference as ref
from .orders import iso
from .reference import Country, KycDocument, KycRule, RequiredField

REVIEW_SECONDS = 60.0
MIN_AGE_YEARS = 18
MAX_TEXT = 200
MAX_REASON = 300
MAX_IMAGE_BYTES = 10 * 1024 * 1024          # decoded; a phone photo shrunk for upload is ~1 MB
MAX_IMAGE_URL = 2048
_JPEG = b"\xff\xd8\xff"
_PNG = b"\x89PNG\r\n\x1a\n"

SubmissionStatus = Literal["pending", "approved", "rejected"]
Decision = Literal["approve", "reject", "pending"]
DECISIONS: tuple[Decision, ...] = get_args(Decision)
DECIDED: Mapping[Decision, SubmissionStatus] = {"approve": "approved", "reject": "rejected",
                                                 "pending": "pending"}
# A ``last_name`` (trimmed, any case) that forces the submission's outcome.
MAGIC_LAST_NAMES: Mapping[str, Decision] = {"approve": "approve", "reject": "reject",
                                            "pending": "pending"}

STATUS_DESCRIPTIONS = {
    "none": "No KYC documents have been submitted yet",
    "pending": "The documents are being reviewed",
    "approved": "The documents have been verified",
    # "rejected": the submission's reason (describe)
}
# Why a submission was rejected, in words a user can act on (kycStatusDescription).
REASON_DEFAULT = ("The documents could not be verified. Check the details and submit them again, "
                  "or use another document.")
REASON_ID_NOT_FOUND = ("The ID number was not found in the issuer's records. Check the number, or "
                       "use another document.")
REASON_DETAILS_MISMATCH = ("The name or date of birth does not match the document's records. "
                           "Check them, or use another document.")
# Every reason the review gives by itself (the console may write any other).
REASONS = (REASON_DEFAULT, REASON_ID_NOT_FOUND, REASON_DETAILS_MISMATCH)
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
    decide_at: datetime | None      # when the review decides; None: pending until the console does
    outcome: Decision               # what the review will decide (or decided)
    reason: str | None = None       # why it is rejected (outcome "reject")
    source: str = "default"         # what chose the outcome: default, config, last_name, id_number,
    #                                 console, kyc page
    status: SubmissionStatus = "pending"
    decided_at: datetime | None = None

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


FLOWS = ("onramp", "offramp")


def allowed_volume(rules: tuple[KycRule, ...], passed_type: str) -> Decimal | None:
    """The order volume in USD a user with ``passed_type`` may reach; None means unbounded.

    It is the ``max`` of the highest rule the user's level covers: 14.99 USD on Kenya's on-ramp
    without KYC, 99.99 with basic, 500 with advanced.
    """
    rank = ref.KYC_LEVELS.index(passed_type)
    covered = [r for r in rules if ref.KYC_LEVELS.index(r.type) <= rank]
    if any(r.max is None for r in covered):
        return None
    return max((r.max for r in covered if r.max is not None), default=Decimal(0))


def rules_of(country: Country, flow: str) -> tuple[KycRule, ...]:
    return country.kyc_onramp if flow == "onramp" else country.kyc_offramp


def reached_limit(country: Country, passed_type: str, volumes: Mapping[str, Decimal]) -> bool:
    """``reachedKycLimit``: in either flow, the user's order volume has reached what their level
    allows there (``allowed_volume``)."""
    for flow in FLOWS:
        rules = rules_of(country, flow)
        allowed = allowed_volume(rules, passed_type) if rules else None
        if allowed is not None and volumes.get(flow, Decimal(0)) >= allowed:
            return True
    return False


def clean_reason(reason: str | None) -> str:
    """A rejection reason as plain words: one line, no control characters, at most
    ``MAX_REASON`` characters (longer is refused); blank means :data:`REASON_DEFAULT`."""
    text = " ".join("".join(c if c.isprintable() else " " for c in (reason or "")).split())
    if len(text) > MAX_REASON:
        raise KycError(f"reason is too long (at most {MAX_REASON} characters)")
    return text or REASON_DEFAULT


class KycStore:
    """Thread-safe, in-memory users and submissions of one sandbox app."""

    def __init__(self, now: Callable[[], datetime] = _utcnow, *, scale: float = 1.0,
                 emit: Callable[[dict[str, Any]], None] | None = None,
                 schedule: Callable[..., Any] | None = None,
                 default_outcome: str = "approve") -> None:
        if default_outcome not in DECISIONS:
            raise ValueError(f"default_outcome must be one of {', '.join(DECISIONS)}")
        self._now = now
        self.scale = scale
        self.default_outcome: Decision = default_outcome
        self._emit = emit            # sends an opt-in `kyc` webhook payload
        self._schedule = schedule    # call_later(sandbox_seconds, fn, *args)
        self._lock = threading.RLock()
        self._by_email: dict[str, KycUser] = {}
        self._by_phone: dict[str, KycUser] = {}
        self._users: list[KycUser] = []
        self._submissions: dict[str, tuple[KycUser, Submission]] = {}
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

    def users(self) -> list[KycUser]:
        """Every user, first known first, with their submissions settled."""
        with self._lock:
            users = list(self._users)
        for user in users:
            self._settle(user)
        return users

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
                self._users.append(user)
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

    def _check_can_submit(self, user: KycUser, document: KycDocument) -> None:
        latest = user.latest
        if latest is not None and latest.status == "pending":
            raise KycError("a KYC submission is already under review")
        rank = ref.KYC_LEVELS.index
        if rank(user.passed_type) >= rank(document.kind):
            raise KycError(f"{user.passed_type} KYC is already approved for this user")

    def planned_outcome(self, fields: Mapping[str, Any]) -> tuple[Decision, str | None, str]:
        """What the review of a submission with these fields will decide: (outcome, reason,
        source), per the order in the module's docstring."""
        magic = MAGIC_LAST_NAMES.get(str(fields.get("last_name", "")).strip().lower())
        if magic is not None:
            return magic, REASON_DETAILS_MISMATCH if magic == "reject" else None, "last_name"
        if _all_zero_id(fields):
            return "reject", REASON_ID_NOT_FOUND, "id_number"
        if self.default_outcome != "approve":
            reason = REASON_DEFAULT if self.default_outcome == "reject" else None
            return self.default_outcome, reason, "config"
        return "approve", None, "default"

    def _new_submission(self, user: KycUser, document: KycDocument, outcome: Decision,
                        reason: str | None, source: str, review: bool) -> Submission:
        """Append a pending submission (call under the lock)."""
        now = self.now()
        decide_at = (now + timedelta(seconds=REVIEW_SECONDS * self.scale)
                     if review and outcome != "pending" else None)
        submission = Submission(
            id=f"kyc_{next(self._ids):06d}_{uuid.uuid4().hex[:8]}", document=document,
            submitted_at=now, decide_at=decide_at, outcome=outcome, reason=reason, source=source)
        user.submissions.append(submission)
        self._submissions[submission.id] = (user, submission)
        return submission

    def submit(self, user: KycUser, document: KycDocument, fields: dict[str, Any]) -> Submission:
        """Record a checked submission; refuse one while another is pending or already passed."""
        with self._lock:
            self._settle(user)
            self._check_can_submit(user, document)
            outcome, reason, source = self.planned_outcome(fields)
            submission = self._new_submission(user, document, outcome, reason, source,
                                              review=True)
        self._notify(user, submission)
        if self._schedule is not None and submission.decide_at is not None:
            self._schedule(REVIEW_SECONDS, self.settle_submission, user, submission)
        return submission

    def verify_now(self, user: KycUser, document: KycDocument) -> Submission:
        """The hosted page's sandbox shortcut: a submission of ``document`` approved at once."""
        with self._lock:
            self._settle(user)
            self._check_can_submit(user, document)
            submission = self._new_submission(user, document, "approve", None, "kyc page",
                                              review=False)
        self._notify(user, submission)
        self._apply(user, submission, "approve")
        return submission

    def get_submission(self, submission_id: str) -> tuple[KycUser, Submission]:
        """The user and submission with this id; ``KeyError`` when there is none."""
        with self._lock:
            user, submission = self._submissions[submission_id]
        self._settle(user)
        return user, submission

    def decide(self, submission_id: str, decision: str, reason: str | None = None) -> Submission:
        """The console decides a pending submission now: approve, reject (with ``reason``) or
        keep it pending until decided again. ``KeyError`` for an unknown id, ``KycError`` for a
        bad decision or a submission already decided."""
        if decision not in DECISIONS:
            raise KycError(f"decision must be one of: {', '.join(DECISIONS)}")
        text = clean_reason(reason) if decision == "reject" else None
        user, submission = self.get_submission(submission_id)
        with self._lock:
            if submission.status != "pending":
                raise KycError(f"submission {submission_id} is already {submission.status}")
            submission.source = "console"
            if decision == "pending":
                submission.outcome, submission.decide_at, submission.reason = "pending", None, None
                return submission
        self._apply(user, submission, decision, text)
        return submission

    def _apply(self, user: KycUser, submission: Submission, decision: Decision,
               reason: str | None = None) -> None:
        with self._lock:
            if submission.status != "pending":
                return
            submission.outcome = decision
            if decision == "reject":
                submission.reason = reason or submission.reason or REASON_DEFAULT
            submission.status = DECIDED[decision]
            submission.decided_at = self.now()
        self._notify(user, submission)

    def settle_submission(self, user: KycUser, submission: Submission) -> None:
        """Apply a submission's review now (the scheduler's timer may fire a hair early). A
        submission the console kept pending, or already decided, is left as it is."""
        with self._lock:
            due = submission.status == "pending" and submission.decide_at is not None
            if due:
                submission.status = DECIDED[submission.outcome]
                submission.decided_at = submission.decide_at
        if due:
            self._notify(user, submission)

    def _settle(self, user: KycUser) -> None:
        now = self.now()
        with self._lock:
            due = [s for s in user.submissions if s.status == "pending"
                   and s.decide_at is not None and s.decide_at <= now]
            for s in due:
                s.status = DECIDED[s.outcome]
                s.decided_at = s.decide_at
        for s in due:
            self._notify(user, s)

    def status(self, user: KycUser, volumes: Mapping[str, Decimal] | None = None) -> KycStatus:
        """Where the user stands; ``reached_limit`` compares their volume per flow (USD) with
        the rules."""
        self._settle(user)
        with self._lock:
            latest = user.latest
            status = latest.status if latest else "none"
            passed = user.passed_type
            description = describe(latest)
        return KycStatus(passed, status, description,
                         reached_limit(user.country, passed, volumes or {}))

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


def describe(submission: Submission | None) -> str:
    """``kycStatusDescription``: the status in words, and for a rejection, why."""
    if submission is None:
        return STATUS_DESCRIPTIONS["none"]
    if submission.status == "rejected":
        return submission.reason or REASON_DEFAULT
    return STATUS_DESCRIPTIONS[submission.status]


def _phone_key(phone: str) -> str:
    return phone.lstrip("+")


def _all_zero_id(fields: Mapping[str, Any]) -> bool:
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
        return _check_images(key, value, document)
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


def _image_names(types: tuple[int, ...] | list[int]) -> str:
    return ", ".join(f"{t} ({ref.IMAGE_TYPE_NAMES[t]})" for t in types)


def _check_images(key: str, value: Any, document: KycDocument) -> list[dict[str, Any]]:
    """``images`` of an advanced document: each of ``document.image_types`` exactly once (the
    selfie 0, the front 1, and the back 5 unless the document is a passport)."""
    wanted = document.image_types
    if not isinstance(value, list) or not value:
        raise KycError(f"{key} must be a list of {{image_type_id, image}}")
    seen: list[int] = []
    for i, item in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(item, dict) or set(item) != {"image_type_id", "image"}:
            raise KycError(f"{where} must be an object with image_type_id and image")
        type_id = item["image_type_id"]
        if type(type_id) is not int or type_id not in wanted:
            if type(type_id) is int and type_id == ref.IMAGE_BACK and not document.has_back:
                raise KycError(f"{where}.image_type_id 5 (document back): a {document.title} has "
                               f"no back; send {_image_names(wanted)}")
            raise KycError(f"{where}.image_type_id must be one of {_image_names(wanted)}")
        if type_id in seen:
            raise KycError(f"{where}.image_type_id {_image_names([type_id])} is given twice")
        _check_image(f"{where}.image", item["image"])
        seen.append(type_id)
    missing = [t for t in wanted if t not in seen]
    if missing:
        raise KycError(f"{key} is missing the {_image_names(missing)}: a {document.title} needs "
                       f"{_image_names(wanted)}")
    return value


_BASE64_LIMIT = 4 * -(-MAX_IMAGE_BYTES // 3)


def _check_image(where: str, image: Any) -> None:
    """Base64 (standard alphabet, padded, no line breaks) of a JPEG or PNG, or an https URL.

    Messages name the item and never repeat its content: images are personal data.
    """
    expected = "base64 data of a JPEG or PNG image, or an https URL"
    if not isinstance(image, str) or not image:
        raise KycError(f"{where} must be {expected}")
    lowered = image[:8].lower()
    if lowered.startswith("https://"):
        _check_image_url(where, image)
        return
    if lowered.startswith("http://"):
        raise KycError(f"{where} must be an https URL (http is refused)")
    if lowered.startswith("data:"):
        raise KycError(f"{where} must be plain base64, without a data: URL prefix")
    if len(image) > _BASE64_LIMIT:
        raise KycError(f"{where} is too large (at most {MAX_IMAGE_BYTES // (1024 * 1024)} MB)")
    try:
        raw = binascii.a2b_base64(image, strict_mode=True)
    except (binascii.Error, ValueError):
        raise KycError(f"{where} must be {expected}") from None
    if not raw.startswith((_JPEG, _PNG)):
        raise KycError(f"{where} is not a JPEG or PNG image")


def _check_image_url(where: str, url: str) -> None:
    bad = (len(url) > MAX_IMAGE_URL
           or any(c.isspace() or not c.isprintable() or c == "\\" for c in url))
    try:
        parts = urlsplit(url)
        bad = bad or not parts.hostname or parts.username is not None or parts.password is not None
        parts.port  # noqa: B018 (raises ValueError on a malformed port)
    except ValueError:
        bad = True
    if bad:
        raise KycError(f"{where} must be an https URL with a host (no user name or password, at "
                       f"most {MAX_IMAGE_URL} characters)")


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
            default_outcome=app.config.get("SANDBOX_KYC_OUTCOME") or "approve",
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
