"""Checkout sessions: server-side state found by an unguessable id, never by a cookie.

Inside a merchant's cross-site iframe, browsers drop ordinary cookies, so the session id travels in
the URL path (``/checkout/s/<id>/...``) and in htmx request headers. Pages send
``Referrer-Policy: same-origin`` so the id never leaves our origin in a Referer.

A session is bound to at most one launch token (``jti`` is unique: presenting a token again returns
to the same session) and to at most one order: ``attach_order`` fills the empty order slot by a
compare-and-set, never replacing an order. Every write is a compare-and-set on the session's
``version`` (``save``), which is what lets the order's creation claim it by writing its pending
attempt (:mod:`checkout.journey.creation`): of two requests that read the same version, one saves.
"""
from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from .errors import SessionConflict
from .inputs import is_session_id
from .store.tables import sessions_table

SESSION_LIFETIME = timedelta(days=7)  # long enough to resume a slow bank transfer on another device

log = logging.getLogger("checkout.sessions")


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime | None) -> datetime | None:
    # SQLite returns naive datetimes even for timezone=True columns.
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


# What ``data`` holds (format 2). Every key is read and written through the accessors of
# :class:`CheckoutSession` below, never by name elsewhere:
#
#   answers    the user's choices, keyed by launch-claim name (network, amount, address, ...)
#   fields     the values of the offer's required fields (spec 2.2), as they are sent
#   quote      the quote record the pages show and the order is created from (checkout.journey.quotes)
#   progress   {"done": [step, ...], "answered": [step, ...], "reviewed": bool}: the one record of
#              where the user is (checkout.journey.steps)
#   wallet     {"network": the network the address was checked for, "notice": text for review}
#   reference  the checkout's own orderParams, when the merchant gave none
#   pending    the create attempt whose outcome is not known yet (checkout.journey.creation)
#   order      what the flow keeps of the order at creation (its resume link, transfer type...)
#   events     parent events recorded as sent (checkout.views.tracking)
#   tx_hash    the crypto transaction's hash, once known
#   said_paid  True once the on-ramp's user said "I have paid" (and the upstream took it)
#   reached    no longer written (the steps a session was shown are step events of their own:
#              checkout.desk.steps); a session saved before may still hold it
#   notices    {page: notice}: a message kept across a redirect, shown once
#   payee, deposit   the off-ramp's payee check and the hash the user sent
DATA_FORMAT = 2


