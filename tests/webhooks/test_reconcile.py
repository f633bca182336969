"""No order stuck in a non-final status: the reconciler asks the upstream about orders whose webhooks
were lost, and stores what it learns as a status page's refresh does (same ordering, same
once-only signals)."""
from __future__ import annotations

import re
import threading
from datetime import timedelta

import pytest
from sqlalchemy import select

from checkout import order_status
from checkout.pacing import CallBudget, Schedule
from checkout.signals import order_status_changed
from checkout.store.tables import sessions_table
from checkout.webhooks.reconcile import Pass
from checkout.webhooks.store import signal_log_table, utcnow, watch_table

from ..conftest import make_app
from ..support.sandbox_clock import MANUAL, advance
from ..support.waiting import wait_for
from .conftest import Receiver
from .helpers import (
    T0,
    FakeUpstream,
    Recorder,
    iso,
    order_payload,
    signed_webhook,
    use_upstream,
)

CELO_ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
KE_PHONE = "254110611756"


def reconcile(app, **pass_options) -> Pass:
    """One pass of ``app``'s reconciler, as ``flask checkout orders reconcile`` runs it."""
    return app.extensions["checkout"].reconciler.run(**pass_options)


def maybe_reconcile(app) -> Pass | None:
    """The pass ``app``'s dispatcher thread makes, when one is due."""
    return app.extensions["checkout"].reconciler.maybe_run()


def _watch(app, order_id: str):
    with app.extensions["checkout"].engine.connect() as conn:
        return conn.execute(select(watch_table)
                            .where(watch_table.c.order_id == order_id)).first()


def _session_with_order(app, flow: str, order_id: str) -> None:
    sessions = app.extensions["checkout"].sessions
    assert sessions.attach_order(sessions.create(flow).id, order_id) == order_id


def test_every_webhook_lost_and_each_order_still_settles_with_each_signal_once(config):
    # The sandbox sends no webhook at all; the dispatcher threads' reconciler is the only way the
    # checkout learns anything. The sandbox's orders settle once the test moves its clock.
    config.update(CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.05, CHECKOUT_RECONCILE_AFTER=0.05,
                  CHECKOUT_RECONCILE_MAX_BACKOFF=0.2, CHECKOUT_RECONCILE_PER_MINUTE=100_000,
                  CHECKOUT_STATUS_MAX_AGE=3600,
                  CHECKOUT_SANDBOX={**MANUAL, "SANDBOX_WEBHOOK_EVENTS": []})
    app = make_app(dict(config))
    recorder = Recorder(app)
    state = app.extensions["checkout"]
    upstream = state.upstream
    orders: dict[str, str] = {}
    try:
        for n in range(2):
            quote = upstream.onramp_best_offer(
                network="CELO", asset="USDC", currency="local", amount=5000,
                country_iso_code="NG", payment_channel="bank")
            order = upstream.onramp_create_order(
                quote_id=quote.quote_id, network="CELO", asset="USDC", amount=5000,
                currency="local", email="ada@example.com", user_ip="203.0.113.7",
                address=CELO_ADDRESS, order_params=f"cart-on-{n}")
            _session_with_order(app, "onramp", order.id)
            upstream.onramp_confirm_order(order_id=order.id)
            orders[order.id] = "onramp"
        for n in range(2):
            offer = upstream.offramp_typed_best_offer(
                amount=10, currency="usd", country="KE", type="mobile_money", network="CELO",
                asset="USDT")
            order = upstream.offramp_create_order(
                offer_id=offer.offer_id, payment_type="CRYPTO_WALLET", network="CELO",
                asset="USDT", address=CELO_ADDRESS, currency="usd", amount=10, ip="203.0.113.9",
                order_params=f"cart-off-{n}", required_fields={"phoneNumber": KE_PHONE})
            _session_with_order(app, "offramp", order.id)
            upstream.offramp_confirm_order(order_id=order.id, hash="0x" + f"{n + 1:02x}" * 32)
            orders[order.id] = "offramp"

        advance(app, 600)                   # the orders' lives, no webhook sent
        state.dispatcher.ensure_running()
        settled = {"onramp": {"payout_successful", "refund_successful", "deposit_invalid"},
                   "offramp": {"payout_successful", "refund_successful"}}

        def all_settled() -> bool:
            signalled = dict(recorder.statuses())      # the last signalled status of each order
            return all(signalled.get(order_id) in settled[flow]
                       for order_id, flow in orders.items())

        wait_for(all_settled, timeout=30)
        for order_id, flow in orders.items():
            stored = order_status.get(state.engine, order_id)
            assert stored is not None and stored.status in settled[flow]
            assert stored.source == "upstream"
            assert _watch(app, order_id) is None        # settled: no longer watched
        assert {s for _o, s in recorder.statuses()} & {"payout_successful"}
        state.dispatcher.stop()
        counts = recorder.status_counts()
        assert counts and set(counts.values()) == {1}   # each (order, status) signalled once
        assert Receiver(app).count_events() == 0        # not one webhook arrived
    finally:
        state.dispatcher.stop()
        recorder.disconnect()


