"""Fill a database with a previous release's own code, for the upgrade tests (tests/test_schema.py).

Not a test, and not run by the tests: it made the dumps beside it, and runs only inside a checkout
of the release it imitates, whose ``checkout`` package and test helpers it imports::

    git worktree add --detach /tmp/rel 1b4918f
    cd /tmp/rel && PYTHONPATH=/tmp/rel python /path/to/make_database.py URL

(``make_dumps.sh`` beside it made every dump that way, PostgreSQL's throw-away cluster included).

Everything goes through the release's real paths, on its embedded sandbox: its start-up makes the
tables (``create_all`` and the columns it adds); an on-ramp session is carried through the pages to
a created order; signed webhooks for that order and for an order of another page are received and
processed (the stored status, the full order fetched from the sandbox, the signal log and outbox),
one of them delivered twice; a session opened by a launch token is left at its first step, an
off-ramp one just opened; and, where the release has the reconciler, ``flask checkout orders
reconcile`` records its schedule (``checkout_order_watch``). Last, one plain UPDATE moves the
sessions' expiry to 2099, so that the tests can still open them (a session lives 7 days).

Prints a JSON summary (ids the tests look for) on stdout.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from datetime import timedelta

from sqlalchemy import inspect, text

import checkout
from checkout.state import get_state
from tests.conftest import make_app
from tests.views.conftest import Flow
from tests.webhooks.helpers import T0, order_payload, signed_webhook

try:
    from checkout.webhooks.dispatcher import process_pending
except ImportError:         # a release from before checkout.webhooks.dispatcher had it
    from checkout.webhooks import process_pending  # type: ignore[attr-defined,no-redef]

FAR_EXPIRY = "2099-01-01 00:00:00"


def main(url: str) -> None:
    # The release's own package, from the checkout this runs in (PYTHONPATH), never this one's.
    assert checkout.__file__.startswith(os.getcwd() + os.sep), checkout.__file__
    config = {
        "TESTING": True, "SERVER_NAME": "shop.test", "CHECKOUT_DATABASE_URL": url,
        "CHECKOUT_FRAME_ANCESTORS": ["https://shop.test"],
        "CHECKOUT_SANDBOX": {"SANDBOX_TIME_SCALE": 1.0},
        "CHECKOUT_WEBHOOK_BACKGROUND": False,
        "CHECKOUT_RECONCILE_AFTER": 0,
        "_instance_path": tempfile.mkdtemp(),
    }
    app = make_app(config)
    summary: dict[str, object] = {"release_module": checkout.__file__}

    # An on-ramp session through the pages to an order created on the sandbox.
    paid = Flow(app, app.test_client())
    paid.start()
    page = paid.to_pay("manual")
    assert page.status_code == 200, page.status_code
    session = paid.session
    order_id = session.order_id
    assert order_id
    summary["paid_session"] = session.id
    summary["paid_order"] = order_id
    summary["paid_reference"] = session.reference

    hook = app.test_client()

    def deliver(payload: dict[str, object]) -> None:
        delivery = signed_webhook(payload)
        answer = hook.post("/checkout/webhooks", data=delivery.body, headers=delivery.headers,
                           base_url="https://shop.test")
        assert answer.status_code == 200, answer.get_data(as_text=True)

    # Its first webhook, delivered twice (the second is a duplicate), then processed: the status
    # is stored and the full order fetched from the sandbox.
    first = order_payload(order_id, "deposit_awaiting", updated_at=T0 + timedelta(minutes=1),
                          order_params=session.reference)
    deliver(first)
    deliver(first)
    process_pending(app)

    # Another page's order, known from its webhooks only.
    other = "ord_fixture_other"
    deliver(order_payload(other, "deposit_awaiting", updated_at=T0, order_params="shop-ref-9"))
    deliver(order_payload(other, "deposit_received", updated_at=T0 + timedelta(minutes=5),
                          order_params="shop-ref-9"))
    process_pending(app)
    summary["other_order"] = other

    # A session opened by a launch token, left at its first step with an answer.
    launched = Flow(app, app.test_client())
    launched.start(network="CELO", asset="USDC", countryIsoCode="NG", lock=["network"],
                   orderParams="basket-42", email="ada@example.com")
    launched.choose("manual")
    summary["launched_session"] = launched.session_id
    summary["launched_jti"] = launched.session.jti

    # An off-ramp session, just opened.
    selling = Flow(app, app.test_client(), name="offramp")
    selling.start()
    summary["offramp_session"] = selling.session_id

    # The reconciler's schedule, where the release has one.
    result = app.test_cli_runner().invoke(args=["checkout", "orders", "reconcile"])
    summary["reconcile"] = result.output.strip().splitlines()[-1:] if result.exit_code == 0 \
        else f"not in this release (exit {result.exit_code})"

    with app.app_context():
        engine = get_state().engine
    with engine.begin() as conn:
        conn.execute(text("UPDATE checkout_sessions SET expires_at = :far"),
                     {"far": FAR_EXPIRY})
    present = set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        summary["rows"] = {table: conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
                           for table in sorted(present)}
    engine.dispose()
    print(json.dumps(summary, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
