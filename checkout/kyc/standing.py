"""What an order needs, and where the user's verification stands: read once per decision.

The level an order needs comes from its country's ``kycRules`` for the flow (``/api/util/countries``,
cached like all reference data) and the quote's amount in US dollars. Where the user stands comes
from one upstream call, made when the KYC step is reached:

- ``/api/kyc/state`` by phone number (and email when known): the default. It says only whether the
  user *passed* KYC, not at which level: a pass counts as basic, so an order that needs advanced
  asks for an advanced document (enable the user API for exact levels).
- ``/api/user/kyc/status`` by email and country, when ``CHECKOUT_KYC_USER_API`` is True (the
  merchant's user endpoints are enabled upstream, spec 4.6): it gives the passed level itself.

By phone, a pass whose level the state does not give is read with what the upstream said of the
person elsewhere (:mod:`.memory`: order webhooks' ``userKyc``, ``kyc`` events, a document refused as
already approved). When nothing tells the level, the standing says so (``level_known`` False): the
page then says the user may be verified already, and how to check, rather than only ask again.

The answer is kept in the session (``CheckoutSession.kyc``) with the *decision* it was read for
(flow, country, level needed, source, phone, email): a page view reuses it; an amount that asks a
higher level, or another phone or email, is a new decision and reads again. While a submission is
under review the state is read again at most every ``CHECKOUT_KYC_POLL_SECONDS``, or at once when a
``kyc`` webhook arrived since the last read.

Nothing here keeps a field value or a photo: those are sent (:mod:`.submission`) and forgotten.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from ..errors import UpstreamError
from ..journey import quotes
from ..reference import UtilCatalog
from ..sessions import CheckoutSession, SessionStore
from ..upstream.client import UpstreamClient
from ..upstream.types import KycDocument, KycRule, UtilCountry
from . import memory
from .levels import covers, next_level, rank, required_level

log = logging.getLogger("checkout.kyc")

STATE, USER_API = "state", "user"

# The upstream's kycStatus words (spec 2.1 shows approved and pending; notes 4 add the webhook's
# initiated and rejected) in the few states the page knows. An unknown word is shown as the
# upstream's description, and the user may submit.
_STATUSES = {
    "approved": "approved", "verified": "approved", "passed": "approved",
    "pending": "pending", "initiated": "pending", "submitted": "pending",
    "in_review": "pending", "processing": "pending", "under_review": "pending",
    "rejected": "rejected", "failed": "rejected", "declined": "rejected",
}


def status_word(status: str | None) -> str:
    """``none``, ``pending``, ``approved`` or ``rejected`` for the upstream's ``kycStatus``."""
    return _STATUSES.get((status or "").strip().lower(), "none")


@dataclass(frozen=True)
class Contact:
    """How the upstream knows the user: their phone (E.164 digits) and email."""

    phone: str | None
    email: str | None


_phone = memory.e164_digits


def contact(session: CheckoutSession) -> Contact:
    """The phone and email the user gave (at this step, in the offer's fields, in the launch
    token), as the upstream takes them."""
    given = session.kyc.get("contact") or {}
    country = session.value("countryIsoCode")
    phone = given.get("phone") or _phone(session.fields.get("phoneNumber"), country) \
        or _phone(session.value("phoneNumber"), country)
    email = given.get("email") or session.value("email") or session.fields.get("email")
    return Contact(phone or None, str(email).lower() if email else None)


@dataclass(frozen=True)
class Standing:
    passed: str                        # none, basic or advanced
    status: str                        # none, pending, approved or rejected (status_word)
    description: str | None            # the upstream's words for the status
    reached_limit: bool
    kyc_url: str | None
    # False when the upstream said the user passed, but nothing tells at which level: ``passed``
    # is then the lowest (basic), and the user may well have passed more.
    level_known: bool = True

    def record(self) -> dict[str, Any]:
        return {"passed": self.passed, "status": self.status, "description": self.description,
                "reached_limit": self.reached_limit, "kyc_url": self.kyc_url,
                "level_known": self.level_known}


