"""``flask checkout db upgrade [REVISION] | current | history``: the schema of the checkout's tables.

Errors are one line (``Error: ...``) with exit status 1; a database URL is printed without its
password."""
from __future__ import annotations

import click
from flask import current_app
from flask.cli import AppGroup
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from ..errors import SchemaError
from ..store import schema

db_cli = AppGroup("db", help="The checkout's tables: their schema revision and its upgrades.")


def _engine() -> Engine:
    # Not state_of(): that would check the schema first, which is what these commands are for.
    engine: Engine = current_app.extensions["checkout"].engine
    return engine


def _database_failed(engine: Engine, exc: SQLAlchemyError) -> click.ClickException:
    cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return click.ClickException(
        f"the database failed ({schema.where(engine)}): {cause[0] if cause else exc}")


@db_cli.command("upgrade")
@click.argument("revision", default="head")
def upgrade_command(revision: str) -> None:
    """Upgrade the checkout's tables to REVISION (default: head, this release's newest).

    Safe to run while other processes start or serve: the upgrade takes the schema lock, and runs
    once. Downgrades are not supported."""
    engine = _engine()
    try:
        done = schema.upgrade(engine, revision)
    except SchemaError as exc:
        raise click.ClickException(str(exc)) from None
    except SQLAlchemyError as exc:
        raise _database_failed(engine, exc) from None
    state = current_app.extensions["checkout"]
    if done.after == schema.head():
        state.schema_unchecked = False
    if done.changed:
        click.echo(f"upgraded the checkout's database from {schema.describe(done.before)} to "
                   f"{_named(done.after)}")
    else:
        click.echo(f"the checkout's database is already at {_named(done.after)}")


@db_cli.command("current")
def current_command() -> None:
    """The database's revision; exit status 0 when it is this release's head, else 1."""
    engine = _engine()
    try:
        found = schema.status(engine)
    except SQLAlchemyError as exc:
        raise _database_failed(engine, exc) from None
    if found.at_head:
        click.echo(_named(found.current))
        return
    if found.ahead:
        click.echo(f"{found.current}: unknown to this release, whose head is {found.head} (a newer "
                   "release upgraded the database)")
    elif found.current is None:
        click.echo(f"none: no revision recorded (an empty database, or one made before "
                   f"migrations); this release needs {found.head}: run `{schema.UPGRADE_COMMAND}`")
    else:
        click.echo(f"{found.current}: behind this release's head {found.head}: run "
                   f"`{schema.UPGRADE_COMMAND}`")
    raise SystemExit(1)


@db_cli.command("history")
def history_command() -> None:
    """The revisions this release knows, newest first (reads no database)."""
    for script in schema.history():
        label = f"{script.revision} (head)" if script.is_head else script.revision
        click.echo(f"{label:<12}{script.doc}")


def _named(revision: str | None) -> str:
    if revision is not None and revision == schema.head():
        return f"{revision} (head)"
    return schema.describe(revision)
