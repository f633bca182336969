"""Checkout sessions: server-side state found by an unguessable id, never by a cookie.

Inside a merchant's cross-site iframe, browsers drop ordinary cookies, so the session id travels in
the URL path (``/checkout/s/<id>/...``) and in htmx request headers. Pages send
``Referrer-Policy: same-origin`` so the id never leaves our origin in a Referer.

A session is bound to at most one launch token (``jti`` is unique: presenting a token again returns
to the same session) and to at most one order: ``claim_order_creation`` is an atomic compare-and-set
in the database, so a double click, a retried request or a second device can never create a second
order. The claim is owned: it records a random owner token, and only that owner can give it back,
so a slow request can never free (or be overtaken through) a claim that another request now holds.
"""
from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from sqlalchemy import JSON, Column, DateTime, Integer, String, Table, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from .store import metadata

sessions_table = Table(
    "checkout_sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("flow", String(16), nullable=False),
    Column("jti", String(255), unique=True, nullable=True),
    Column("csrf_token", String(64), nullable=False),
    Column("claims", JSON, nullable=False),        # prefilled choices from the launch token
    Column("locked", JSON, nullable=False),        # claim names the user cannot change
    Column("data", JSON, nullable=False),          # what the user chose so far, per step
    Column("step", String(32), nullable=False),
    Column("order_id", String(64), nullable=True, index=True),
    # Set while one request is creating the order; see claim_order_creation.
    Column("creating_since", DateTime(timezone=True), nullable=True),
    # The random token of the request holding that claim: release is a compare-and-set on it.
    Column("creating_owner", String(64), nullable=True),
    Column("version", Integer, nullable=False, default=1),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

SESSION_LIFETIME = timedelta(days=7)  # long enough to resume a slow bank transfer on another device
# A creator that died frees the claim after this. It must outlast the slowest create call; callers
# pass a longer lease (at least the create grace period, see checkout.onramp), and a lapsed claim
# alone never allows a second create: the session's pending attempt must first be settled.
CREATION_LEASE = timedelta(minutes=15)

log = logging.getLogger("checkout.sessions")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _aware(value: datetime | None) -> datetime | None:
    # SQLite returns naive datetimes even for timezone=True columns.
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value


@dataclass
class CheckoutSession:
    id: str
    flow: str
    csrf_token: str
    claims: dict[str, Any] = field(default_factory=dict)
    locked: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    step: str = "start"
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
        return self.claims.get("locale")

    def is_locked(self, name: str) -> bool:
        return name in self.locked

    def value(self, name: str, default: Any = None) -> Any:
        """What the user chose for ``name``, else the launch token's prefill, else ``default``."""
        if name in self.locked:
            return self.claims.get(name, default)
        if name in self.data:
            return self.data[name]
        return self.claims.get(name, default)

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and _aware(self.expires_at) <= _now()


def new_session_id() -> str:
    return secrets.token_urlsafe(32)


def _row_to_session(row: Any) -> CheckoutSession:
    m = row._mapping
    return CheckoutSession(
        id=m["id"], flow=m["flow"], csrf_token=m["csrf_token"], claims=dict(m["claims"] or {}),
        locked=list(m["locked"] or []), data=dict(m["data"] or {}), step=m["step"],
        order_id=m["order_id"], jti=m["jti"], version=m["version"],
        created_at=_aware(m["created_at"]), updated_at=_aware(m["updated_at"]),
        expires_at=_aware(m["expires_at"]), creating_since=_aware(m["creating_since"]),
        creating_owner=m.get("creating_owner"),
    )


class SessionConflict(Exception):
    """Someone else saved the session in between; reload and try again."""


class SessionStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, flow: str, *, claims: dict[str, Any] | None = None,
               locked: list[str] | None = None, jti: str | None = None,
               step: str = "start") -> CheckoutSession:
        """Create a session, or return the one already opened by the same token ``jti``."""
        if jti is not None:
            existing = self.get_by_jti(jti)
            if existing is not None:
                return existing
        now = _now()
        session = CheckoutSession(
            id=new_session_id(), flow=flow, csrf_token=secrets.token_urlsafe(32),
            claims=dict(claims or {}), locked=list(locked or []), data={}, step=step,
            jti=jti, version=1, created_at=now, updated_at=now, expires_at=now + SESSION_LIFETIME,
        )
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(sessions_table).values(
                    id=session.id, flow=flow, jti=jti, csrf_token=session.csrf_token,
                    claims=session.claims, locked=session.locked, data={}, step=step,
                    version=1, created_at=now, updated_at=now, expires_at=session.expires_at,
                ))
        except IntegrityError:
            # Two tabs presented the same token at the same moment: the other one won.
            existing = self.get_by_jti(jti) if jti else None
            if existing is None:
                raise
            return existing
        return session

    def get(self, session_id: str) -> CheckoutSession | None:
        if not session_id or len(session_id) > 64:
            return None
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
        """Write ``data`` and ``step`` back, refusing to overwrite a newer version."""
        now = _now()
        with self.engine.begin() as conn:
            result = conn.execute(
                update(sessions_table)
                .where(sessions_table.c.id == session.id,
                       sessions_table.c.version == session.version)
                .values(data=session.data, step=session.step, version=session.version + 1,
                        updated_at=now)
            )
        if result.rowcount != 1:
            raise SessionConflict(session.id)
        session.version += 1
        session.updated_at = now

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

    def claim_order_creation(self, session_id: str,
                             lease: timedelta = CREATION_LEASE) -> str | None:
        """Take the right to create this session's one order: the owner token, or None if another
        request holds it (for less than ``lease``) or an order is attached already."""
        now = _now()
        owner = secrets.token_urlsafe(24)
        with self.engine.begin() as conn:
            result = conn.execute(
                update(sessions_table)
                .where(sessions_table.c.id == session_id,
                       sessions_table.c.order_id.is_(None),
                       (sessions_table.c.creating_since.is_(None))
                       | (sessions_table.c.creating_since < now - lease))
                .values(creating_since=now, creating_owner=owner,
                        version=sessions_table.c.version + 1, updated_at=now)
            )
        return owner if result.rowcount == 1 else None

    def release_order_creation(self, session_id: str, owner: str) -> bool:
        """Give the claim back; only its owner can (False: someone else holds it now)."""
        with self.engine.begin() as conn:
            result = conn.execute(
                update(sessions_table)
                .where(sessions_table.c.id == session_id,
                       sessions_table.c.creating_owner == owner)
                .values(creating_since=None, creating_owner=None,
                        version=sessions_table.c.version + 1))
        return result.rowcount == 1

    def attach_order(self, session_id: str, order_id: str, step: str,
                     data_update: dict[str, Any] | None = None) -> str | None:
        """Record the order; the id of the order attached afterwards (another one when the session
        already had one: never replaced) or None when the session is gone.

        A compare-and-set on the empty order slot rather than on the claim's owner: an order that
        exists upstream for this session is attached whoever holds the claim, else it is orphaned.
        """
        now = _now()
        for _attempt in range(5):
            with self.engine.begin() as conn:
                row = conn.execute(select(sessions_table.c.data, sessions_table.c.order_id,
                                          sessions_table.c.version)
                                   .where(sessions_table.c.id == session_id)).first()
                if row is None:
                    return None
                if row.order_id:
                    return str(row.order_id)
                data = dict(row.data or {})
                data.update(data_update or {})
                result = conn.execute(
                    update(sessions_table)
                    .where(sessions_table.c.id == session_id,
                           sessions_table.c.order_id.is_(None),
                           sessions_table.c.version == row.version)
                    .values(order_id=order_id, step=step, data=data, creating_since=None,
                            creating_owner=None, version=sessions_table.c.version + 1,
                            updated_at=now))
            if result.rowcount == 1:
                return order_id
        raise SessionConflict(session_id)
