"""The database down: 503, so the sender retries; a later redelivery is stored; nothing is lost."""
from __future__ import annotations

import pytest

from checkout import store

from .. import postgres
from ..conftest import make_app
from .conftest import Receiver
from .helpers import Recorder, history, signed_webhook


@pytest.fixture(scope="module")
def stoppable():
    """The module's own cluster, which its tests stop and start again (booted once)."""
    made = postgres.Cluster()
    made.start()
    yield made
    made.remove()


@pytest.fixture
def cluster(stoppable):
    """The module's cluster, started (whatever a test before left it as), and a database of this
    test's own on it (``.url``)."""
    if not stoppable.running():
        stoppable.start()
    stoppable.url = postgres.fresh_database(stoppable.url)
    return stoppable


@pytest.mark.postgres
def test_database_down_answers_503_and_a_redelivery_succeeds(webhook_config, cluster):
    webhook_config["CHECKOUT_DATABASE_URL"] = cluster.url
    app = make_app(dict(webhook_config))
    recorder = Recorder(app)
    receiver = Receiver(app)
    first, second = (signed_webhook(p) for p in history("ord_1", ["deposit_awaiting",
                                                                 "deposit_successful"]))
    try:
        assert receiver.post(first).status_code == 200
        cluster.stop()
        for _ in range(2):
            response = receiver.post(second)
            assert response.status_code == 503
            assert response.headers["Retry-After"]
            assert "received" not in response.json
        cluster.start()
        again = receiver.post(second)
        assert again.status_code == 200 and again.json["duplicate"] is False
        receiver.process()
        assert recorder.statuses() == [("ord_1", "deposit_awaiting"),
                                       ("ord_1", "deposit_successful")]
        assert len(recorder.of("webhook_received")) == 2
    finally:
        recorder.disconnect()
        app.extensions["checkout"].close()


@pytest.mark.postgres
@pytest.mark.parametrize("idle_for_a_ping", [0.0, 3600.0])
def test_a_restart_between_deliveries(webhook_config, cluster, monkeypatch, idle_for_a_ping):
    """A pooled connection is pinged before use only after PING_AFTER_IDLE seconds of rest (not
    at every checkout: that was a round trip per acknowledgement). Idle long enough, the dead
    connection is replaced unseen; used again at once, its statement fails (503, the sender
    retries) and SQLAlchemy renews the pool, so the retry is stored."""
    monkeypatch.setattr(store, "PING_AFTER_IDLE", idle_for_a_ping)
    webhook_config["CHECKOUT_DATABASE_URL"] = cluster.url
    app = make_app(dict(webhook_config))
    receiver = Receiver(app)
    first, second = (signed_webhook(p) for p in history("ord_1", ["deposit_awaiting",
                                                                 "deposit_successful"]))
    try:
        assert receiver.post(first).status_code == 200
        cluster.stop()
        cluster.start()
        if idle_for_a_ping:
            assert receiver.post(second).status_code == 503
        assert receiver.post(second).json["duplicate"] is False
        assert receiver.count_events() == 2
    finally:
        app.extensions["checkout"].close()
