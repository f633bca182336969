"""Shared fixtures: an app built from a config mapping, its client, a real PostgreSQL and a real
Redis."""
from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest
from flask import Flask
from hypothesis import settings

from checkout import Checkout
from checkout.store import availability, make_engine
from checkout.store.schema import prepare

from . import postgres, redis_server
from .support import compiled_routes
from .support.compiled_templates import COMPILED
from .support.sandbox_clock import MANUAL

# Tests check behaviour, never timings: Hypothesis's per-example deadline (200 ms) only measures
# how loaded the machine is, and parallel workers load it.
settings.register_profile("checkout", deadline=None)
settings.load_profile("checkout")

# Every app of the test process (each test builds its own, and its sandbox another) finds the
# templates another app compiled already (tests/support/compiled_templates.py).
Flask.jinja_options = {**Flask.jinja_options, "bytecode_cache": COMPILED}
# And its routes' URL builders (tests/support/compiled_routes.py).
compiled_routes.install()


def make_app(config: dict) -> Flask:
    app = Flask("host_site", instance_path=config.pop("_instance_path", None))
    app.config.update(config)
    Checkout(app)
    return app


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite file at the schema's head, built once per run (per worker): each test's database
    starts as a copy of it, in a hundredth of the time its own migration would take."""
    path = tmp_path_factory.mktemp("migrated") / "checkout.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    try:
        prepare(engine, auto_upgrade=True)
    finally:
        engine.dispose()
    return path


@pytest.fixture
def config(tmp_path, migrated_sqlite) -> dict:
    """Settings of a host site on the embedded sandbox; tests override keys before ``app``. The
    database is a copy of the migrated template (start-up finds it at head and leaves it)."""
    shutil.copyfile(migrated_sqlite, tmp_path / "checkout.sqlite3")
    return {
        "TESTING": True,
        "SERVER_NAME": "shop.test",
        "CHECKOUT_DATABASE_URL": f"sqlite:///{tmp_path}/checkout.sqlite3",
        "CHECKOUT_FRAME_ANCESTORS": ["https://shop.test"],
        # One pace for every test: the sandbox's manual clock, moved forward by the test
        # (tests.support.sandbox_clock.advance) where it needs the upstream's minutes to pass.
        "CHECKOUT_SANDBOX": dict(MANUAL),
        "_instance_path": str(tmp_path / "instance"),
    }


@pytest.fixture
def app(config) -> Flask:
    return make_app(dict(config))


@pytest.fixture(scope="session")
def postgres_cluster():
    with postgres.cluster() as url:
        yield url
        _stop_dispatchers()


def _stop_dispatchers() -> None:
    """Before the cluster stops: the webhook dispatchers of apps still alive at the end of the run
    would sweep databases that are gone, logging a failure each time."""
    from checkout.webhooks.background import Dispatcher

    for found in gc.get_objects():
        # type(), not isinstance(): a weak proxy among them whose object is gone raises on
        # isinstance (ReferenceError), and a Dispatcher is never subclassed.
        if type(found) is Dispatcher:
            found.stop(timeout=2)


@pytest.fixture
def postgres_url(postgres_cluster) -> str:
    """URL of a new empty database on the run's PostgreSQL cluster."""
    return postgres.fresh_database(postgres_cluster)


@pytest.fixture(scope="session")
def redis():
    """The run's throw-away Redis server (``.url``); tests use their own database number or
    clear what they wrote."""
    with redis_server.server() as server:
        yield server


@pytest.fixture(autouse=True)
def no_database_time_outlives_its_request():
    """A request's time for the database (checkout.store.availability) ends with it, also when it
    is served inside another request of the same app (they share its ``g``): left set, every
    later database wait of the thread would find no time left (a test's other tab, racing)."""
    yield
    assert availability.remaining() is None, "a request's time for the database outlived it"
