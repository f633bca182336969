"""Markup that a phone user walking the flow depends on: labels, focus targets, what never invites
a second payment. (Layout itself is checked in a real browser: tests/browser/test_small_screen.py.)"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

CSS = Path(__file__).resolve().parents[2] / "static" / "checkout" / "checkout.css"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "path", "rect"}


def _parents(html: str) -> dict[str, str | None]:
    """For each element with an id or a class, the id of its parent element."""
    found: dict[str, str | None] = {}
    stack: list[str | None] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            for key in [attrs.get("id"), *(attrs.get("class") or "").split()]:
                if key:
                    found.setdefault(key, stack[-1] if stack else None)
            if tag not in VOID:
                stack.append(attrs.get("id"))

        def handle_startendtag(self, tag, attrs):
            # <path .../> in the QR code's SVG: an element that opens and closes at once.
            self.handle_starttag(tag, attrs)
            if tag not in VOID:
                stack.pop()

        def handle_endtag(self, tag):
            if tag not in VOID and stack:
                stack.pop()

    Parser().feed(html)
    return found


def test_amount_label_has_no_empty_unit_before_a_country_is_chosen(flow):
    html = flow.start().get_data(as_text=True)
    assert "()" not in html
    assert re.search(r'<label for="field-amount">You pay <span class="field-required"', html)
    page = flow.get("/choose", query_string={"currency": "crypto"}, headers={"HX-Request": "true"})
    assert re.search(r'<label for="field-amount">You get <span class="field-required"',
                     page.get_data(as_text=True))


def test_amount_label_names_the_currency_once_known(flow):
    flow.start()
    page = flow.get("/choose", query_string={"countryIsoCode": "NG", "currency": "local"},
                    headers={"HX-Request": "true"})
    assert '<label for="field-amount">You pay (NGN) <span' in page.get_data(as_text=True)


def test_currency_radios_have_ids_so_htmx_gives_their_focus_back_after_a_swap(flow):
    html = flow.start().get_data(as_text=True)
    for value in ("local", "crypto"):
        assert re.search(rf'<input type="radio" name="currency" value="{value}" '
                         rf'id="field-currency-{value}"', html)


def test_provider_resume_link_sits_after_the_live_status_so_css_hides_it_once_paid(flow):
    flow.to_pay("redirect")
    html = flow.get("/status").get_data(as_text=True)
    # A later sibling of the status block (the CSS rule uses "~"), which its polls replace.
    parents = _parents(html)
    assert parents["order-status"] == parents["resume-provider"] == "step"
    assert html.index('id="order-status"') < html.index('class="resume-provider"')
    css = CSS.read_text()
    assert ('#order-status:not([data-status="deposit_awaiting"]):not([data-status=""]) '
            '~ .resume-provider { display: none; }') in css


def test_a_refused_otp_marks_the_code_field_invalid_and_describes_it(flow):
    flow.to_pay("otp_stk_push")
    html = flow.follow(flow.post("/pay/otp", {"otp": "000000"})).get_data(as_text=True)
    assert 'id="pay-message"' in html and "That code is not right" in html
    assert re.search(r'<input id="field-otp"[^>]* aria-invalid="true" '
                     r'aria-describedby="pay-message">', html)
    html = flow.get("/pay").get_data(as_text=True)
    assert 'aria-invalid="true"' not in html


def test_long_codes_wrap_instead_of_scrolling_the_page_sideways():
    css = CSS.read_text()
    assert re.search(r"(^|\n)code \{[^}]*overflow-wrap: anywhere", css)
