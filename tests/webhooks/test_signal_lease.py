"""The lease of a batch of claimed signals, while its worker lives: each signal marked sent renews
the lease of the batch's signals still to send, so slow receivers never let another worker take
them; a receiver slower than the whole lease loses the rest of its batch to another worker, which
sends them, and its own worker then leaves them alone. Either way a signal whose receiver has
returned is never sent again; only the one in flight can be. Time is a clock the test moves."""
from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import select

from checkout.signals import order_status_changed
from checkout.webhooks.dispatch import dispatch_signals
from checkout.webhooks.processing import process_stored_events
from checkout.webhooks.store import signal_log_table, utcnow

from ..conftest import make_app
from ..support.waiting import wait_for
from .conftest import Receiver
from .helpers import order_payload, signed_webhook

LEASE = 300
ORDERS = ["ord_0", "ord_1", "ord_2"]


class Clock:
    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self):
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class SlowReceiver:
    """``order_status_changed`` receivers that, in the first worker's thread, start and wait for
    the test to let them return (one ``let_return`` each); in any other thread they return at
    once. Records each receiver that returned, with its worker."""

    def __init__(self, app) -> None:
        self.app = app
        self.engine = app.extensions["checkout"].engine
        self.started: list[str] = []
        self.returned: list[tuple[str, str]] = []
        self._go = threading.Semaphore(0)
        self._first = ThreadPoolExecutor(1, thread_name_prefix="first")
        order_status_changed.connect(self._receive, sender=app, weak=False)

    def _receive(self, _sender, *, order_id: str, **_details) -> None:
        worker = threading.current_thread().name.split("_")[0]
        if worker == "first":
            self.started.append(order_id)
            assert self._go.acquire(timeout=30)
        self.returned.append((worker, order_id))

    def let_return(self) -> None:
        self._go.release()

    def start_first_worker(self, clock: Clock) -> Future[int]:
        return self._first.submit(dispatch_signals, self.app, self.engine, clock=clock)

    def close(self) -> None:
        for _ in range(len(ORDERS)):
            self.let_return()               # a failed test's worker is not left waiting
        self._first.shutdown()
        order_status_changed.disconnect(self._receive, sender=self.app)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def slow(request, webhook_config):
    """Three signals owed (not sent), and the receiver."""
    if request.param == "postgresql":
        webhook_config["CHECKOUT_DATABASE_URL"] = request.getfixturevalue("postgres_url")
    webhook_config["CHECKOUT_SIGNAL_LEASE"] = LEASE
    app = make_app(dict(webhook_config))
    web = Receiver(app)
    for order_id in ORDERS:
        assert web.post(signed_webhook(order_payload(order_id, "payout_successful"))
                        ).status_code == 200
    assert process_stored_events(app, app.extensions["checkout"].engine) == len(ORDERS)
    receiver = SlowReceiver(app)
    yield receiver
    receiver.close()
    app.extensions["checkout"].close()


def _states(engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(signal_log_table.c.state)).scalars())


def test_slow_receivers_keep_their_batch_while_their_worker_lives(slow):
    clock = Clock()
    first = slow.start_first_worker(clock)
    wait_for(lambda: slow.started == ORDERS[:1])
    clock.advance(0.6 * LEASE)
    slow.let_return()                       # the first returns 0.6 lease after the claim
    wait_for(lambda: slow.started == ORDERS[:2])
    clock.advance(0.6 * LEASE)              # 1.2 leases after the claim
    # Another worker finds nothing to take: each mark renewed the rest of the batch's lease.
    assert dispatch_signals(slow.app, slow.engine, clock=clock) == 0
    slow.let_return()
    slow.let_return()
    assert first.result(timeout=30) == 3 + 3       # the webhook_received signals first
    assert slow.returned == [("first", order_id) for order_id in ORDERS]     # each once
    assert _states(slow.engine) == {"dispatched"}


def test_a_receiver_slower_than_the_lease_loses_the_rest_of_its_batch(slow):
    clock = Clock()
    first = slow.start_first_worker(clock)
    wait_for(lambda: slow.started == ORDERS[:1])
    clock.advance(1.1 * LEASE)
    # The lease is over: another worker takes the batch, and sends it (the one in flight too:
    # its receiver has not returned).
    assert dispatch_signals(slow.app, slow.engine, clock=clock) == 3
    slow.let_return()
    # The first worker sent the one in flight, and left the rest to the other.
    assert first.result(timeout=30) == 3 + 1       # the webhook_received signals first
    assert Counter(order_id for _, order_id in slow.returned) == \
        Counter({"ord_0": 2, "ord_1": 1, "ord_2": 1})
    assert _states(slow.engine) == {"dispatched"}
