"""Alembic's environment, for developers only: ``scripts/new-migration`` runs it to write a new
revision (autogenerate). The checkout itself never runs this file: ``checkout.store.schema``
drives Alembic from code, with the same version table and tables."""
from __future__ import annotations

from alembic import context

from checkout.store.schema import VERSION_TABLE
from checkout.store.tables import metadata


def _ours(name: str | None, type_: str, _parent: object) -> bool:
    # The checkout's tables only: a host's own tables may share the database.
    return type_ != "table" or (name or "").startswith("checkout_")


connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, version_table=VERSION_TABLE,
                  include_name=_ours, compare_type=True, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