def _offramp(order_id: str, status: str, seconds: int) -> dict:
    return {"id": order_id, "status": status, "updatedAt": iso(T0 + timedelta(seconds=seconds))}


def test_a_late_webhook_after_the_reconciler_changes_nothing(app, receiver, recorder,
                                                              fake_upstream):
    _session_with_order(app, "offramp", "ord_late")
    fake_upstream.orders["ord_late"] = _offramp("ord_late", "transaction_confirmed", 20)
    done = reconcile(app, older_than=0)
    assert [(c.before, c.after) for c in done.checks] == [(None, "deposit_successful")]
    receiver.process()
    assert recorder.statuses() == [("ord_late", "deposit_successful")]

    # The lost webhooks turn up late: older than what the reconciler stored.
    for status, seconds in (("deposit_awaiting", 7), ("deposit_successful", 14)):
        receiver.post(signed_webhook(order_payload(
            "ord_late", status, order_type="off_ramp",
            updated_at=T0 + timedelta(seconds=seconds))))
    receiver.process()
    assert order_status.get(app.extensions["checkout"].engine, "ord_late").status == \
        "deposit_successful"
    assert recorder.statuses() == [("ord_late", "deposit_successful")]

    # A newer one moves it on, once.
    receiver.post(signed_webhook(order_payload(
        "ord_late", "payout_successful", order_type="off_ramp",
        updated_at=T0 + timedelta(seconds=30))))
    receiver.process()
    assert recorder.statuses() == [("ord_late", "deposit_successful"),
                                   ("ord_late", "payout_successful")]
    calls = len(fake_upstream.calls)
    assert reconcile(app, older_than=0).checks == []     # settled: not asked again
    assert len(fake_upstream.calls) == calls and _watch(app, "ord_late") is None


def test_the_reconciler_seeing_an_older_picture_than_a_webhook_changes_nothing(
        app, receiver, recorder, fake_upstream):
    _session_with_order(app, "offramp", "ord_old")
    receiver.post(signed_webhook(order_payload(
        "ord_old", "deposit_successful", order_type="off_ramp",
        updated_at=T0 + timedelta(seconds=20))))
    receiver.process()
    # The upstream answers with a picture older than the webhook (a lagging replica).
    fake_upstream.orders["ord_old"] = _offramp("ord_old", "validating_transaction", 10)
    done = reconcile(app, older_than=0)
    assert [(c.before, c.after, c.moved) for c in done.checks] == \
        [("deposit_successful", "deposit_successful", False)]
    receiver.process()
    assert recorder.statuses() == [("ord_old", "deposit_successful")]
    # The same status from the upstream, newer: no second signal either.
    fake_upstream.orders["ord_old"] = _offramp("ord_old", "transaction_confirmed", 25)
    reconcile(app, older_than=0, now=utcnow() + timedelta(hours=2))
    receiver.process()
    assert recorder.statuses() == [("ord_old", "deposit_successful")]


def test_failures_back_off_exponentially_up_to_the_cap(app, receiver, recorder, fake_upstream,
                                                       caplog):
    app.config.update(CHECKOUT_RECONCILE_AFTER=10, CHECKOUT_RECONCILE_MAX_BACKOFF=35)
    _session_with_order(app, "onramp", "ord_down")
    start = utcnow()
    assert reconcile(app, now=start + timedelta(seconds=5)).checks == []   # not quiet long enough
    fake_upstream.failures = 1                      # a 503, then a 404 (not known upstream yet)
    at = start + timedelta(seconds=11)
    done = reconcile(app, now=at)
    assert [c.error is not None for c in done.checks] == [True]
    assert _watch(app, "ord_down").quiet_checks == 1
    assert reconcile(app, now=at + timedelta(seconds=19)).checks == []     # 10 x 2 = 20 s
    at += timedelta(seconds=20)
    assert [c.error for c in reconcile(app, now=at).checks][0].startswith("OrderNotAvailable")
    assert reconcile(app, now=at + timedelta(seconds=34)).checks == []     # 40 s, capped at 35
    fake_upstream.orders["ord_down"] = {"id": "ord_down", "status": "complete"}
    at += timedelta(seconds=35)
    assert [(c.after, c.settled) for c in reconcile(app, now=at).checks] == \
        [("payout_successful", True)]
    assert len(fake_upstream.calls) == 3 and _watch(app, "ord_down") is None
    assert reconcile(app, now=at + timedelta(days=1)).checks == []
    receiver.process()
    assert recorder.statuses() == [("ord_down", "payout_successful")]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "ord_down" in logged
    sessions = app.extensions["checkout"].sessions
    assert sessions.get_by_order("ord_down").id not in logged            # no session id in logs


