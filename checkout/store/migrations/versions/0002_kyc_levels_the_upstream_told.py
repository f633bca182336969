"""The KYC levels the upstream told of each person (checkout.kyc.memory).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27

A new table, empty at first: a returning customer is recognised once an order webhook (or a
``kyc`` event, or a refused submission) of theirs has told their level after this upgrade. Hosts
of the previous release, still running while this is applied, never read or write it.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checkout_kyc_levels",
        sa.Column("person", sa.String(length=64), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("said_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person"),
    )


def downgrade() -> None:
    raise NotImplementedError("downgrades are not supported: restore a backup instead")
