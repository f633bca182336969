"""``flask checkout webhooks list | show | replay``."""
from __future__ import annotations

from .helpers import history, signed_webhook


def _run(app, *args):
    result = app.test_cli_runner().invoke(args=["checkout", "webhooks", *args])
    return result


def test_list_shows_recent_events_with_duplicates(app, receiver):
    assert "no webhook events stored" in _run(app, "list").output
    awaiting, successful = history("ord_cli", ["deposit_awaiting", "deposit_successful"])
    receiver.post(signed_webhook(awaiting))
    receiver.post(signed_webhook(successful))
    receiver.post(signed_webhook(successful))
    receiver.post(signed_webhook(body=b"not json"))
    receiver.process()
    result = _run(app, "list")
    assert result.exit_code == 0, result.output
    header, *rows = result.output.strip().splitlines()
    assert header.split()[:4] == ["ID", "RECEIVED", "(UTC)", "TYPE"]
    assert len(rows) == 3
    newest, second, first = rows
    assert newest.split()[0] == "3" and "invalid" in newest
    assert "deposit_successful" in second and "processed" in second and second.endswith(" 1")
    assert "ord_cli" in first and "applied" in first and first.endswith(" 0")


def test_show_prints_headers_body_and_result_but_no_secret(app, receiver):
    delivery = signed_webhook()
    receiver.post(delivery)
    receiver.process()
    result = _run(app, "show", "1")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "processed (applied)" in out
    assert f"x-signature: {delivery.headers['x-signature']}" in out
    assert '"status": "deposit_awaiting"' in out               # pretty JSON
    assert "signal=order_status_changed, status=deposit_awaiting, state=dispatched" in out
    assert "signal=webhook_received" in out
    assert app.config["CHECKOUT_WEBHOOK_SECRET"] not in out


def test_unknown_ids_are_errors(app):
    for command in ("show", "replay"):
        result = _run(app, command, "99")
        assert result.exit_code != 0 and "no webhook event 99" in result.output


def test_replay_of_a_failed_event_processes_it(app, receiver, recorder, monkeypatch):
    from checkout.webhooks import processing

    def broken(*args, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(processing, "move_order_status", broken)
    receiver.post(signed_webhook())
    receiver.process()
    assert "failed" in _run(app, "list").output
    monkeypatch.undo()
    result = _run(app, "replay", "1")
    assert result.exit_code == 0, result.output
    assert "processed (applied)" in result.output
    assert recorder.statuses() == [("ord_1", "deposit_awaiting")]


def test_process_runs_the_dispatcher_once(app, receiver, recorder):
    receiver.post(signed_webhook())
    result = _run(app, "process")
    assert result.exit_code == 0, result.output
    assert "1 event(s) processed, 2 signal(s) sent" in result.output
    assert recorder.statuses() == [("ord_1", "deposit_awaiting")]
