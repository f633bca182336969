"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
Create Date: ${create_date}

Say what changes and why, and what becomes of existing rows. Hosts of the previous release may
still be running while this is applied (see the README's "Database upgrades"): prefer a change
they survive (a new nullable column, a new table) to one that breaks them (a dropped or renamed
column), and split the latter over two releases.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op
${imports if imports else ""}
revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = None
depends_on = None


def upgrade() -> None:
    ${upgrades if upgrades else "pass"}


def downgrade() -> None:
    raise NotImplementedError("downgrades are not supported: restore a backup instead")
