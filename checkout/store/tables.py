"""Every table of the checkout, declared on one ``metadata`` (SQLAlchemy Core).

Their schema is made and changed by revisions only (``checkout.store.schema``, revisions in
``migrations/versions``); what the head revision must match is this module
(``tests/test_schema.py``, ``scripts/new-migration``). The modules that use a table import it from
here.

``checkout_sessions``
    A checkout session (``checkout.sessions``): found by an unguessable id, bound to at most one
    launch token and one order.
``checkout_kyc_levels``
    The KYC level the upstream said a person passed (``checkout.kyc.memory``), by a keyed digest.
``checkout_webhook_events``
    One row per distinct delivery (UNIQUE sha256 of the signed bytes: the raw body, or in the
    ``data`` signature mode ``JSON.stringify(data)``): the body exactly as
    received, the headers that matter, the parsed event type, order, status and ``updatedAt``, and
    how processing went. A repeated delivery of the same bytes bumps ``duplicates`` and
    ``last_seen_at``.
``checkout_orders``
    The status that webhooks keep (and the full order fetched from the upstream). It only moves to a
    delivery with a newer ``updatedAt``, by one conditional upsert, so two workers cannot both win.
``checkout_signal_log``
    UNIQUE (order_id, status): the exactly-once guard of ``order_status_changed``. A row is
    inserted in the same transaction as the status move, and doubles as the outbox entry that the
    dispatcher delivers after commit (``state``: pending, dispatching, dispatched, failed).
``checkout_order_watch``
    The reconciler's schedule (:mod:`checkout.webhooks.reconcile`): one row per order it has
    asked the upstream about and not yet seen settled, with its next check time (also the lease
    that keeps two workers off the same order) and its backoff.
``checkout_signal_outbox``
    The other signals waiting for the dispatcher: ``webhook_received`` (one per verified delivery:
    a duplicate's row is written with its acknowledgement; the first delivery's by processing, so
    storing a new delivery is a single INSERT), ``kyc_event`` and ``auth_event`` (one per distinct
    event).
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

sessions_table = Table(
    "checkout_sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("flow", String(16), nullable=False),
    Column("jti", String(255), unique=True, nullable=True),
    Column("csrf_token", String(64), nullable=False),
    Column("claims", JSON, nullable=False),        # prefilled choices from the launch token
    Column("locked", JSON, nullable=False),        # claim names the user cannot change
    Column("data", JSON, nullable=False),          # what the user chose so far (DATA_FORMAT)
    # Unused since session data records progress itself (``progress``); kept, always "start",
    # because it is NOT NULL and hosts of earlier releases still write it. Dropping it takes two
    # releases: one whose revision gives it a server default (and stops writing it), then one whose
    # revision drops it, so that no host still running the release before breaks on it.
    Column("step", String(32), nullable=False),
    Column("order_id", String(64), nullable=True, index=True),
    # The creation claim of releases before the pending attempt was the claim: still read (see
    # checkout.journey.creation) while processes of such a release may run during an upgrade,
    # never written. Dropped, like ``step``, once no supported release writes them.
    Column("creating_since", DateTime(timezone=True), nullable=True),
    Column("creating_owner", String(64), nullable=True),
    Column("version", Integer, nullable=False, default=1),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

kyc_levels_table = Table(
    "checkout_kyc_levels", metadata,
    # A keyed digest of "email:<address>" or "phone:<E.164 digits>" (person_keys).
    Column("person", String(64), primary_key=True),
    Column("level", String(16), nullable=False),
    Column("said_at", DateTime(timezone=True), nullable=False),
)

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a bigint identity.
_Id = BigInteger().with_variant(Integer(), "sqlite")


events_table = Table(
    "checkout_webhook_events",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("body_sha256", String(64), nullable=False, unique=True),   # the dedupe key (signed bytes)
    Column("body", LargeBinary, nullable=False),                       # exactly the bytes received
    Column("headers", JSON, nullable=False),
    Column("received_at", DateTime(timezone=True), nullable=False),
    Column("last_seen_at", DateTime(timezone=True), nullable=False),
    Column("duplicates", Integer, nullable=False, default=0),
    Column("event_type", String(64), nullable=True),
    Column("order_id", String(128), nullable=True, index=True),
    Column("status", String(64), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=True),      # the order's updatedAt
    Column("state", String(16), nullable=False),
    Column("outcome", String(32), nullable=True),   # applied, stale, unchanged, signalled, ignored
    Column("error", Text, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("processed_at", DateTime(timezone=True), nullable=True),
    # 1 once the first delivery's webhook_received is owed (an outbox row written by processing).
    Column("received_owed", Integer, nullable=False, default=0, server_default="0"),
)
Index("ix_checkout_webhook_events_state_id", events_table.c.state, events_table.c.id)

orders_table = Table(
    "checkout_orders",
    metadata,
    Column("order_id", String(128), primary_key=True),
    Column("flow", String(32), nullable=True),          # onramp, offramp (or the upstream's type)
    Column("status", String(64), nullable=False),       # the webhook status set (notes 4)
    Column("previous_status", String(64), nullable=True),
    # The order's updatedAt of the stored status: the only ordering key of webhooks.
    Column("status_updated_at", DateTime(timezone=True), nullable=True),
    Column("status_source", String(16), nullable=False),  # webhook or upstream
    Column("order_params", Text, nullable=True),
    Column("summary", JSON, nullable=True),             # data.order of the last applied webhook
    Column("full_order", JSON, nullable=True),          # the get-order answer (fees, instructions)
    Column("fetched_at", DateTime(timezone=True), nullable=True),
    Column("hash", String(256), nullable=True),
    # When the stored status was last known to be current (a webhook applied or a fetch).
    Column("refreshed_at", DateTime(timezone=True), nullable=False),
    # Bumped by every status move: a fetch started before a move must not overwrite it.
    Column("version", Integer, nullable=False, default=1),
    # Full-order fetch queue: due time, a request counter, attempts and the last error.
    Column("fetch_due_at", DateTime(timezone=True), nullable=True, index=True),
    Column("fetch_seq", Integer, nullable=False, default=0),
    Column("fetch_attempts", Integer, nullable=False, default=0),
    Column("fetch_error", Text, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

watch_table = Table(
    "checkout_order_watch",
    metadata,
    Column("order_id", String(128), primary_key=True),
    Column("flow", String(32), nullable=False),
    # Not before this time; claiming pushes it a lease ahead (a conditional UPDATE).
    Column("next_check_at", DateTime(timezone=True), nullable=False, index=True),
    # Checks in a row that learned nothing new (or failed): the exponent of the backoff.
    Column("quiet_checks", Integer, nullable=False, default=0),
    # When the last check ended; empty while one is under way (the claim clears it), so that an
    # operator's "reconcile --now" takes an order resting in its back-off, never one being checked.
    Column("last_checked_at", DateTime(timezone=True), nullable=True),
    Column("last_error", Text, nullable=True),
)

def _dispatch_columns() -> list[Column[Any]]:
    """How a queued signal is being sent (both signal tables): its state (pending, dispatching,
    dispatched, failed), when a dispatcher claimed it (the claim's lease), when it was sent, the
    tries and the last error."""
    return [
        Column("state", String(16), nullable=False),
        Column("claimed_at", DateTime(timezone=True), nullable=True),
        Column("dispatched_at", DateTime(timezone=True), nullable=True),
        Column("attempts", Integer, nullable=False, default=0),
        Column("error", Text, nullable=True),
    ]


signal_log_table = Table(
    "checkout_signal_log",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("order_id", String(128), nullable=False),
    Column("status", String(64), nullable=False),
    Column("previous_status", String(64), nullable=True),
    Column("flow", String(32), nullable=True),
    Column("order_params", Text, nullable=True),
    Column("event_id", ForeignKey("checkout_webhook_events.id"), nullable=True),  # None: a fetch
    Column("created_at", DateTime(timezone=True), nullable=False),
    *_dispatch_columns(),
    UniqueConstraint("order_id", "status", name="uq_checkout_signal_log_order_status"),
)
Index("ix_checkout_signal_log_state_id", signal_log_table.c.state, signal_log_table.c.id)

outbox_table = Table(
    "checkout_signal_outbox",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("signal", String(32), nullable=False),       # webhook_received, kyc_event, auth_event
    Column("event_id", ForeignKey("checkout_webhook_events.id"), nullable=False),
    Column("duplicate", Integer, nullable=False, default=0),   # 1: a repeated delivery
    Column("created_at", DateTime(timezone=True), nullable=False),
    *_dispatch_columns(),
)
Index("ix_checkout_signal_outbox_state_id", outbox_table.c.state, outbox_table.c.id)
