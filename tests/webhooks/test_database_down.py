"""The database down: 503, so the sender retries; a later redelivery is stored; nothing is lost."""
from __future__ import annotations

import pytest

from ..conftest import make_app
from .conftest import Receiver
from .helpers import Recorder, history, signed_webhook
from .pgcluster import StoppableCluster


@pytest.fixture
def cluster():
    pg = StoppableCluster()
    pg.start()
    yield pg
    pg.remove()


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
        app.extensions["checkout"].engine.dispose()
