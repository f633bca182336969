"""CHECKOUT_SUPPORT: checked when the app starts, and turned into links that carry the order's
reference where the medium carries text."""
from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from checkout.errors import ConfigurationError

from .conftest import make_app

SUPPORT = {"email": "help@mama-mboga.example", "whatsapp": "+254 712 345 678",
           "phone": "+2348012345678", "web": "https://mama-mboga.example/help"}


@pytest.mark.parametrize(("setting", "said"), [
    ("help@shop.example", "must map any of email, web, whatsapp, phone"),
    ({"fax": "+254712345678"}, "unknown fax"),
    ({"email": "help"}, "CHECKOUT_SUPPORT['email'] must be one plain address"),
    ({"email": "help@shop"}, "CHECKOUT_SUPPORT['email']"),
    ({"email": ""}, "CHECKOUT_SUPPORT['email'] must be a non-empty string"),
    ({"web": "http://shop.example/help"}, "CHECKOUT_SUPPORT['web'] must be an https://"),
    ({"web": "https://"}, "CHECKOUT_SUPPORT['web']"),
    ({"web": "javascript:alert(1)"}, "CHECKOUT_SUPPORT['web']"),
    ({"whatsapp": "0712345678"}, "CHECKOUT_SUPPORT['whatsapp'] must be a phone number in "
                                 "international form"),
    ({"phone": "+254 12"}, "CHECKOUT_SUPPORT['phone']"),
    ({"phone": 254712345678}, "CHECKOUT_SUPPORT['phone'] must be a non-empty string"),
])
def test_a_support_contact_no_one_could_reach_is_refused_at_start_up(config, setting, said):
    config["CHECKOUT_SUPPORT"] = setting
    with pytest.raises(ConfigurationError) as refused:
        make_app(config)
    assert said in str(refused.value)


@pytest.mark.parametrize("address", [
    "help?cc=spy@evil.example",                 # valid for RFC 5322; a Cc in a mailto: link
    "help&cc=spy@evil.example", "help%3Fcc%3Dspy@evil.example", "help#x@shop.example",
    "help=x@shop.example", "help/x@shop.example",
    "help@shop.example?cc=spy@evil.example", "help@shop.example,spy@evil.example",
    "help@shop.example, spy@evil.example", "help@shop.example;spy@evil.example",
    "Help <help@shop.example>", '"help desk"@shop.example', "help@[192.0.2.1]",
    "help@shop.example\r\nBcc: spy@evil.example",
])
def test_a_support_address_is_one_plain_address_and_nothing_a_mailto_link_reads_more_in(
        config, address):
    config["CHECKOUT_SUPPORT"] = {"email": address}
    with pytest.raises(ConfigurationError) as refused:
        make_app(config)
    said = str(refused.value)
    assert said.startswith("CHECKOUT_SUPPORT['email'] must be one plain address")
    assert "evil.example" not in said and address not in said    # the value is never echoed


@pytest.mark.parametrize(("given", "kept"), [
    ("help@shop.example", "help@shop.example"),
    (" help+orders@Shop.Example ", "help+orders@shop.example"),
    ("mama.mboga_help-1@shop.co.ke", "mama.mboga_help-1@shop.co.ke"),
])
def test_a_plain_support_address_is_taken(config, given, kept):
    config["CHECKOUT_SUPPORT"] = {"email": given}
    app = make_app(config)
    from checkout.support import support_links

    with app.test_request_context():
        (link,) = support_links("ord_1")
    assert urlsplit(link.href).path == kept


def test_each_contact_is_a_link_with_the_order_reference_written_where_it_can_be(config):
    config.update(CHECKOUT_SUPPORT=SUPPORT, CHECKOUT_MERCHANT_NAME="Mama Mboga")
    app = make_app(config)
    from checkout.support import support_links

    with app.test_request_context():
        links = {link.kind: link for link in support_links("ord_123")}
    email = urlsplit(links["email"].href)
    assert (email.scheme, email.path) == ("mailto", "help@mama-mboga.example")
    query = parse_qs(email.query)
    assert query == {"subject": ["Order ord_123"],
                     "body": ["Hello Mama Mboga, I need help with my order ord_123."]}
    assert "+" not in email.query      # spaces are %20 in a mailto link (RFC 6068), never "+"
    whatsapp = urlsplit(links["whatsapp"].href)
    assert whatsapp.netloc == "wa.me" and whatsapp.path == "/254712345678"
    assert unquote(parse_qs(whatsapp.query)["text"][0]) == \
        "Hello Mama Mboga, I need help with my order ord_123."
    assert links["phone"].href == "tel:+2348012345678"
    assert links["phone"].label == "Call +234 801 234 5678"
    assert links["web"].href == "https://mama-mboga.example/help"
    assert links["web"].new_window and links["whatsapp"].new_window
    assert not links["email"].new_window and not links["phone"].new_window
    assert list(links) == list(SUPPORT)          # in the merchant's order


def test_without_an_order_the_message_is_about_the_checkout(config):
    config.update(CHECKOUT_SUPPORT={"email": "help@shop.example"})
    app = make_app(config)
    from checkout.support import support_links

    with app.test_request_context():
        (link,) = support_links(None)
    assert parse_qs(urlsplit(link.href).query)["body"] == [
        "Hello, I need help with my checkout."]
