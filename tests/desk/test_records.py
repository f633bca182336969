"""What the checkout writes for the desk as it goes: step events once per session and step
(whichever process serves the page), and an index of every order it learns of, found by keyed
digests, with nothing personal in clear."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from click.testing import CliRunner
from flask.cli import ScriptInfo
from sqlalchemy import delete

from checkout.desk.digests import search_keys, session_key
from checkout.store.tables import desk_keys_table, desk_orders_table, step_events_table
from checkout.webhooks.store import events_table

from ..conftest import make_app
from ..forking import in_forked_child
from ..views.conftest import EVM_ADDRESS, Flow
from ..webhooks.conftest import Receiver
from ..webhooks.helpers import order_payload, signed_webhook
from .conftest import rows

SECRET = "sandbox-launch-secret-do-not-use-in-production-0001"     # the sandbox's


def steps_of(app, session_id: str) -> list[str]:
    key = session_key(SECRET, session_id)
    return sorted(row["step"] for row in rows(app, step_events_table) if row["session_key"] == key)


def test_each_step_is_recorded_once_whichever_app_or_process_serves_it(app, client, config):
    buyer = Flow(app, client)
    buyer.start()
    buyer.follow(buyer.choose())
    assert steps_of(app, buyer.session_id) == ["choose", "opened", "wallet"]

    # Another worker on the same database, and the same one restarted: the pages seen again
    # are no new step.
    def another_worker(path: str) -> int:
        other = make_app(dict(config))
        return other.test_client().get(f"/checkout/s/{buyer.session_id}{path}").status_code

    assert in_forked_child(another_worker, "/wallet") == 200
    restarted = make_app(dict(config))
    assert restarted.test_client().get(f"/checkout/s/{buyer.session_id}/choose").status_code \
        == 200
    assert steps_of(restarted, buyer.session_id) == ["choose", "opened", "wallet"]


def test_without_the_desk_or_the_metrics_no_step_is_written(config):
    config.pop("CHECKOUT_DESK_ACCESS")
    app = make_app(dict(config))
    Flow(app, app.test_client()).start()
    assert rows(app, step_events_table) == []


def test_an_order_made_here_is_indexed_with_what_the_customer_saw(app, client):
    buyer = Flow(app, client)
    buyer.start()                               # walked, each step of it recorded
    buyer.to_pay()
    session = buyer.session
    [order] = rows(app, desk_orders_table)
    assert order["order_id"] == session.order_id
    assert (order["flow"], order["network"], order["asset"], order["currency"]) == \
        ("onramp", "CELO", "USDT", "NGN")
    assert order["fiat_amount"] == Decimal("5000")
    assert order["crypto_amount"] > 0
    assert order["session_key"] == session_key(SECRET, buyer.session_id)
    assert steps_of(app, buyer.session_id) == ["choose", "opened", "ordered", "pay", "review",
                                               "wallet"]
    keys = {row["key"] for row in rows(app, desk_keys_table)}
    for found_by in ({"emails": ["ADA@example.com"]}, {"addresses": [EVM_ADDRESS.lower()]},
                     {"order_params": [session.claims.get("orderParams") or session.reference]}):
        assert set(search_keys(SECRET, **found_by)) <= keys, found_by
    written = json.dumps([rows(app, table) for table in (desk_orders_table, desk_keys_table,
                                                         step_events_table)], default=str)
    assert "ada@" not in written and buyer.session_id not in written


def test_a_webhook_indexes_an_order_made_elsewhere_and_nothing_personal_is_in_clear(app):
    receiver = Receiver(app)
    payload = order_payload("ord_elsewhere", "deposit_awaiting", order_params="shop-77",
                            tx_hash="0xABCDEF0123", userEmail="kwame@example.com")
    payload["data"]["order"]["deposit"]["cashout"] = {"amountBeforeFees": 15000}
    assert receiver.post(signed_webhook(payload)).status_code == 200
    receiver.process()
    [order] = rows(app, desk_orders_table)
    assert (order["order_id"], order["flow"], order["order_params"], order["currency"],
            order["fiat_amount"]) == ("ord_elsewhere", "onramp", "shop-77", "NGN",
                                      Decimal("15000"))
    keys = {row["key"] for row in rows(app, desk_keys_table)}
    assert set(search_keys(SECRET, emails=["kwame@example.com"], hashes=["0xabcdef0123"],
                           order_params=["shop-77"])) <= keys
    written = json.dumps([rows(app, table) for table in (desk_orders_table, desk_keys_table,
                                                         step_events_table)], default=str)
    assert "kwame" not in written and "example.com" not in written


def test_reindex_puts_back_the_orders_kept_before_the_index(app, client, operator):
    """An upgrade from a release without the desk: its orders are found once reindexed."""
    buyer = Flow(app, client)
    buyer.to_pay()
    made_here = buyer.session.order_id
    receiver = Receiver(app)
    receiver.post(signed_webhook(order_payload("ord_before", userEmail="kwame@example.com",
                                               order_params="shop-9")))
    receiver.process()
    with app.extensions["checkout"].engine.begin() as conn:
        for table in (desk_keys_table, desk_orders_table):
            conn.execute(delete(table))
    assert operator.get("/orders", query_string={"q": "kwame@example.com"}).status_code == 200
    result = CliRunner().invoke(app.cli, ["checkout", "desk", "reindex"],
                                obj=ScriptInfo(create_app=lambda: app))
    assert result.exit_code == 0, result.output
    assert "read into the desk's index" in result.output
    for query, order_id in (("kwame@example.com", "ord_before"), ("shop-9", "ord_before"),
                            ("ada@example.com", made_here), (EVM_ADDRESS, made_here)):
        found = operator.get("/orders", query_string={"q": query})
        assert found.status_code == 303 and found.headers["Location"].endswith(order_id), query


@pytest.mark.postgres
def test_what_a_source_sends_that_no_column_holds_never_fails_its_webhook(config, postgres_url):
    """Indexing runs in the webhooks' own transaction: an amount too large for its column or a
    currency too long (which PostgreSQL refuses) is left out of the index, and the delivery is
    processed as always."""
    app = make_app({**config, "CHECKOUT_DATABASE_URL": postgres_url})
    payload = order_payload("ord_odd", "payout_successful")
    payload["data"]["order"]["deposit"] = {"currencyType": "fiat", "currencyCode": "N" * 40,
                                           "cashout": {"amountBeforeFees": "1e40"}}
    payload["data"]["order"]["payout"] = {"currencyType": "crypto", "currencyCode": "USDT",
                                          "cashout": {"amountAfterFees": 10 ** 30}}
    receiver = Receiver(app)
    assert receiver.post(signed_webhook(payload)).status_code == 200
    receiver.process()
    [order] = rows(app, desk_orders_table)
    assert (order["order_id"], order["currency"], order["fiat_amount"], order["crypto_amount"]) \
        == ("ord_odd", "N" * 8, None, None)
    [event] = rows(app, events_table)
    assert (event["state"], event["outcome"]) == ("processed", "applied")
    app.extensions["checkout"].close()


@pytest.mark.postgres
def test_a_new_orders_read_and_its_webhook_stored_at_once_wait_for_each_other(config,
                                                                              postgres_url):
    """The create's answer stored while a webhook of the same new order is being processed:
    both write the order's index row, then its own row, so the later waits for the earlier and
    neither is refused. In opposite turns they waited for each other: PostgreSQL refused one
    (a deadlock), and the customer's create was answered 503."""
    import threading
    from datetime import UTC, datetime

    from sqlalchemy import text

    from checkout.desk import index as desk_index
    from checkout.webhooks.orders import orders_table

    from ..support.waiting import wait_for

    app = make_app({**config, "CHECKOUT_DATABASE_URL": postgres_url})
    state = app.extensions["checkout"]
    engine, now = state.engine, datetime.now(UTC)
    failures: list[BaseException] = []

    def page_stores_the_create_answer() -> None:
        try:
            state.order_statuses.fetch_and_store(
                "ord_race", "onramp", fetched={"id": "ord_race", "status": "swap_initiated"},
                source="create")
        except BaseException as exc:        # told to the test's thread
            failures.append(exc)

    def waiting_on_a_lock() -> bool:
        with engine.connect() as conn:
            return bool(conn.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()")).scalar())

    with engine.connect() as webhook:
        # The webhook's processing, as checkout.webhooks.processing runs it: the index first...
        transaction = webhook.begin()
        desk_index.record(webhook, desk_index.OrderFacts("ord_race", flow="onramp"),
                          "secret", now)
        page = threading.Thread(target=page_stores_the_create_answer)
        page.start()
        wait_for(waiting_on_a_lock)             # the page's store waits for the webhook's row
        # ...then the order's own row.
        webhook.execute(orders_table.insert().values(
            order_id="ord_race", flow="onramp", status="deposit_awaiting", previous_status=None,
            status_updated_at=now, status_source="webhook", order_params=None, summary=None,
            full_order=None, fetched_at=None, hash=None, refreshed_at=now, version=1,
            fetch_due_at=None, fetch_seq=0, fetch_attempts=0, created_at=now))
        transaction.commit()
    page.join(30)
    assert not page.is_alive() and failures == []
    [order] = rows(app, desk_orders_table)
    assert order["order_id"] == "ord_race"
    state.close()
