"""The checkout's tables as released before migrations existed (commit 1b4918f), frozen here.

Revision ID: 0001
Revises: none
Create Date: 2026-11-23

Those releases made their tables at start-up (``create_all``, which makes whole tables, then the
missing nullable or defaulted columns) and recorded no revision. Such a database is adopted: each
table missing here is created, each column or index missing from a table that exists is added (as
those releases did: ``creating_owner``, ``received_owed`` and the table ``checkout_order_watch``
came in later releases), and nothing that is there is changed. On an empty database this simply
creates everything. A column that existing rows could not take (NOT NULL, no server default) stops
the upgrade by name rather than guessing a value; no release made such a column.

Written out by hand, never generated from the code's tables at run time: later changes to the code
go in later revisions (the test ``test_schema_matches_the_code`` says when one is missing).
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.schema import CreateIndex, CreateTable, ExecutableDDLElement, SchemaItem

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a bigint (BIGSERIAL).
_Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _sessions() -> list[SchemaItem]:
    return [
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("flow", sa.String(16), nullable=False),
        sa.Column("jti", sa.String(255), unique=True, nullable=True),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("claims", sa.JSON, nullable=False),
        sa.Column("locked", sa.JSON, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("step", sa.String(32), nullable=False),
        sa.Column("order_id", sa.String(64), nullable=True),
        sa.Column("creating_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("creating_owner", sa.String(64), nullable=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    ]


def _webhook_events() -> list[SchemaItem]:
    return [
        sa.Column("id", _Id, primary_key=True, autoincrement=True),
        sa.Column("body_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("headers", sa.JSON, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duplicates", sa.Integer, nullable=False),
        sa.Column("event_type", sa.String(64), nullable=True),
        sa.Column("order_id", sa.String(128), nullable=True),
        sa.Column("status", sa.String(64), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(32), nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("received_owed", sa.Integer, nullable=False, server_default="0"),
    ]


def _orders() -> list[SchemaItem]:
    return [
        sa.Column("order_id", sa.String(128), primary_key=True),
        sa.Column("flow", sa.String(32), nullable=True),
        sa.Column("status", sa.String(64), nullable=False),
        sa.Column("previous_status", sa.String(64), nullable=True),
        sa.Column("status_updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status_source", sa.String(16), nullable=False),
        sa.Column("order_params", sa.Text, nullable=True),
        sa.Column("summary", sa.JSON, nullable=True),
        sa.Column("full_order", sa.JSON, nullable=True),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("hash", sa.String(256), nullable=True),
        sa.Column("refreshed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("fetch_due_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("fetch_seq", sa.Integer, nullable=False),
        sa.Column("fetch_attempts", sa.Integer, nullable=False),
        sa.Column("fetch_error", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    ]


def _order_watch() -> list[SchemaItem]:
    return [
        sa.Column("order_id", sa.String(128), primary_key=True),
        sa.Column("flow", sa.String(32), nullable=False),
        sa.Column("next_check_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("quiet_checks", sa.Integer, nullable=False),
        sa.Column("last_checked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
    ]


def _signal_log() -> list[SchemaItem]:
    return [
        sa.Column("id", _Id, primary_key=True, autoincrement=True),
        sa.Column("order_id", sa.String(128), nullable=False),
        sa.Column("status", sa.String(64), nullable=False),
        sa.Column("previous_status", sa.String(64), nullable=True),
        sa.Column("flow", sa.String(32), nullable=True),
        sa.Column("order_params", sa.Text, nullable=True),
        sa.Column("event_id", _Id, sa.ForeignKey("checkout_webhook_events.id"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("dispatched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.UniqueConstraint("order_id", "status", name="uq_checkout_signal_log_order_status"),
    ]


def _signal_outbox() -> list[SchemaItem]:
    return [
        sa.Column("id", _Id, primary_key=True, autoincrement=True),
        sa.Column("signal", sa.String(32), nullable=False),
        sa.Column("event_id", _Id, sa.ForeignKey("checkout_webhook_events.id"), nullable=False),
        sa.Column("duplicate", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("dispatched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
    ]


def _tables() -> list[tuple[str, list[SchemaItem], list[tuple[str, list[str]]]]]:
    """In creation order (the signal tables refer to the events): each table's name, columns and
    constraints (new objects on each call: a column belongs to one table), and indexes."""
    return [
        ("checkout_sessions", _sessions(), [("ix_checkout_sessions_order_id", ["order_id"])]),
        ("checkout_webhook_events", _webhook_events(), [
            ("ix_checkout_webhook_events_order_id", ["order_id"]),
            ("ix_checkout_webhook_events_state_id", ["state", "id"]),
        ]),
        ("checkout_orders", _orders(), [("ix_checkout_orders_fetch_due_at", ["fetch_due_at"])]),
        ("checkout_order_watch", _order_watch(),
         [("ix_checkout_order_watch_next_check_at", ["next_check_at"])]),
        ("checkout_signal_log", _signal_log(), [("ix_checkout_signal_log_state_id", ["state", "id"])]),
        ("checkout_signal_outbox", _signal_outbox(),
         [("ix_checkout_signal_outbox_state_id", ["state", "id"])]),
    ]


# dialect -> table -> the statements creating it and its indexes, compiled once per process: every
# new database runs this revision (the test suite makes hundreds), and building the same Table
# objects and DDL each time costs more than running it.
_compiled: dict[str, dict[str, list[str]]] = {}


def _create_statements(dialect: sa.Dialect) -> dict[str, list[str]]:
    if dialect.name not in _compiled:
        schema = sa.MetaData()           # one, so that the foreign keys find their table
        statements: dict[str, list[str]] = {}
        for name, items, indexes in _tables():
            table = sa.Table(name, schema, *items)
            ddl: list[ExecutableDDLElement] = [CreateTable(table)]
            ddl += [CreateIndex(sa.Index(index, *(table.c[c] for c in columns)))
                    for index, columns in indexes]
            statements[name] = [str(element.compile(dialect=dialect)).strip() for element in ddl]
        _compiled[dialect.name] = statements
    return _compiled[dialect.name]


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    existing = set(inspector.get_table_names())
    for name, items, indexes in _tables():
        if name not in existing:
            for statement in _create_statements(bind.dialect)[name]:
                op.execute(statement)
            continue
        # A table made by an earlier release: what it lacks, as those releases added it.
        present = {column["name"] for column in inspector.get_columns(name)}
        for column in (item for item in items if isinstance(item, sa.Column)):
            if column.name in present:
                continue
            if not column.nullable and column.server_default is None:
                raise RuntimeError(
                    f"the column {name}.{column.name} is missing from the database and cannot be "
                    "added to existing rows (it has no server default)")
            op.add_column(name, column)
        indexed = {index["name"] for index in inspector.get_indexes(name)}
        for index, columns in indexes:
            if index not in indexed:
                op.create_index(index, name, columns)


def downgrade() -> None:
    raise NotImplementedError("downgrades are not supported: restore a backup instead")
