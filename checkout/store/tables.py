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
``checkout_webhook_refusals``
    Deliveries the receiver refused (a bad signature, too large), without their body: when, why,
    and the order the body named, unverified (:mod:`checkout.webhooks.refusals`).

The merchant's desk (:mod:`checkout.desk`) reads these and writes five of its own:

``checkout_desk_orders``
    One row per order the checkout knows of, written where it learns of one (its creation here, a
    webhook, a read of the full order): what the desk lists, filters, pages and sums.
``checkout_desk_keys``
    What a customer may quote to find an order (its shop reference, a wallet address, a
    transaction hash, an email, a phone number), each as a keyed digest: the desk finds an order
    by its email without the email being kept anywhere new.
``checkout_step_events``
    Each step a session reached, once (UNIQUE session and step), and when: the order's timeline,
    across restarts and workers. The session is named by a keyed digest of its id, never the id.
``checkout_step_sessions``
    One row per session with step events: when it opened and the steps it reached, in order,
    kept with each first step event: the funnel, counted over a month in one short read.
``checkout_desk_actions``
    What staff did from the desk (who, when, which action, its outcome): the audit trail.
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
    Numeric,
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
# The desk's webhook health counts the deliveries of a day, a week, a month.
Index("ix_checkout_webhook_events_received_at", events_table.c.received_at)

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

# The desk's list of orders in one status (a rare one among 100,000), and the metrics' count.
Index("ix_checkout_orders_status", orders_table.c.status)

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
    # Where the status came from: webhook, reconciliation, page (a status page's read), desk (a
    # staff member's "check now"), host (the host's own order_status call), upstream (another
    # read). Empty on rows of earlier releases: a webhook's when event_id is set.
    Column("source", String(16), nullable=True),
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

refusals_table = Table(
    "checkout_webhook_refusals",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("received_at", DateTime(timezone=True), nullable=False, index=True),
    Column("reason", String(32), nullable=False),          # signature, too_large
    # The order the refused body named (its data.order._id), unverified: never acted on.
    Column("order_id", String(128), nullable=True, index=True),
    # Refusals this row stands for: those the process did not write one by one (a flood).
    Column("count", Integer, nullable=False, default=1),
)

desk_orders_table = Table(
    "checkout_desk_orders",
    metadata,
    Column("order_id", String(128), primary_key=True),
    Column("flow", String(32), nullable=True),          # onramp, offramp
    Column("variant", String(16), nullable=True),       # off-ramp: channel or type
    Column("created_at", DateTime(timezone=True), nullable=False),
    # A keyed digest of the id of the session that made it (its step events name it so).
    Column("session_key", String(64), nullable=True),
    Column("order_params", Text, nullable=True),
    Column("network", String(32), nullable=True),
    Column("asset", String(16), nullable=True),
    Column("currency", String(8), nullable=True),      # the local currency
    # What the customer was to pay and receive: the local money and the crypto of the order.
    Column("fiat_amount", Numeric(38, 12), nullable=True),
    Column("crypto_amount", Numeric(38, 18), nullable=True),
)
# Newest first, page after page (created_at, then the id for a stable order).
Index("ix_checkout_desk_orders_created", desk_orders_table.c.created_at,
      desk_orders_table.c.order_id)
# A reference's first characters: LIKE 'prefix%' uses it on PostgreSQL whatever the collation.
Index("ix_checkout_desk_orders_prefix", desk_orders_table.c.order_id,
      postgresql_ops={"order_id": "varchar_pattern_ops"})

desk_keys_table = Table(
    "checkout_desk_keys",
    metadata,
    # A keyed digest of "kind:value" (checkout.desk.index.search_keys).
    Column("key", String(64), primary_key=True),
    Column("order_id", String(128), primary_key=True),
)

step_events_table = Table(
    "checkout_step_events",
    metadata,
    Column("session_key", String(64), primary_key=True),   # a keyed digest of the session id
    Column("step", String(32), primary_key=True),         # a step's name, or opened, ordered
    Column("flow", String(16), nullable=False),
    Column("reached_at", DateTime(timezone=True), nullable=False),
)

step_sessions_table = Table(
    "checkout_step_sessions",
    metadata,
    Column("session_key", String(64), primary_key=True),
    Column("flow", String(16), nullable=False),
    # When its first step event came (its opening): the funnel counts sessions by it.
    Column("opened_at", DateTime(timezone=True), nullable=False, index=True),
    # The steps it reached, in the order it first reached them, comma-separated.
    Column("steps", Text, nullable=False),
)

desk_actions_table = Table(
    "checkout_desk_actions",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("order_id", String(128), nullable=False, index=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("staff", String(255), nullable=False),          # the staff member's name
    Column("role", String(16), nullable=False),
    Column("action", String(16), nullable=False),          # check, resend
    Column("outcome", String(16), nullable=False),
    Column("detail", Text, nullable=True),
)