def test_calls_per_minute_are_bounded_per_process(app, fake_upstream):
    app.config.update(CHECKOUT_RECONCILE_PER_MINUTE=2)
    for n in range(3):
        _session_with_order(app, "onramp", f"ord_{n}")
        fake_upstream.orders[f"ord_{n}"] = {"id": f"ord_{n}", "status": "pending"}
    at = utcnow() + timedelta(seconds=400)
    first = reconcile(app, now=at)
    assert len(first.checks) == 2 and first.budget_spent and len(fake_upstream.calls) == 2
    assert reconcile(app, now=at + timedelta(seconds=59)).checks == []
    assert len(fake_upstream.calls) == 2
    # A minute later the last order is asked; the other two wait for their next check (300 s).
    later = reconcile(app, now=at + timedelta(seconds=61))
    assert [c.order_id for c in later.checks] == ["ord_2"] and len(fake_upstream.calls) == 3


def test_call_budget_is_a_sliding_minute():
    budget = CallBudget()
    assert [budget.take(2, t) for t in (0.0, 1.0, 2.0, 59.9, 60.0, 61.0, 61.5)] == \
        [True, True, False, False, True, True, False]


def assert_a_second_worker_makes_no_call(app, config, upstream, order_id: str) -> list:
    """While ``app`` asks about ``order_id``, a second app on the same database runs its own
    pass: it must find the order claimed and ask nothing. Returns the first app's checks."""
    other = make_app(dict(config))
    other_upstream = FakeUpstream()
    use_upstream(other, other_upstream)
    _session_with_order(app, "onramp", order_id)
    upstream.orders[order_id] = {"id": order_id, "status": "pending"}
    seen_by_other: list = []
    upstream.during_fetch = lambda: seen_by_other.append(reconcile(other, older_than=0))
    checks = reconcile(app, older_than=0).checks
    assert seen_by_other[0].checks == [] and other_upstream.calls == []
    return checks


def test_two_workers_do_not_ask_about_the_same_order(webhook_config, fake_upstream, app):
    checks = assert_a_second_worker_makes_no_call(app, webhook_config, fake_upstream,
                                                  "ord_shared")
    assert len(checks) == 1


def test_the_cli_checks_due_orders_once_and_sends_the_signals(app, recorder, fake_upstream):
    _session_with_order(app, "offramp", "ord_cli")
    fake_upstream.orders["ord_cli"] = _offramp("ord_cli", "offramp_success", 40)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["checkout", "orders", "reconcile"])
    assert result.exit_code == 0, result.output
    assert "0 order(s) checked" in result.output          # not quiet for 300 s yet
    result = runner.invoke(args=["checkout", "orders", "reconcile", "--older-than", "0"])
    assert result.exit_code == 0, result.output
    assert "ord_cli  offramp  - -> payout_successful  settled" in result.output
    assert "1 order(s) checked, 1 moved, 0 failed, 1 signal(s) sent" in result.output
    assert recorder.statuses() == [("ord_cli", "payout_successful")]
    again = runner.invoke(args=["checkout", "orders", "reconcile", "--older-than", "0"])
    assert "0 order(s) checked" in again.output and recorder.statuses() == \
        [("ord_cli", "payout_successful")]


