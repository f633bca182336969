"""Schema migrations: databases of previous releases upgrade in place, with nothing lost; the head
matches the tables declared in code; start-up upgrades under a lock or refuses, as configured; a
database ahead of the code is refused; ``flask checkout db upgrade | current | history``."""
from __future__ import annotations

import os
import re
import textwrap
from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner
from flask.cli import FlaskGroup
from sqlalchemy import create_engine, func, inspect, select, text

from checkout import order_status
from checkout.errors import SchemaAhead, SchemaBehind, SchemaError
from checkout.signature import sign
from checkout.state import get_state
from checkout.store import schema
from checkout.store.schema import connect
from checkout.store.tables import metadata
from checkout.webhooks.dispatcher import process_pending
from checkout.webhooks.store import events_table, signal_log_table

from .conftest import make_app
from .release_databases import OLDER, PREVIOUS, RELEASES, load, snapshot
from .webhooks.helpers import order_payload, signed_webhook

HEAD = schema.head()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        # Not the config fixture's file, which starts migrated: these tests start from nothing.
        return f"sqlite:///{tmp_path}/schema.sqlite3"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def db_config(config, database_url) -> dict:
    config.update(CHECKOUT_DATABASE_URL=database_url, CHECKOUT_WEBHOOK_BACKGROUND=False,
                  CHECKOUT_WEBHOOK_FETCH_ORDERS=False)
    return config


def recorded(url: str) -> str | None:
    engine = create_engine(url)
    try:
        return schema.status(engine).current
    finally:
        engine.dispose()