def _count_proven(kept: dict[str, Any], who: str) -> None:
    """A level proven in this session counts as passed (and as known) for the same person."""
    proven = kept.get("proven") or {}
    if proven.get("who") == who and rank(proven.get("level")) >= rank(kept.get("passed")):
        kept["passed"] = proven["level"]
        kept["level_known"] = True


def _prove_level(kept: dict[str, Any], submitted: dict[str, Any], status: str,
                 who: str) -> None:
    """``/api/kyc/state`` says "passed", not at which level. The level of a document this
    session sent counts as passed once the state, read after the sending, said it was under
    review and then says approved: an "approved" read before it was seen under review may be
    an earlier, lower approval (a lagging read, a second tab) and proves nothing."""
    if status == "pending":
        kept["submitted"] = {**submitted, "seen_pending": True}
    elif status == "approved" and submitted.get("seen_pending") and not submitted.get("decided"):
        kept["proven"] = {"who": who, "level": submitted.get("level")}


def awaiting(record: dict[str, Any]) -> bool:
    """Whether a document is under review: the state says so, or (by phone, where "approved"
    may still be an earlier approval) the document this session sent has no verdict yet."""
    if record.get("status") == "pending":
        return True
    submitted = record.get("submitted") or {}
    return (record.get("source") == STATE and bool(submitted) and not submitted.get("decided")
            and record.get("status") == "approved")