@dataclass
class CheckoutSession:
    id: str
    flow: str
    csrf_token: str
    claims: dict[str, Any] = field(default_factory=dict)
    locked: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=lambda: {"v": DATA_FORMAT})
    order_id: str | None = None
    jti: str | None = None
    version: int = 1
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    creating_since: datetime | None = None
    creating_owner: str | None = None

    @property
    def parent_origin(self) -> str | None:
        return self.claims.get("parentOrigin")

    @property
    def locale(self) -> str | None:
        """The language the user chose on a page, else the launch token's ``locale``."""
        return self.language or self.claims.get("locale")

    @property
    def language(self) -> str | None:
        """The language the user chose on a page of this session (checkout.views.language)."""
        chosen = self.data.get("language")
        return chosen if isinstance(chosen, str) else None

    @language.setter
    def language(self, value: str | None) -> None:
        self.data["language"] = value

    @property
    def expired(self) -> bool:
        expires = _aware(self.expires_at)
        return expires is not None and expires <= _now()

    # -- the user's choices -----------------------------------------------------------------------

    def is_locked(self, name: str) -> bool:
        return name in self.locked

    def value(self, name: str, default: Any = None) -> Any:
        """What the user chose for ``name``, else the launch token's prefill, else ``default``."""
        if name in self.locked:
            return self.claims.get(name, default)
        answers = self.answers
        if name in answers:
            return answers[name]
        return self.claims.get(name, default)

    @property
    def answers(self) -> dict[str, Any]:
        """The user's own choices (a locked claim is never among them)."""
        answers: dict[str, Any] = self.data.setdefault("answers", {})
        return answers

    def answer(self, values: dict[str, Any]) -> None:
        """Record the user's choices; a locked claim keeps the token's value."""
        for name, value in values.items():
            if not self.is_locked(name):
                self.answers[name] = value

    @property
    def fields(self) -> dict[str, Any]:
        """The offer's required fields as the user gave them (what a create sends)."""
        return dict(self.data.get("fields") or {})

    @fields.setter
    def fields(self, values: dict[str, Any]) -> None:
        self.data["fields"] = dict(values)

    # -- the quote --------------------------------------------------------------------------------

    @property
    def quote(self) -> dict[str, Any] | None:
        quote = self.data.get("quote")
        return dict(quote) if quote else None

    @quote.setter
    def quote(self, record: dict[str, Any] | None) -> None:
        if record is None:
            self.data.pop("quote", None)
        else:
            self.data["quote"] = record

    # -- progress ---------------------------------------------------------------------------------

    @property
    def _progress(self) -> dict[str, Any]:
        progress: dict[str, Any] = self.data.setdefault(
            "progress", {"done": [], "answered": [], "reviewed": False})
        return progress

    @property
    def done(self) -> list[str]:
        """The steps before the order that hold (answered, or passed over as already given)."""
        return list(self._progress.get("done") or [])

    @done.setter
    def done(self, steps: list[str]) -> None:
        self._progress["done"] = list(steps)

    @property
    def answered(self) -> list[str]:
        """The steps the user submitted themselves at least once (never passed over again)."""
        return list(self._progress.get("answered") or [])

    def mark_answered(self, step: str) -> None:
        if step not in self.answered:
            self._progress["answered"] = self.answered + [step]

    @property
    def reviewed(self) -> bool:
        """Whether the review page was shown once (a later price change is then pointed out)."""
        return bool(self._progress.get("reviewed"))

    @reviewed.setter
    def reviewed(self, value: bool) -> None:
        self._progress["reviewed"] = bool(value)

    # -- the wallet check -------------------------------------------------------------------------

    @property
    def wallet_network(self) -> str | None:
        """The network the wallet address was last checked for, if it was."""
        return (self.data.get("wallet") or {}).get("network")

    @property
    def wallet_notice(self) -> str | None:
        """What the review must point out about the address (a checksum added, say)."""
        return (self.data.get("wallet") or {}).get("notice")

    def wallet_checked(self, network: str, notice: str | None) -> None:
        self.data["wallet"] = {"network": network, "notice": notice}

    # -- creating the order -----------------------------------------------------------------------

    @property
    def reference(self) -> str | None:
        """The checkout's own ``orderParams`` (used when the merchant's token gave none)."""
        return self.data.get("reference")

    @reference.setter
    def reference(self, value: str | None) -> None:
        self.data["reference"] = value

    @property
    def pending(self) -> dict[str, Any] | None:
        """The create attempt whose outcome is not known yet, if any."""
        pending = self.data.get("pending")
        return dict(pending) if pending else None

    @pending.setter
    def pending(self, attempt: dict[str, Any] | None) -> None:
        self.data["pending"] = attempt

    @property
    def order(self) -> dict[str, Any]:
        """What the flow kept of its order when it was created (never the order's status)."""
        return dict(self.data.get("order") or {})

    @order.setter
    def order(self, facts: dict[str, Any]) -> None:
        self.data["order"] = dict(facts)

    # -- after the order --------------------------------------------------------------------------

    @property
    def events(self) -> dict[str, Any]:
        """The parent events recorded as sent (checkout.views.tracking)."""
        return dict(self.data.get("events") or {})

    @events.setter
    def events(self, events: dict[str, Any]) -> None:
        self.data["events"] = dict(events)

    @property
    def tx_hash(self) -> str | None:
        return self.data.get("tx_hash")

    @tx_hash.setter
    def tx_hash(self, value: str | None) -> None:
        self.data["tx_hash"] = value

    @property
    def said_paid(self) -> bool:
        """The user said they have paid (the on-ramp's "I have paid", taken by the upstream):
        until the payment arrives, the status page says so rather than "Waiting for your
        payment"."""
        return bool(self.data.get("said_paid"))

    @said_paid.setter
    def said_paid(self, value: bool) -> None:
        self.data["said_paid"] = bool(value)

    # -- notices across a redirect ----------------------------------------------------------------

    def keep_notice(self, page: str, notice: dict[str, Any]) -> None:
        self.data.setdefault("notices", {})[page] = dict(notice)

    def notice(self, page: str) -> dict[str, Any] | None:
        notice = (self.data.get("notices") or {}).get(page)
        return dict(notice) if notice else None

    def drop_notice(self, page: str) -> bool:
        """Forget the page's notice; False when there was none."""
        return (self.data.get("notices") or {}).pop(page, None) is not None

    # -- off-ramp: the payee check and the deposit -------------------------------------------------

    @property
    def payee(self) -> dict[str, Any] | None:
        payee = self.data.get("payee")
        return dict(payee) if payee else None

    @payee.setter
    def payee(self, check: dict[str, Any] | None) -> None:
        self.data["payee"] = check

    @property
    def deposit(self) -> dict[str, Any]:
        return dict(self.data.get("deposit") or {})

    @deposit.setter
    def deposit(self, facts: dict[str, Any]) -> None:
        self.data["deposit"] = dict(facts)

    # -- KYC --------------------------------------------------------------------------------------

    @property
    def kyc(self) -> dict[str, Any]:
        """Where the user's verification stood when it was last read, and what for
        (:mod:`checkout.kyc.standing`). Never any field value or photo: those go to the
        upstream and are not kept."""
        return dict(self.data.get("kyc") or {})

    @kyc.setter
    def kyc(self, record: dict[str, Any]) -> None:
        self.data["kyc"] = dict(record)

    def forget_kyc_contact(self) -> None:
        """Once the order exists its KYC is decided: the phone or email typed for it, and the
        partner's link (which names the phone), are no longer needed."""
        record = self.kyc
        if record:
            for name in ("contact", "kyc_url"):
                record.pop(name, None)
            self.kyc = record