def table_names(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


# -- the head is the code's tables ----------------------------------------------------------------

def test_schema_matches_the_code(database_url):
    """A table changed in code without a revision fails here, saying what differs."""
    engine = connect(database_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={
                "compare_type": True, "compare_server_default": True,
                "version_table": schema.VERSION_TABLE})
            differences = compare_metadata(context, metadata)
    finally:
        engine.dispose()
    assert differences == [], (
        "the tables declared in code differ from the schema the migrations make: add a revision "
        f"(scripts/new-migration 'what changes') for: {differences}")


def test_the_version_table_is_the_checkouts_own(database_url):
    """A host site's own Alembic (alembic_version) on the same database is left alone."""
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('hostsite01')"))
    connect(database_url).dispose()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() \
            == "hostsite01"
    engine.dispose()
    assert recorded(database_url) == HEAD


# -- a database of a previous release, with rows, upgrades in place -------------------------------

@pytest.mark.parametrize("release", RELEASES)
def test_a_previous_releases_database_upgrades_in_place_and_nothing_is_lost(
        release, db_config, database_url):
    made = load(release, database_url)
    before = snapshot(database_url)
    assert {name: len(rows) for name, rows in before.items()} == made["rows"]
    assert recorded(database_url) is None

    app = make_app(dict(db_config))                # start-up upgrades it (the default)

    assert recorded(database_url) == HEAD
    after = snapshot(database_url)
    assert set(metadata.tables) <= set(after)
    for name, rows in before.items():
        kept = [{column: row[column] for column in rows[0]} for row in after[name]] if rows else []
        assert kept == rows, f"{name} changed in the upgrade"
    if release == OLDER:                           # the reconciler's table is new to it
        assert "checkout_order_watch" not in before and after["checkout_order_watch"] == []

    _the_app_works_on(app, made)


def _the_app_works_on(app, made: dict) -> None:
    client = app.test_client()
    # A stored session opens, with what its user had given (the launch token's email).
    launched = made["launched_session"]
    page = client.get(f"/checkout/s/{launched}/wallet")
    assert page.status_code == 200, page.get_data(as_text=True)[:500]
    assert "ada@example.com" in page.get_data(as_text=True)
    with app.app_context():
        session = get_state().sessions.get(launched)
        assert session.jti == made["launched_jti"] and session.value("network") == "CELO"
        assert get_state().sessions.get(made["paid_session"]).order_id == made["paid_order"]
        engine = get_state().engine
    # Stored orders' statuses read.
    paid, other = made["paid_order"], made["other_order"]
    stored_paid = order_status.get(engine, paid)
    assert stored_paid.status == "deposit_awaiting"
    assert order_status.get(engine, other).status == "deposit_received"
    with engine.connect() as conn:
        old_max = conn.execute(select(func.max(signal_log_table.c.id))).scalar_one()
        stored = conn.execute(select(events_table.c.body, events_table.c.duplicates)
                              .where(events_table.c.order_id == other)
                              .order_by(events_table.c.id)).first()
    # A webhook for a stored order is processed: its status moves, a new signal row follows the
    # old ones (the id sequence came through).
    moved = signed_webhook(order_payload(
        paid, "deposit_received", updated_at=stored_paid.updated_at + timedelta(minutes=1),
        order_params=made["paid_reference"]))
    answer = client.post("/checkout/webhooks", data=moved.body, headers=moved.headers,
                         base_url="https://shop.test")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    process_pending(app)
    assert order_status.get(engine, paid).status == "deposit_received"
    with engine.connect() as conn:
        new_ids = conn.execute(select(signal_log_table.c.id)
                               .where(signal_log_table.c.order_id == paid,
                                      signal_log_table.c.status == "deposit_received")).scalars()
        assert all(new_id > old_max for new_id in new_ids)
    # A delivery stored by the release, sent again, is known as a duplicate (its key came through).
    again = client.post("/checkout/webhooks", data=stored.body,
                        headers={"Content-Type": "application/json",
                                 "x-signature": sign(stored.body, app.config[
                                     "CHECKOUT_WEBHOOK_SECRET"])},
                        base_url="https://shop.test")
    assert again.status_code == 200 and again.get_json()["duplicate"] is True
    # And a new session starts.
    assert client.get("/checkout/onramp").status_code == 303


@pytest.mark.parametrize("release", RELEASES)
def test_the_reconciler_works_on_an_upgraded_database(release, db_config, database_url):
    made = load(release, database_url)
    db_config["CHECKOUT_RECONCILE_AFTER"] = 0
    app = make_app(dict(db_config))
    result = app.test_cli_runner().invoke(args=["checkout", "orders", "reconcile"])
    assert result.exit_code == 0, result.output
    with app.app_context(), get_state().engine.connect() as conn:
        watched = set(conn.execute(text("SELECT order_id FROM checkout_order_watch")).scalars())
    assert {made["paid_order"], made["other_order"]} <= watched


# -- start-up: refused when so configured, and always when the database is ahead ---------------

def test_start_up_refuses_a_database_behind_when_auto_upgrade_is_off(db_config, database_url):
    load(PREVIOUS, database_url)
    before = snapshot(database_url)
    db_config["CHECKOUT_DATABASE_AUTO_UPGRADE"] = False
    with pytest.raises(SchemaBehind, match=re.escape("run `flask checkout db upgrade`")) as caught:
        make_app(dict(db_config))
    assert caught.value.current is None and caught.value.head == HEAD
    assert "no revision recorded" in str(caught.value)
    assert recorded(database_url) is None and snapshot(database_url) == before


def test_start_up_refuses_an_empty_database_when_auto_upgrade_is_off(db_config, database_url):
    db_config["CHECKOUT_DATABASE_AUTO_UPGRADE"] = False
    with pytest.raises(SchemaBehind, match="flask checkout db upgrade"):
        make_app(dict(db_config))
    assert not {name for name in table_names(database_url) if name.startswith("checkout_")}


def _stamp(url: str, revision: str) -> None:
    engine = connect(url)
    with engine.begin() as conn:
        conn.execute(text(f"UPDATE {schema.VERSION_TABLE} SET version_num = :rev"), {"rev": revision})
    engine.dispose()


@pytest.mark.parametrize("auto_upgrade", [True, False])
def test_a_database_ahead_of_the_code_is_always_refused(auto_upgrade, db_config, database_url):
    """A newer release upgraded it, then was rolled back: this code must not touch it."""
    _stamp(database_url, "9999")
    db_config["CHECKOUT_DATABASE_AUTO_UPGRADE"] = auto_upgrade
    with pytest.raises(SchemaAhead, match="9999, which this release does not know") as caught:
        make_app(dict(db_config))
    assert "downgrades are not supported" in str(caught.value)
    assert recorded(database_url) == "9999"


def test_messages_never_show_the_databases_password(postgres_url):
    url = postgres_url.replace("app@", "app:sekrit@")
    _stamp(url, "9999")
    with pytest.raises(SchemaAhead) as caught:
        connect(url)
    assert "sekrit" not in str(caught.value) and "app:***@" in str(caught.value)


# -- flask checkout db ... --------------------------------------------------------------------

def flask_cli(config: dict):
    """The ``flask`` command of a host site whose factory builds the app (as ``flask --app``
    does: the app is loaded to find the command)."""
    cli = FlaskGroup(create_app=lambda: make_app(dict(config)))

    def run(*args: str):
        from_cli = os.environ.get("FLASK_RUN_FROM_CLI")     # FlaskGroup sets it
        try:
            return CliRunner().invoke(cli, list(args), catch_exceptions=False)
        finally:
            if from_cli is None:
                os.environ.pop("FLASK_RUN_FROM_CLI", None)

    return run


def test_db_commands_on_a_previous_releases_database(db_config, database_url):
    load(PREVIOUS, database_url)
    db_config["CHECKOUT_DATABASE_AUTO_UPGRADE"] = False
    flask = flask_cli(db_config)

    current = flask("checkout", "db", "current")
    assert current.exit_code == 1
    assert current.output.startswith("none: no revision recorded")
    assert "run `flask checkout db upgrade`" in current.output
    # Another command of the checkout is refused as start-up would, in one line.
    purge = flask("checkout", "sessions", "purge")
    assert purge.exit_code == 1
    assert purge.output.startswith("Error: the checkout's database") and "db upgrade" in purge.output
    # Its help needs no database.
    helped = flask("checkout", "sessions", "purge", "--help")
    assert helped.exit_code == 0 and "Delete expired checkout sessions" in helped.output

    history = flask("checkout", "db", "history")
    assert history.exit_code == 0
    assert history.output.splitlines()[0].startswith(f"{HEAD} (head)")

    upgrade = flask("checkout", "db", "upgrade")
    assert upgrade.exit_code == 0, upgrade.output
    assert upgrade.output.strip() == f"upgraded the checkout's database from none to {HEAD} (head)"
    assert recorded(database_url) == HEAD
    again = flask("checkout", "db", "upgrade")
    assert again.output.strip() == f"the checkout's database is already at {HEAD} (head)"
    current = flask("checkout", "db", "current")
    assert (current.exit_code, current.output.strip()) == (0, f"{HEAD} (head)")
    assert flask("checkout", "sessions", "purge").exit_code == 0


def test_other_commands_upgrade_first_when_auto_upgrade_is_on(db_config, database_url):
    load(PREVIOUS, database_url)
    flask = flask_cli(db_config)
    assert flask("checkout", "db", "current").output.startswith("none:")   # shown as it is
    assert flask("checkout", "webhooks", "list", "--help").exit_code == 0
    assert recorded(database_url) is None
    purge = flask("checkout", "sessions", "purge")
    assert purge.exit_code == 0, purge.output
    assert recorded(database_url) == HEAD


def test_db_command_errors_are_one_line(db_config, database_url):
    flask = flask_cli(db_config)
    unknown = flask("checkout", "db", "upgrade", "nosuch")
    assert unknown.exit_code == 1
    assert unknown.output.startswith("Error: no revision 'nosuch'") and "db history" in unknown.output
    _stamp(database_url, "9999")
    for args in (("upgrade",), ("current",)):
        result = flask("checkout", "db", *args)
        assert result.exit_code == 1
        assert "9999" in result.output and "Traceback" not in result.output


def test_db_commands_say_when_the_database_is_unreachable(config):
    config["CHECKOUT_DATABASE_URL"] = "postgresql+psycopg://app:sekrit@127.0.0.1:9/checkout"
    flask = flask_cli(config)
    for args in (("upgrade",), ("current",)):
        result = flask("checkout", "db", *args)
        assert result.exit_code == 1
        line, = result.output.strip().splitlines()
        assert line.startswith("Error: the database failed (postgresql+psycopg://app:***@")
        assert "sekrit" not in result.output


# -- a later revision, from a throw-away folder -----------------------------------------------

LATER = '''
"""A later revision of a test: a column whose rows are filled, and a table."""
import sqlalchemy as sa
from alembic import op

revision = "{revision}"
down_revision = "{down}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("checkout_orders") as batch:
        batch.add_column(sa.Column("note", sa.String(32), nullable=True))
    op.execute("UPDATE checkout_orders SET note = 'was ' || status")
    op.create_table("checkout_demo", sa.Column("id", sa.Integer, primary_key=True))
    {fail}
'''


@pytest.fixture
def later_revision(tmp_path, monkeypatch):
    """Adds revision 9001 after the head, from a folder of this test; ``fail=True``: one that
    fails after its first statements."""
    def add(*, fail: bool = False) -> str:
        folder = tmp_path / "later_versions"
        folder.mkdir(exist_ok=True)
        (folder / "9001_later.py").write_text(textwrap.dedent(LATER).format(
            revision="9001", down=HEAD,
            fail='raise RuntimeError("a bug in the revision")' if fail else ""))
        monkeypatch.setattr(schema, "VERSION_LOCATIONS", (*schema.VERSION_LOCATIONS, str(folder)))
        assert schema.head() == "9001"
        return "9001"
    return add


def _an_order_at_head(url: str) -> None:
    connect(url).dispose()
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO checkout_orders (order_id, status, status_source, refreshed_at, version, "
            "fetch_seq, fetch_attempts, created_at) VALUES ('ord_l', 'deposit_awaiting', 'webhook', "
            "CURRENT_TIMESTAMP, 1, 0, 0, CURRENT_TIMESTAMP)"))
    engine.dispose()


