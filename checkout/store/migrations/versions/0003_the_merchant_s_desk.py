"""The merchant's desk (checkout.desk): its index of orders, the step events of the funnel, its audit
trail, the refused webhook deliveries, and where each status came from.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

Only additions: six new tables, empty at first, a nullable column and three indexes. Hosts of the
previous release, still running while this is applied, never read or write the new tables, and
leave the new column of ``checkout_signal_log`` empty (the desk then says where a status came from
by its event: a webhook's, else a read of the upstream). The desk's index starts with the orders
the checkout learns of after the upgrade; ``flask checkout desk reindex`` adds those it kept
before (it needs the launch secret, which a revision does not have).
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "checkout_desk_orders",
        sa.Column("order_id", sa.String(length=128), nullable=False),
        sa.Column("flow", sa.String(length=32), nullable=True),
        sa.Column("variant", sa.String(length=16), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("session_key", sa.String(length=64), nullable=True),
        sa.Column("order_params", sa.Text(), nullable=True),
        sa.Column("network", sa.String(length=32), nullable=True),
        sa.Column("asset", sa.String(length=16), nullable=True),
        sa.Column("currency", sa.String(length=8), nullable=True),
        sa.Column("fiat_amount", sa.Numeric(precision=38, scale=12), nullable=True),
        sa.Column("crypto_amount", sa.Numeric(precision=38, scale=18), nullable=True),
        sa.PrimaryKeyConstraint("order_id"),
    )
    op.create_index("ix_checkout_desk_orders_created", "checkout_desk_orders",
                    ["created_at", "order_id"])
    # LIKE 'prefix%' on PostgreSQL whatever the database's collation; a plain index on SQLite.
    op.create_index("ix_checkout_desk_orders_prefix", "checkout_desk_orders", ["order_id"],
                    postgresql_ops={"order_id": "varchar_pattern_ops"})

    op.create_table(
        "checkout_desk_keys",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("order_id", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("key", "order_id"),
    )

    op.create_table(
        "checkout_step_events",
        sa.Column("session_key", sa.String(length=64), nullable=False),
        sa.Column("step", sa.String(length=32), nullable=False),
        sa.Column("flow", sa.String(length=16), nullable=False),
        sa.Column("reached_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("session_key", "step"),
    )
    op.create_table(
        "checkout_step_sessions",
        sa.Column("session_key", sa.String(length=64), nullable=False),
        sa.Column("flow", sa.String(length=16), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("steps", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("session_key"),
    )
    op.create_index("ix_checkout_step_sessions_opened_at", "checkout_step_sessions",
                    ["opened_at"])

    op.create_table(
        "checkout_desk_actions",
        sa.Column("id", _Id, autoincrement=True, nullable=False),
        sa.Column("order_id", sa.String(length=128), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("staff", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_checkout_desk_actions_order_id", "checkout_desk_actions", ["order_id"])

    op.create_table(
        "checkout_webhook_refusals",
        sa.Column("id", _Id, autoincrement=True, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("order_id", sa.String(length=128), nullable=True),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_checkout_webhook_refusals_received_at", "checkout_webhook_refusals",
                    ["received_at"])
    op.create_index("ix_checkout_webhook_refusals_order_id", "checkout_webhook_refusals",
                    ["order_id"])

    # The list of orders in one status, read through the status (a rare one among many).
    op.create_index("ix_checkout_orders_status", "checkout_orders", ["status"])
    # SQLite adds a nullable column in place: no table is copied.
    op.add_column("checkout_signal_log", sa.Column("source", sa.String(length=16), nullable=True))
    op.create_index("ix_checkout_webhook_events_received_at", "checkout_webhook_events",
                    ["received_at"])


def downgrade() -> None:
    raise NotImplementedError("downgrades are not supported: restore a backup instead")
