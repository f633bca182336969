"""The sandbox's browser pages: one stylesheet of its own, a phone-sized payment page, and an index
whose corridor tables come from the reference data."""
from __future__ import annotations

import re
from html import unescape

import pytest

from checkout.sandbox import reference as ref

from .sandbox_support import TX_HASH, Api, api, sandbox_app, sandbox_factory  # noqa: F401


def redirect_order(api: Api) -> dict:
    quote = api.onramp_quote(countryIsoCode="GH", paymentChannel="bank", amount="100")
    return api.onramp_order(quote, quote_params={"amount": "100"},
                            redirectUrl="https://shop.example/back")


def rows(html: str, table_id: str) -> list[list[str]]:
    """The body rows of the table after the heading ``table_id``, as plain cell texts."""
    section = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    body = section.split("<tbody>", 1)[1]
    cells = [re.findall(r"<td>(.*?)</td>", row, re.S)
             for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    return [[unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in row] for row in cells]


def test_the_stylesheet_is_served_by_the_sandbox(api):
    css = api.client.get("/sandbox/sandbox.css")
    assert css.status_code == 200 and css.mimetype == "text/css"
    text = css.get_data(as_text=True)
    assert "min-height: 48px" in text and "@import" not in text and "url(" not in text


def test_payment_page_is_made_for_a_phone(api):
    order = redirect_order(api)
    html = api.client.get(f"/sandbox/pay/{order['orderId']}").get_data(as_text=True)
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in html
    assert 'rel="stylesheet" href="/sandbox/sandbox.css"' in html
    assert re.search(r'<button type="submit" class="primary">Pay</button>', html)
    assert re.search(r'<button type="submit" class="secondary">Cancel</button>', html)
    # Pay comes first, and is the first form (the host's tests and users look for it there).
    assert html.index(">Pay<") < html.index(">Cancel<")
    assert f'{order["localCurrencyAmount"]} GHS' in html
    css = api.client.get("/sandbox/sandbox.css").get_data(as_text=True)
    button_rule = re.search(r"\.actions button \{([^}]*)\}", css) or re.search(
        r"\.button, \.actions button \{([^}]*)\}", css)
    height = re.search(r"min-height: (\d+)px", button_rule.group(1))
    assert int(height.group(1)) >= 44
    assert "width: 100%" in button_rule.group(1)
    closed = api.client.post(f"/sandbox/pay/{order['orderId']}", data={"action": "cancel"})
    assert closed.status_code == 302
    after = api.client.get(f"/sandbox/pay/{order['orderId']}").get_data(as_text=True)
    assert "This payment was cancelled. (Order status: swap_buyer_rejected.)" in after
    assert "<form" not in after
    assert 'class="button secondary" href="https://shop.example/back"' in after


# What each press answers once the order has moved on while its payment page stayed open: the same
# press again (a double tap, a second tab) goes back to the shop as the first did; any other is
# told on the page that the payment is closed, and why.
MOVED_ON = {
    "expired": {"pay": "This payment has expired", "cancel": "This payment has expired"},
    "cancelled in another tab": {"pay": "This payment was cancelled", "cancel": None},
    "paid in another tab": {"pay": None, "cancel": "This payment has been made"},
}


@pytest.mark.parametrize("moved_on", MOVED_ON)
def test_a_payment_page_left_open_too_long_says_so_when_pressed(api, moved_on):
    """Never the API's JSON error in front of the person paying, and the order left as it was."""
    order = redirect_order(api)
    page = f"/sandbox/pay/{order['orderId']}"
    assert "<form" in api.client.get(page).get_data(as_text=True)       # the page as it was opened
    if moved_on == "expired":
        api.advance(order["orderId"])
    else:
        api.client.post(page, data={"action": "cancel" if "cancelled" in moved_on else "pay"})
    history = api.statuses(order["orderId"])
    for action, notice in MOVED_ON[moved_on].items():
        pressed = api.client.post(page, data={"action": action})
        if notice is None:
            assert pressed.status_code == 302
            assert pressed.headers["Location"] == "https://shop.example/back"
        else:
            assert pressed.status_code == 409 and pressed.mimetype == "text/html"
            html = pressed.get_data(as_text=True)
            assert notice in html and f"(Order status: {history[-1]}.)" in html
            assert "<form" not in html
            assert 'class="button secondary" href="https://shop.example/back"' in html
            assert "<script" not in html and "<style" not in html and " style=" not in html
        assert api.statuses(order["orderId"]) == history
    assert history[-1] == {"expired": "swap_expired", "cancelled in another tab": "swap_buyer_rejected",
                           "paid in another tab": "swap_buyer_confirmed"}[moved_on]


@pytest.mark.parametrize("path", ["/sandbox/", "/sandbox/orders", "/sandbox/webhooks",
                                  "/sandbox/pay/{onramp}", "/sandbox/orders/{offramp}",
                                  "/sandbox/offramp/{offramp}/send",
                                  "/sandbox/kyc?phoneNumber=254110611756",
                                  "/sandbox/kyc?phoneNumber=2348012345678",
                                  "/sandbox/kyc/users"])
def test_no_inline_script_or_style_anywhere(api, path):
    """The checkout serves these pages under a CSP of style-src 'self' and script-src 'self'."""
    onramp = redirect_order(api)
    offramp = api.offramp_typed_order()
    api.post("/api/kyc/submit", {"phone": "2348012345678", "idType": "BVN", "userFields": {
        "first_name": "Ada", "last_name": "Pending", "dob": "1990-01-01",
        "email": "ada@example.com", "id_number": "22222222222"}})
    html = api.client.get(path.format(onramp=onramp["orderId"], offramp=offramp["_id"])).get_data(
        as_text=True)
    assert 'href="/sandbox/sandbox.css"' in html
    assert "<script" not in html and "<style" not in html and " style=" not in html
    assert not re.search(r"\son[a-z]+=", html)          # no inline event handlers either


def test_index_says_how_each_onramp_corridor_is_paid(api):
    html = api.client.get("/sandbox/").get_data(as_text=True)
    table = rows(html, "onramp-corridors")
    expected = [(c, ch) for c in ref.COUNTRIES for ch in c.onramp]
    assert len(table) == len(expected)
    for row, (country, channel) in zip(table, expected, strict=True):
        assert row[0] == f"{country.name} ({country.iso}, {country.currency})"
        assert row[1] == channel.channel
        assert row[2] == (channel.transfer_type if channel.limits.available
                          else "unavailable (every limit 0)")
    by_corridor = {(re.search(r"\((\w\w),", r[0]).group(1), r[1]): r[2] for r in table}
    assert by_corridor[("NG", "bank")] == "manual" and by_corridor[("GH", "bank")] == "redirect"
    assert by_corridor[("KE", "mobile_money")] == "stk_push"
    assert by_corridor[("GH", "mobile_money")] == "otp_stk_push"
    assert by_corridor[("NG", "airtime")] == "ussd"
    assert {r[2] for r in table} >= {"manual", "redirect", "ussd", "stk_push", "otp_stk_push"}


def test_index_lists_the_offramp_types_of_each_country(api):
    html = api.client.get("/sandbox/").get_data(as_text=True)
    table = rows(html, "offramp-corridors")
    expected = [(c, ch) for c in ref.COUNTRIES for ch in c.offramp]
    assert len(table) == len(expected)
    for row, (country, channel) in zip(table, expected, strict=True):
        assert row[0] == f"{country.name} ({country.iso}, {country.currency})"
        assert row[1].startswith(f"{channel.channel} ({channel.name})")
        assert row[2] == ", ".join(f.name for f in channel.required_fields)
        assert ("carrierId required" in row[3]) == channel.needs_carrier
    kenya = [r[1].split(" ")[0] for r in table if "(KE," in r[0]]
    assert kenya == ["mobile_money", "paybill", "bank", "airtime"]


def test_index_names_the_new_magic_values(api):
    html = api.client.get("/sandbox/").get_data(as_text=True)
    for outcome in ("transaction_failed", "refund_failed"):
        assert f"<code>{outcome}</code>" in html
    assert '<code id="no-account-suffix">0404</code>' in html
    assert '<code id="unverifiable-suffix">0503</code>' in html


def test_console_offers_the_test_wallet_for_unpaid_offramp_orders(api):
    order = api.offramp_typed_order()
    detail = api.client.get(f"/sandbox/orders/{order['_id']}").get_data(as_text=True)
    assert f'href="/sandbox/offramp/{order["_id"]}/send"' in detail
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    detail = api.client.get(f"/sandbox/orders/{order['_id']}").get_data(as_text=True)
    assert "/send" not in detail


def test_kyc_page_is_made_for_a_phone(api):
    """The hosted verification page (kycUrl): one column, full-width shortcut buttons."""
    html = api.client.get("/sandbox/kyc?phoneNumber=254110611756").get_data(as_text=True)
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in html
    assert '<main class="narrow">' in html
    assert re.search(r'<div class="actions">\s*<form method="post"', html)
    assert re.search(r'<button type="submit" class="primary" id="pass-basic">Pass basic '
                     r'verification<span class="sub">sandbox shortcut: National ID</span>', html)
    assert "stands in for the verification partner" in html
