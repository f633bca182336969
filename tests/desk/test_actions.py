"""An operator's actions: "check with the partner now" stores what the partner says (as the
reconciler does, signalling a new status once), "send the signal again" runs the shop's code for
the current status once more; each is recorded (who, when, what, the outcome), on the order's
timeline and in `flask checkout orders show`."""
from __future__ import annotations

import re

from click.testing import CliRunner
from flask.cli import ScriptInfo

from checkout.store.tables import desk_actions_table
from checkout.webhooks.dispatcher import process_pending

from ..views.conftest import Flow, move_sandbox_order
from ..webhooks.helpers import Recorder
from .conftest import rows, webhook_order
from .test_story import timeline


def test_check_with_the_partner_finds_a_status_whose_webhook_was_lost(app, client, operator):
    recorder = Recorder(app)
    buyer = Flow(app, client)
    buyer.to_pay()
    buyer.get("/status")
    order_id = buyer.session.order_id
    process_pending(app)
    # The payment arrives upstream; its webhook never comes.
    move_sandbox_order(app, order_id, "swap_seller_confirmed", webhook=False)
    order_page = f"/orders/{order_id}"
    answer = operator.post(f"{order_page}/check", token_from=order_page)
    assert answer.status_code == 303
    page = operator.client.get(answer.headers["Location"], headers=operator.staff)
    body = page.get_data(as_text=True)
    assert "The partner told of a new status: it is recorded." in body
    entries = timeline(page)
    assert any("Status: Payment received" in e and "from a check at the desk" in e
               for e in entries)
    assert any("Kofi Mensah checked with the partner (operator)" in e for e in entries)
    process_pending(app)
    assert (order_id, "deposit_successful") in recorder.statuses()     # signalled, once
    [action] = rows(app, desk_actions_table)
    assert (action["staff"], action["role"], action["action"], action["outcome"]) == \
        ("Kofi Mensah", "operator", "check", "moved")
    # Asked again: nothing new, and said so; the signal is not sent twice.
    again = operator.post(f"{order_page}/check", token_from=order_page)
    page = operator.client.get(again.headers["Location"], headers=operator.staff)
    assert "Nothing new: the partner says what the checkout knew." in page.get_data(as_text=True)
    process_pending(app)
    assert recorder.status_counts()[(order_id, "deposit_successful")] == 1
    recorder.disconnect()


def test_a_check_the_partner_cannot_answer_is_recorded_as_failed(app, operator):
    webhook_order(app, "ord_unknown_upstream")
    answer = operator.post("/orders/ord_unknown_upstream/check",
                           token_from="/orders/ord_unknown_upstream")
    page = operator.client.get(answer.headers["Location"], headers=operator.staff)
    assert "The partner could not be asked: nothing changed." in page.get_data(as_text=True)
    assert rows(app, desk_actions_table)[0]["outcome"] == "failed"


def test_send_the_signal_again_runs_the_shops_code_again_after_saying_so(app, operator):
    recorder = Recorder(app)
    recorder.fail_next_status = 1
    webhook_order(app, "ord_fulfil", "payout_successful")      # the shop's code fails
    order_page = "/orders/ord_fulfil"
    body = operator.get(order_page).get_data(as_text=True)
    assert "Send the signal again" in body
    confirm = operator.get(f"{order_page}/resend")
    assert "Your shop's code will run again for this status" in \
        confirm.get_data(as_text=True)
    answer = operator.post(f"{order_page}/resend", token_from=f"{order_page}/resend")
    assert answer.status_code == 303
    assert recorder.statuses() == [("ord_fulfil", "payout_successful")]
    page = operator.client.get(answer.headers["Location"], headers=operator.staff)
    body = page.get_data(as_text=True)
    assert "The shop's code ran again and returned." in body
    told = [e for e in timeline(page) if "The shop's code was told" in e]
    assert "acknowledged" in told[-1] and "2 attempts" in told[-1]
    assert any("Kofi Mensah sent the signal again (operator)" in e for e in timeline(page))
    recorder.disconnect()


def test_orders_show_prints_the_audit_trail(app, operator):
    webhook_order(app, "ord_audited", "payout_successful")
    operator.post("/orders/ord_audited/resend", token_from="/orders/ord_audited/resend")
    result = CliRunner().invoke(app.cli, ["checkout", "orders", "show", "ord_audited"],
                                obj=ScriptInfo(create_app=lambda: app))
    assert result.exit_code == 0, result.output
    assert re.search(r"desk actions:\n  \S+  Kofi Mensah \(operator\)  resend  acknowledged",
                     result.output), result.output