def new_session_id() -> str:
    return secrets.token_urlsafe(32)


def find_by_order(conn: Any, order_id: str) -> CheckoutSession | None:
    """The session an order was created from, read on ``conn`` (inside its transaction)."""
    row = conn.execute(select(sessions_table).where(sessions_table.c.order_id == order_id)
                       ).first()
    return _row_to_session(row) if row is not None else None


def _row_to_session(row: Any) -> CheckoutSession:
    m = row._mapping
    return CheckoutSession(
        id=m["id"], flow=m["flow"], csrf_token=m["csrf_token"], claims=dict(m["claims"] or {}),
        locked=list(m["locked"] or []), data=dict(m["data"] or {}),
        order_id=m["order_id"], jti=m["jti"], version=m["version"],
        created_at=_aware(m["created_at"]), updated_at=_aware(m["updated_at"]),
        expires_at=_aware(m["expires_at"]), creating_since=_aware(m["creating_since"]),
        creating_owner=m.get("creating_owner"),
    )


class SessionStore:
    def __init__(self, engine: Engine,
                 on_open: Callable[[CheckoutSession, str], None] | None = None,
                 on_order: Callable[[CheckoutSession], None] | None = None,
                 on_saved: Callable[[CheckoutSession], None] | None = None) -> None:
        self.engine = engine
        # Told (session, "launch" or "unsigned") of each session opened, and (session) of each
        # order attached: the app's journal (checkout.desk.journal: the metrics, the desk).
        self.on_open = on_open
        self.on_order = on_order
        # Told of each session as saved (its new version): the pages of the request that saved
        # it show it so (checkout.views.context), not as the request first read it.
        self.on_saved = on_saved

    def create(self, flow: str, *, claims: dict[str, Any] | None = None,
               locked: list[str] | None = None, jti: str | None = None) -> CheckoutSession:
        """Create a session, or return the one already opened by the same token ``jti``."""
        if jti is not None:
            existing = self.get_by_jti(jti)
            if existing is not None:
                return existing
        now = _now()
        session = CheckoutSession(
            id=new_session_id(), flow=flow, csrf_token=secrets.token_urlsafe(32),
            claims=dict(claims or {}), locked=list(locked or []),
            jti=jti, version=1, created_at=now, updated_at=now, expires_at=now + SESSION_LIFETIME,
        )
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(sessions_table).values(
                    id=session.id, flow=flow, jti=jti, csrf_token=session.csrf_token,
                    claims=session.claims, locked=session.locked, data=session.data, step="start",
                    version=1, created_at=now, updated_at=now, expires_at=session.expires_at,
                ))
        except IntegrityError:
            # Two tabs presented the same token at the same moment: the other one won.
            existing = self.get_by_jti(jti) if jti else None
            if existing is None:
                raise
            return existing
        if self.on_open is not None:
            self.on_open(session, "unsigned" if jti is None else "launch")
        return session

    def get(self, session_id: str) -> CheckoutSession | None:
        if not is_session_id(session_id):
            return None         # not looked up: a NUL in it would be an error on PostgreSQL
        with self.engine.connect() as conn:
            row = conn.execute(select(sessions_table).where(sessions_table.c.id == session_id)).first()
        return _row_to_session(row) if row else None

    def get_by_jti(self, jti: str) -> CheckoutSession | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(sessions_table).where(sessions_table.c.jti == jti)).first()
        return _row_to_session(row) if row else None

    def get_by_order(self, order_id: str) -> CheckoutSession | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(sessions_table).where(sessions_table.c.order_id == order_id)).first()
        return _row_to_session(row) if row else None

    def save(self, session: CheckoutSession) -> None:
        """Write ``data`` back, refusing to overwrite a newer version."""
        now = _now()
        with self.engine.begin() as conn:
            result = conn.execute(
                update(sessions_table)
                .where(sessions_table.c.id == session.id,
                       sessions_table.c.version == session.version)
                .values(data=session.data, version=session.version + 1,
                        updated_at=now)
            )
        if result.rowcount != 1:
            raise SessionConflict(session.id)
        session.version += 1
        session.updated_at = now
        if self.on_saved is not None:
            self.on_saved(session)

    def update(self, session_id: str,
               change: Callable[[CheckoutSession], Any]) -> CheckoutSession:
        """Apply ``change`` to a fresh copy of the session and save it, retrying on a concurrent
        save. ``change`` may return False to skip saving (nothing to do after all); it must be safe
        to call again, on a newer copy. Raises ``SessionConflict`` when the session is gone.
        """
        for _attempt in range(5):
            session = self.get(session_id)
            if session is None:
                raise SessionConflict(session_id)
            if change(session) is False:
                return session
            try:
                self.save(session)
                return session
            except SessionConflict:
                continue
        raise SessionConflict(session_id)

    def attach_order(self, session_id: str, order_id: str,
                     change: Callable[[CheckoutSession], Any] | None = None) -> str | None:
        """Record the order; the id of the order attached afterwards (another one when the session
        already had one: never replaced) or None when the session is gone.

        A compare-and-set on the empty order slot (and the version ``change`` was applied to): an
        order that exists upstream for this session is attached by whichever request finds it,
        else it would be orphaned.
        """
        now = _now()
        for _attempt in range(5):
            with self.engine.begin() as conn:
                row = conn.execute(select(sessions_table)
                                   .where(sessions_table.c.id == session_id)).first()
                if row is None:
                    return None
                session = _row_to_session(row)
                if session.order_id:
                    return str(session.order_id)
                if change is not None:
                    change(session)
                result = conn.execute(
                    update(sessions_table)
                    .where(sessions_table.c.id == session_id,
                           sessions_table.c.order_id.is_(None),
                           sessions_table.c.version == session.version)
                    .values(order_id=order_id, data=session.data,
                            version=sessions_table.c.version + 1, updated_at=now))
            if result.rowcount == 1:
                session.order_id, session.version, session.updated_at = \
                    order_id, session.version + 1, now
                if self.on_order is not None:
                    self.on_order(session)
                if self.on_saved is not None:
                    self.on_saved(session)
                return order_id
        raise SessionConflict(session_id)