class KycStanding:
    """Where users stand, for one app: built with what it asks (composition.py): the database
    (levels remembered of a person, ``kyc`` webhooks stored), the upstream client, the reference
    catalog (the countries' rules and documents), the session store, and the app's config (read
    at each call)."""

    def __init__(self, engine: Engine, upstream: UpstreamClient, util_catalog: UtilCatalog,
                 sessions: SessionStore, config: Mapping[str, Any]) -> None:
        self.engine = engine
        self.upstream = upstream
        self.util_catalog = util_catalog
        self.sessions = sessions
        self.config = config

    def user_api(self) -> bool:
        return bool(self.config.get("CHECKOUT_KYC_USER_API"))

    def source(self) -> str:
        return USER_API if self.user_api() else STATE

    def util_country(self, session: CheckoutSession) -> UtilCountry | None:
        """The country's documents and rules (raises ``UpstreamError`` when unreadable)."""
        return self.util_catalog.country(session.value("countryIsoCode"))

    def rules(self, session: CheckoutSession) -> list[KycRule] | None:
        """The country's rules for the session's flow; None when the upstream lists no such
        country."""
        country = self.util_country(session)
        if country is None:
            return None
        return list(getattr(country.kyc_rules, session.flow, []) or [])

    def needed_level(self, session: CheckoutSession) -> str | None:
        """The level the session's quote needs; None when it cannot be known right now (the rules
        cannot be read, the country has none, the quote has no US dollar amount): the step is then
        shown, and says so, rather than let an order through unchecked."""
        record = session.quote
        if record is None:
            return "none"           # no amount yet: nothing is asked before one is chosen
        try:
            country_rules = self.rules(session)
        except UpstreamError as exc:
            log.warning("KYC rules unavailable (%s, status %s)", type(exc).__name__, exc.status)
            return None
        usd = quotes.usd_amount(record, session.flow)
        if country_rules is None or usd is None:
            log.error("KYC level unknown for %s in %s: %s", session.flow,
                      session.value("countryIsoCode"),
                      "no such country in /api/util/countries" if country_rules is None
                      else "the quote has no US dollar amount")
            return None
        return required_level(country_rules, usd)

    def missing_contact(self, session: CheckoutSession) -> str | None:
        """``phone`` or ``email`` when the source cannot be asked without it."""
        who = contact(session)
        if self.source() == STATE and not who.phone:
            return "phone"
        if self.source() == USER_API and not who.email:
            return "email"
        return None

    def _secret(self) -> str:
        return str(self.config.get("CHECKOUT_LAUNCH_SECRET") or "")

    def _digest(self, *parts: str) -> str:
        # Keyed: a plain hash of a phone number is reversed by trying every number.
        return hmac.new(self._secret().encode(), "\x1f".join(parts).encode(),
                        hashlib.sha256).hexdigest()[:32]

    def person_keys(self, session: CheckoutSession) -> list[str]:
        """The keys under which what the upstream told of this user is remembered
        (:mod:`.memory`)."""
        who = contact(session)
        return memory.person_keys(self._secret(), email=who.email, phone=who.phone)

    def remembered_level(self, session: CheckoutSession) -> str:
        """The highest level the upstream told this user passed, in an earlier order's webhooks or
        an earlier session; ``none`` when it told nothing.

        Looked up by phone only: the identity ``/api/kyc/state`` was read by. An email is whatever
        the user types: by someone else's, a user could borrow their level."""
        who = contact(session)
        days = float(self.config.get("CHECKOUT_KYC_REMEMBER_DAYS", 365))
        keys = memory.person_keys(self._secret(), phone=who.phone)
        return memory.recall(self.engine, keys, days=days)

    def user_key(self, session: CheckoutSession) -> str:
        """Who the standing is about, as the upstream is asked (a digest: no contact in clear)."""
        who = contact(session)
        return self._digest(self.source(), str(session.value("countryIsoCode") or ""),
                            who.phone or "", who.email or "")

    def decision_key(self, session: CheckoutSession, level: str) -> str:
        return self._digest(session.flow, level, self.user_key(session))

    def read(self, session: CheckoutSession) -> Standing:
        """One upstream call: the user's standing now. Raises ``UpstreamError``."""
        upstream = self.upstream
        who = contact(session)
        if self.source() == USER_API:
            assert who.email, "missing_contact() first"
            answer = upstream.user_kyc_status(who.email, str(session.value("countryIsoCode")))
            passed = answer.passed_kyc_type if rank(answer.passed_kyc_type) else "none"
            return Standing(passed or "none", status_word(answer.kyc_status),
                            answer.kyc_status_description, answer.reached_kyc_limit, None)
        assert who.phone, "missing_contact() first"
        state = upstream.kyc_state(phone_number=who.phone, email=who.email)
        # The state says whether KYC was passed, not which level: a pass counts as basic, or as the
        # level the upstream told elsewhere of this person.
        passed, known = "none", True
        if state.passed_kyc:
            told = self.remembered_level(session)
            passed, known = max("basic", told, key=rank), told != "none"
        return Standing(passed, status_word(state.kyc_status), state.kyc_status_description,
                        state.reached_kyc_limit, state.kyc_url, level_known=known)

    def target_level(self, session: CheckoutSession,
                     record: dict[str, Any] | None = None) -> str | None:
        """The level the user is asked to verify to now: the one the order needs, or above what they
        passed when their passed level's limit is reached (None when there is none above)."""
        needed = self.needed_level(session)
        record = session.kyc if record is None else record
        passed = str(record.get("passed") or "none")
        if needed is None:
            return None
        if not covers(passed, needed):
            return needed
        if record.get("reached_limit"):
            return next_level(passed)
        return None

    def current(self, session: CheckoutSession) -> dict[str, Any] | None:
        """The kept standing, when it was read for this session's decision as it is now."""
        level = self.needed_level(session)
        record = session.kyc
        if level is None or record.get("key") != self.decision_key(session, level):
            return None
        return record

    def covered(self, session: CheckoutSession) -> bool:
        """Whether the user's verification, as last read for this decision, covers the order: the
        KYC step is needed exactly while it does not.

        An amount that needs no KYC is covered unless the user's orders so far reached what no KYC
        allows (``reachedKycLimit``): that is checked, once, when the checkout already knows who
        the user is (never asked only for this: the rules ask nothing of the amount).
        """
        level = self.needed_level(session)
        if level is None:
            return False
        record = self.current(session)
        if level == "none" and record is None:
            return self.missing_contact(session) is not None
        if record is None:
            return False
        return covers(record.get("passed"), level) and not record.get("reached_limit")

    def needs_kyc(self, session: CheckoutSession) -> bool:
        """The KYC step's ``needed``: the order's amount asks more than the user has passed."""
        return not self.covered(session)

    def refresh(self, session: CheckoutSession, *, force: bool = False) -> CheckoutSession:
        """Read the standing when this decision has none yet (or ``force``), or when a submission
        under review is due a look; save it in the session. Raises ``UpstreamError``."""
        level = self.needed_level(session)
        if level is None or self.missing_contact(session):
            return session
        record = self.current(session)
        if record is not None and not force and not self._due(record):
            return session
        started = time.time()
        standing = self.read(session)
        key, who = self.decision_key(session, level), self.user_key(session)

        def change(fresh: CheckoutSession) -> None:
            kept = fresh.kyc
            submitted = kept.get("submitted") or {}
            if float(submitted.get("at_ts") or 0) > started:
                return          # asked before a submission was sent: it cannot speak of it
            kept.update(standing.record(), key=key, level=level, source=self.source(),
                        checked_at=time.time())
            if self.source() == STATE and submitted.get("who") == who:
                _prove_level(kept, submitted, standing.status, who)
            _count_proven(kept, who)
            if standing.status in ("approved", "rejected") and submitted.get("seen_pending"):
                kept["submitted"] = {**submitted, "decided": standing.status}
            fresh.kyc = kept

        proven_before = (session.kyc.get("proven") or {}).get("level")
        session = self.sessions.update(session.id, change)
        proven = session.kyc.get("proven") or {}
        if proven.get("who") == who and proven.get("level") != proven_before:
            # Proven here, for this person's next orders too.
            memory.remember_now(self.engine, self.person_keys(session), proven.get("level"))
        return session

    def prove(self, session: CheckoutSession, level: str) -> CheckoutSession:
        """The partner refused a document because ``level`` is already approved for this user:
        that level is passed (the step is done, not failed), here and for their next orders."""
        who = self.user_key(session)
        memory.remember_now(self.engine, self.person_keys(session), level)

        def change(fresh: CheckoutSession) -> None:
            kept = fresh.kyc
            earlier = kept.get("proven") or {}
            if earlier.get("who") != who or rank(level) > rank(earlier.get("level")):
                kept["proven"] = {"who": who, "level": level}
            _count_proven(kept, who)
            fresh.kyc = kept

        return self.sessions.update(session.id, change)

    def poll_seconds(self) -> float:
        return float(self.config.get("CHECKOUT_KYC_POLL_SECONDS", 15))

    def _due(self, record: dict[str, Any]) -> bool:
        """A submission under review is looked at again every few seconds, or when a ``kyc`` webhook
        arrived since the last look (the merchant opted in to them): never on every page view."""
        if not awaiting(record):
            return False
        checked_at = float(record.get("checked_at") or 0)
        if time.time() - checked_at >= self.poll_seconds():
            return True
        return self.kyc_event_since(checked_at)

    def kyc_event_since(self, checked_at: float) -> bool:
        """Whether the receiver stored a ``kyc`` webhook after ``checked_at`` (any user's: the event
        names the user by email only, and one extra read costs less than parsing every body)."""
        from ..webhooks.store import events_table

        since = datetime.fromtimestamp(checked_at, tz=UTC)
        query = select(events_table.c.id).where(events_table.c.event_type == "kyc",
                                                events_table.c.received_at > since).limit(1)
        with self.engine.connect() as conn:
            return conn.execute(query).first() is not None

    def documents(self, session: CheckoutSession, level: str) -> list[KycDocument]:
        """The documents the user may submit to reach ``level``, in the upstream's order.

        From the country's ``basicDocuments``/``advancedDocuments`` (with the user API, its own
        lists, whose ``_id`` the submission names). Raises ``UpstreamError``.
        """
        if self.source() == USER_API:
            who = contact(session)
            assert who.email, "missing_contact() first"
            country = str(session.value("countryIsoCode"))
            answer = self.util_catalog.cache.get(
                ("user-kyc-documents", country),
                lambda: self.upstream.user_kyc_status(who.email or "", country))
            lists = {"basic": answer.basic_documents, "advanced": answer.advanced_documents}
        else:
            util = self.util_country(session)
            lists = {"basic": util.basic_documents if util else [],
                     "advanced": util.advanced_documents if util else []}
        return [doc for doc in lists.get(level, []) if doc.value or doc.id]

    def document(self, session: CheckoutSession, level: str,
                 value: str | None) -> KycDocument | None:
        return next((d for d in self.documents(session, level) if value and d.value == value), None)