def test_a_later_revision_is_applied_at_start_up(db_config, database_url, later_revision):
    _an_order_at_head(database_url)
    later = later_revision()
    make_app(dict(db_config))
    assert recorded(database_url) == later
    engine = create_engine(database_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT note FROM checkout_orders")).scalar_one() \
            == "was deposit_awaiting"
    engine.dispose()
    assert "checkout_demo" in table_names(database_url)


def test_a_later_revision_by_the_command(db_config, database_url, later_revision):
    _an_order_at_head(database_url)
    later = later_revision()
    db_config["CHECKOUT_DATABASE_AUTO_UPGRADE"] = False
    with pytest.raises(SchemaBehind, match=f"is at revision {HEAD}; this release needs {later}"):
        make_app(dict(db_config))
    flask = flask_cli(db_config)
    assert flask("checkout", "db", "current").output.startswith(f"{HEAD}: behind")
    history = [line.split()[0] for line in flask("checkout", "db", "history").output.splitlines()]
    assert history[:2] == [later, HEAD] and history[-1] == "0001"
    result = flask("checkout", "db", "upgrade")
    assert result.output.strip() == \
        f"upgraded the checkout's database from {HEAD} to {later} (head)"
    make_app(dict(db_config))                       # starts now
    back = flask("checkout", "db", "upgrade", HEAD)
    assert back.exit_code == 1 and "downgrades are not supported" in back.output


def test_upgrading_to_a_named_revision_stops_there(db_config, database_url, later_revision):
    later_revision()
    result = flask_cli(db_config)("checkout", "db", "upgrade", HEAD)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"upgraded the checkout's database from none to {HEAD}"
    assert recorded(database_url) == HEAD


def test_a_revision_that_fails_leaves_the_database_as_it_was(db_config, database_url,
                                                             later_revision):
    """The whole upgrade is one transaction, on SQLite too: nothing half done."""
    _an_order_at_head(database_url)
    before = snapshot(database_url)
    later_revision(fail=True)
    with pytest.raises(RuntimeError, match="a bug in the revision"):
        make_app(dict(db_config))
    assert recorded(database_url) == HEAD
    assert snapshot(database_url) == before
    assert "checkout_demo" not in table_names(database_url)


def test_a_missing_column_that_rows_cannot_take_stops_the_upgrade_by_name(tmp_path):
    """Adopting a database whose table lacks a NOT NULL column without a default: no value is
    guessed for its rows."""
    url = f"sqlite:///{tmp_path}/odd.sqlite3"
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE checkout_order_watch (order_id VARCHAR(128) PRIMARY KEY)"))
    engine.dispose()
    with pytest.raises(RuntimeError, match="checkout_order_watch.flow"):
        connect(url)
    assert recorded(url) is None


def test_schema_errors_are_checkout_errors():
    from checkout.errors import CheckoutError

    assert issubclass(SchemaBehind, SchemaError) and issubclass(SchemaAhead, SchemaError)
    assert issubclass(SchemaError, CheckoutError)


@pytest.mark.parametrize("release", [OLDER])
def test_gunicorn_workers_booting_together_on_a_previous_releases_database(
        release, database_url, tmp_path):
    """Three workers load the app at once on a database that needs an upgrade: all start (one
    upgrades, the others wait on the lock), and the rows are all there."""
    import requests

    from .gunicorn_support import gunicorn_workers

    load(release, database_url)
    before = snapshot(database_url)
    env = {"CHECKOUT_TEST_DATABASE_URL": database_url,
           "CHECKOUT_TEST_SIGNAL_LOG": str(tmp_path / "signals.log")}
    with gunicorn_workers("tests.webhooks.gunicorn_app:create()", env, tmp_path, workers=3,
                          access_format="%(p)s %(s)s") as (port, _access_log):
        answer = requests.get(f"http://127.0.0.1:{port}/checkout/onramp", timeout=20,
                              allow_redirects=False)
        assert answer.status_code == 303
    assert recorded(database_url) == HEAD
    after = snapshot(database_url)
    for name, rows in before.items():                 # all kept (and one session more)
        kept = [{column: row[column] for column in rows[0]} for row in after[name]] if rows else []
        assert [row for row in kept if row in rows] == rows, f"{name} changed in the upgrade"
    assert len(after["checkout_sessions"]) == len(before["checkout_sessions"]) + 1


def test_the_hosts_own_broken_foreign_keys_do_not_stop_an_sqlite_upgrade(config, tmp_path):
    # SQLite leaves foreign keys off by default: a host's table in the same file may well hold a
    # row whose parent is gone. Only the checkout's own tables are checked after an upgrade.
    url = f"sqlite:///{tmp_path}/shared.sqlite3"
    load(PREVIOUS, url)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE shop_parent (id INTEGER PRIMARY KEY)"))
        conn.execute(text("CREATE TABLE shop_child (id INTEGER PRIMARY KEY, "
                          "parent_id INTEGER REFERENCES shop_parent (id))"))
        conn.execute(text("INSERT INTO shop_child (id, parent_id) VALUES (1, 42)"))
    engine.dispose()
    config.update(CHECKOUT_DATABASE_URL=url, CHECKOUT_WEBHOOK_BACKGROUND=False)
    make_app(dict(config))
    assert recorded(url) == HEAD
    engine = create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT parent_id FROM shop_child")).scalar_one() == 42
    engine.dispose()
