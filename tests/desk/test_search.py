"""Finding an order by what the customer quotes (the reference or its first characters, the
shop's reference, a wallet, a transaction hash, an email, a phone with or without its country
code), the filters, newest first a page at a time, and the CSV export: the columns of `flask
checkout orders list`, no cell a spreadsheet would compute."""
from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest

from checkout.desk import search
from checkout.webhooks.inspect import ROW_KEYS

from ..views.conftest import EVM_ADDRESS, Flow
from ..webhooks.helpers import T0, iso
from .conftest import PREFIX, webhook_order

SHOP_REF = "shop-order-7731"


@pytest.fixture
def bought(app, client):
    """A purchase made here by Ada, paying by M-Pesa with her phone (Kenya)."""
    buyer = Flow(app, client)
    buyer.start(orderParams=SHOP_REF)
    buyer.to_pay("stk_push")
    return buyer.session.order_id


def found(operator, query: str):
    """Where a search for ``query`` leads: the order it opens, or the list's references."""
    page = operator.get("/orders", query_string={"q": query})
    if page.status_code == 303:
        return page.headers["Location"].rsplit("/", 1)[1]
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    return sorted(set(re.findall(r'data-order="([^"]+)"', body)))


def test_what_a_customer_quotes_opens_their_order(bought, operator):
    for quoted in (bought, bought[:10], f"  {bought}  ", SHOP_REF, "ADA@example.com",
                   "0712 345 678", "+254 712 345 678", "254712345678", EVM_ADDRESS,
                   EVM_ADDRESS.lower()):
        assert found(operator, quoted) == bought, quoted
    for unknown in ("ord_nobody", "ada@example.org", "0712 345 679", bought[:5]):
        assert found(operator, unknown) == [], unknown
    page = operator.get("/orders", query_string={"q": "ord_nobody"})
    assert "No order matches." in page.get_data(as_text=True)


def test_a_prefix_shared_by_several_orders_lists_them(app, operator):
    for order_id in ("65aa11aa0001", "65aa11aa0002", "65bb22bb0001"):
        webhook_order(app, order_id)
    assert found(operator, "65aa11aa") == ["65aa11aa0001", "65aa11aa0002"]


def test_a_transaction_hash_from_a_webhook_finds_its_order(app, operator):
    webhook_order(app, "ord_hash", "payout_successful", tx_hash="0xFEEDBEEF00112233")
    assert found(operator, "0xfeedbeef00112233") == "ord_hash"


def test_newest_first_a_page_at_a_time_with_filters(app, operator, monkeypatch):
    for day, (order_id, status, kind) in enumerate([("ord_a", "deposit_awaiting", "on_ramp"),
                                                     ("ord_b", "payout_successful", "on_ramp"),
                                                     ("ord_c", "payout_successful", "off_ramp")]):
        webhook_order(app, order_id, status, order_type=kind,
                      createdAt=iso(T0 + timedelta(days=day)))
    monkeypatch.setattr(search, "PAGE_SIZE", 2)
    first = operator.get("/orders").get_data(as_text=True)
    assert re.findall(r'data-order="([^"]+)"', first) == ["ord_c", "ord_b"]
    older = re.search(r'href="([^"]+)" rel="next"', first).group(1)
    assert "after=ord_b" in older
    second = operator.client.get(older.replace("&amp;", "&"), headers=operator.staff)
    assert re.findall(r'data-order="([^"]+)"', second.get_data(as_text=True)) \
        == ["ord_a"]
    assert found(operator, "") == ["ord_b", "ord_c"]        # a page: newest two
    listed = operator.get("/orders", query_string={"status": "payout_successful",
                                                   "flow": "onramp"})
    assert re.findall(r'data-order="([^"]+)"', listed.get_data(as_text=True)) \
        == ["ord_b"]
    by_day = operator.get("/orders", query_string={"since": (T0 + timedelta(days=1)).date()
                                                   .isoformat(), "until": (T0 + timedelta(days=1))
                                                   .date().isoformat()})
    assert re.findall(r'data-order="([^"]+)"', by_day.get_data(as_text=True)) \
        == ["ord_b"]
    refused = operator.get("/orders", query_string={"since": "the 3rd"})
    assert "A date could not be read" in refused.get_data(as_text=True)


def test_the_csv_has_the_clis_columns_and_no_cell_a_spreadsheet_computes(app, operator):
    dangerous = ["=HYPERLINK(\"https://evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1)",
                 "\t=1", "＝1"]
    for index, params in enumerate(dangerous):
        webhook_order(app, f"ord_csv_{index}", order_params=params)
    answer = operator.get("/orders.csv")
    assert answer.status_code == 200
    assert answer.mimetype == "text/csv"
    assert answer.headers["Cache-Control"] == "no-store"
    assert "attachment" in answer.headers["Content-Disposition"]
    text = answer.get_data(as_text=True)
    assert text.startswith(",".join(ROW_KEYS) + "\r\n")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(dangerous)
    for row in rows:
        for value in row.values():
            assert not value or value[0] not in "=+-@\t\r＝＋－＠", row
    assert {row["orderParams"] for row in rows} == {"'" + params for params in dangerous}
    assert {row["status"] for row in rows} == {"deposit_awaiting"}
    # The filters apply to the export as to the list.
    one = operator.get("/orders.csv", query_string={"q": "ord_csv_0"}).get_data(as_text=True)
    assert len(list(csv.DictReader(io.StringIO(one)))) == 1


def test_a_search_box_on_the_overview_leads_to_the_list(operator):
    body = operator.get("/").get_data(as_text=True)
    assert f'action="{PREFIX}/orders"' in body and 'name="q"' in body
