"""The sessions store: its schema on a table deployed before the creation claim had an owner, and
the compare-and-sets the flow rests on, on both databases."""
from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect, text

from checkout.sessions import SessionStore
from checkout.store.schema import connect
from checkout.store.tables import sessions_table


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
    engine = connect(database_url)          # what Checkout(app) does at start-up
    assert "creating_owner" in {c["name"] for c in inspect(engine).get_columns("checkout_sessions")}
    store = SessionStore(engine)
    session = store.create("onramp")
    assert store.get(session.id).creating_owner is None
    connect(database_url)                   # a second start finds the column and leaves it be
    assert store.attach_order(session.id, "order-1") == "order-1"


# -- The guarantees the flow rests on, on both databases, under real concurrency ------------------

@pytest.fixture
def store(database_url) -> SessionStore:
    from checkout.store.schema import connect

    return SessionStore(connect(database_url))


def _together(n: int, work):
    """Run ``work(i)`` in ``n`` threads released at the same moment; their results."""
    import threading

    barrier = threading.Barrier(n)
    results: list = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_one_token_opens_one_session_even_when_presented_at_once(store):
    sessions = _together(8, lambda _i: store.create("onramp", claims={"network": "CELO"},
                                                     jti="token-jti-1"))
    assert len({s.id for s in sessions}) == 1
    assert store.get_by_jti("token-jti-1").claims == {"network": "CELO"}


def test_exactly_one_request_writes_its_attempt_over_a_version(store):
    """The order's creation claims the session by saving its pending attempt over the version it
    read: of requests that read the same version, exactly one saves, however they interleave."""
    from checkout.errors import SessionConflict

    session = store.create("onramp")
    read = [store.get(session.id) for _ in range(8)]

    def attempt(i: int) -> bool:
        read[i].pending = {"at": i}
        try:
            store.save(read[i])
        except SessionConflict:
            return False
        return True

    assert sum(_together(8, attempt)) == 1
    assert store.attach_order(session.id, "order-1") == "order-1"
    # An order attached is never replaced.
    assert store.attach_order(session.id, "order-2") == "order-1"
    assert store.get_by_order("order-1").id == session.id


def test_a_save_over_a_newer_version_is_refused(store):
    from checkout.errors import SessionConflict

    session = store.create("onramp")
    first, second = store.get(session.id), store.get(session.id)
    first.answer({"address": "0xfirst"})
    store.save(first)
    second.answer({"address": "0xsecond"})
    with pytest.raises(SessionConflict):
        store.save(second)
    assert store.get(session.id).answers["address"] == "0xfirst"