def test_the_cli_lists_the_orders_in_back_off_with_when_each_is_due_and_now_asks_them(
        app, recorder, fake_upstream):
    # Orders the upstream does not know yet (a 404 each): a background pass asked about them
    # and backs off. The operator then runs the command.
    app.config.update(CHECKOUT_RECONCILE_AFTER=300, CHECKOUT_RECONCILE_MAX_BACKOFF=3600)
    orders = [f"ord_wait_{n}" for n in range(3)]
    for order_id in orders:
        _session_with_order(app, "onramp", order_id)
    passed = utcnow() + timedelta(seconds=301)
    assert len(reconcile(app, now=passed).checks) == 3         # 404s: next check 600 s later
    runner = app.test_cli_runner()
    result = runner.invoke(args=["checkout", "orders", "reconcile", "--older-than", "0"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "0 order(s) checked, 0 moved, 0 failed, 0 signal(s) sent"
    assert lines[1] == "3 order(s) not settled and not checked now (--now asks about them all):"
    for order_id in orders:
        due = _watch(app, order_id).next_check_at
        (line,) = [line for line in lines if order_id in line]
        assert f"onramp   due {due:%Y-%m-%d %H:%M:%S} UTC  in 15 minutes: backing off after " \
               f"1 check(s) that learned nothing" in line
    assert len(fake_upstream.calls) == 3

    # An order heard of lately waits for --older-than (the default here: 300 s), said so.
    _session_with_order(app, "offramp", "ord_fresh")
    fresh = runner.invoke(args=["checkout", "orders", "reconcile"]).output
    assert "4 order(s) not settled and not checked now" in fresh
    (line,) = [line for line in fresh.splitlines() if "ord_fresh" in line]
    assert re.search(r"ord_fresh +offramp  due .* UTC  in [45] minutes: status known current "
                     r"\d+ seconds? ago", line), line

    # --now asks about every one of them at once, whatever its back-off.
    fake_upstream.orders["ord_wait_0"] = {"id": "ord_wait_0", "status": "complete"}
    now = runner.invoke(args=["checkout", "orders", "reconcile", "--now"])
    assert now.exit_code == 0, now.output
    assert "4 order(s) checked, 1 moved, 3 failed, 1 signal(s) sent" in now.output
    assert "not checked now" not in now.output
    assert sorted(fake_upstream.calls[3:]) == ["ord_fresh", *orders]
    assert recorder.statuses() == [("ord_wait_0", "payout_successful")]


def test_now_never_takes_an_order_whose_check_is_under_way(webhook_config, fake_upstream, app):
    assert_now_takes_an_order_resting_in_back_off_once(app, webhook_config, fake_upstream)


@pytest.mark.postgres
def test_on_postgresql_now_never_takes_an_order_whose_check_is_under_way(webhook_config,
                                                                        postgres_url):
    webhook_config["CHECKOUT_DATABASE_URL"] = postgres_url
    app = make_app(dict(webhook_config))
    fake = FakeUpstream()
    use_upstream(app, fake)
    try:
        assert_now_takes_an_order_resting_in_back_off_once(app, webhook_config, fake)
    finally:
        app.extensions["checkout"].close()


def assert_now_takes_an_order_resting_in_back_off_once(app, config, fake_upstream) -> None:
    """Two operators run --now at once (or one does while a background pass asks): an order
    resting in its back-off is asked about once."""
    app.config.update(CHECKOUT_RECONCILE_AFTER=300)
    other = make_app(dict(config))
    other_upstream = FakeUpstream()
    use_upstream(other, other_upstream)
    _session_with_order(app, "onramp", "ord_twice")
    reconcile(app, now=utcnow() + timedelta(seconds=301))        # a 404: backing off
    assert reconcile(app, older_than=0).checks == []
    seen_by_other: list = []
    fake_upstream.during_fetch = lambda: seen_by_other.append(
        (reconcile(other, older_than=0, ignore_backoff=True),
         other.extensions["checkout"].reconciler.outlook(older_than=0)))
    checks = reconcile(app, older_than=0, ignore_backoff=True).checks
    assert [c.order_id for c in checks] == ["ord_twice"]
    (other_pass, other_outlook), = seen_by_other
    assert other_pass.checks == [] and other_upstream.calls == []
    assert [(o.order_id, o.checking) for o in other_outlook] == [("ord_twice", True)]
    assert len(fake_upstream.calls) == 2
    assert _watch(app, "ord_twice").last_checked_at is not None     # the check has ended


def test_the_cli_counts_the_signals_the_dispatcher_thread_sent_for_it(config):
    # The dispatcher thread runs (the default): a status move wakes it, and it sends signals
    # the command owed before the command gets to them.
    config.update(CHECKOUT_WEBHOOK_FETCH_ORDERS=False, CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.05)
    app = make_app(dict(config))
    state = app.extensions["checkout"]
    fake = FakeUpstream()
    use_upstream(app, fake)
    heard: list[tuple[str, str]] = []
    done = threading.Event()

    def slow_receiver(sender, order_id, status, **extra):
        if threading.current_thread() is not threading.main_thread():
            # Merchant code that takes a while, on the thread: until the command has asked
            # the upstream for every order.
            done.wait(10)
        heard.append((order_id, status))

    order_status_changed.connect(slow_receiver, sender=app, weak=False)

    def first_taken_by_the_thread() -> None:
        # Fetches after the first wait until the thread has claimed the first one's signal.
        if len(fake.calls) > 1:
            wait_for(lambda: _signal_state(app, "ord_cli_0") != "pending")
        if len(fake.calls) == 3:
            done.set()

    fake.during_fetch = first_taken_by_the_thread
    try:
        for n in range(3):
            _session_with_order(app, "offramp", f"ord_cli_{n}")
            fake.orders[f"ord_cli_{n}"] = _offramp(f"ord_cli_{n}", "offramp_success", 40 + n)
        result = app.test_cli_runner().invoke(args=["checkout", "orders", "reconcile",
                                                    "--older-than", "0"])
        assert result.exit_code == 0, result.output
        assert "3 order(s) checked, 3 moved, 0 failed, 3 signal(s) sent\n" in result.output
        assert sorted(heard) == [(f"ord_cli_{n}", "payout_successful") for n in range(3)]
    finally:
        order_status_changed.disconnect(slow_receiver, sender=app)
        state.dispatcher.stop()


def _signal_state(app, order_id: str) -> str | None:
    with app.extensions["checkout"].engine.connect() as conn:
        return conn.execute(select(signal_log_table.c.state)
                            .where(signal_log_table.c.order_id == order_id)).scalar()


def test_an_order_whose_session_was_purged_is_no_longer_watched(app, fake_upstream):
    _session_with_order(app, "onramp", "ord_gone")
    fake_upstream.failures = 1
    assert len(reconcile(app, older_than=0).checks) == 1
    assert _watch(app, "ord_gone") is not None
    engine = app.extensions["checkout"].engine
    with engine.begin() as conn:
        conn.execute(sessions_table.delete())
    assert reconcile(app, older_than=0, now=utcnow() + timedelta(hours=2)).checks == []
    assert _watch(app, "ord_gone") is None and len(fake_upstream.calls) == 1


@pytest.mark.postgres
def test_on_postgresql_the_reconciler_and_late_webhooks_agree(webhook_config, postgres_url):
    webhook_config["CHECKOUT_DATABASE_URL"] = postgres_url
    app = make_app(dict(webhook_config))
    fake = FakeUpstream()
    use_upstream(app, fake)
    recorder = Recorder(app)
    try:
        test_a_late_webhook_after_the_reconciler_changes_nothing(app, Receiver(app), recorder, fake)
        checks = assert_a_second_worker_makes_no_call(app, webhook_config, fake, "ord_pg")
        assert [c.after for c in checks] == ["payout_pending"]
    finally:
        recorder.disconnect()
        app.extensions["checkout"].close()


def test_the_background_pass_runs_at_most_once_per_interval_and_can_be_turned_off(app):
    assert maybe_reconcile(app) is not None            # CHECKOUT_RECONCILE_AFTER 300: every 30 s
    assert maybe_reconcile(app) is None
    app.config["CHECKOUT_RECONCILE_PER_MINUTE"] = 0
    app.extensions["checkout"].reconciler.schedule = Schedule()
    assert maybe_reconcile(app) is None


def test_an_order_checked_for_ever_stays_at_the_cap(app, fake_upstream):
    app.config.update(CHECKOUT_RECONCILE_AFTER=10, CHECKOUT_RECONCILE_MAX_BACKOFF=3600)
    _session_with_order(app, "onramp", "ord_long")
    at = utcnow() + timedelta(seconds=11)
    reconcile(app, now=at)                                  # 404: unknown upstream
    with app.extensions["checkout"].engine.begin() as conn:
        conn.execute(watch_table.update().values(quiet_checks=5000))
    at += timedelta(seconds=3600)
    assert [c.error is not None for c in reconcile(app, now=at).checks] == [True]
    row = _watch(app, "ord_long")
    assert row.quiet_checks == 40
    assert reconcile(app, now=at + timedelta(seconds=3599)).checks == []
    assert len(reconcile(app, now=at + timedelta(seconds=3600)).checks) == 1
