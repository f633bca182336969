"""The sessions store: its schema on a table deployed before the creation claim had an owner."""
from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect, text

from checkout.sessions import SessionStore, sessions_table


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/old.sqlite3"
    return request.getfixturevalue("postgres_url")


def test_a_table_from_before_the_owned_claim_gets_its_owner_column(database_url):
    engine = create_engine(database_url)
    old_columns = [c for c in sessions_table.columns if c.name != "creating_owner"]
    with engine.begin() as conn:
        conn.execute(text(
            "CREATE TABLE checkout_sessions ("
            + ", ".join(f"{c.name} {c.type.compile(engine.dialect)}" for c in old_columns)
            + ", PRIMARY KEY (id))"))
    store = SessionStore(engine)
    assert "creating_owner" in {c["name"] for c in inspect(engine).get_columns("checkout_sessions")}
    session = store.create("onramp")
    owner = store.claim_order_creation(session.id)
    assert owner and store.get(session.id).creating_owner == owner
    SessionStore(engine)                    # a second start finds the column and leaves it be
    assert store.release_order_creation(session.id, "not-the-owner") is False
    assert store.release_order_creation(session.id, owner) is True
