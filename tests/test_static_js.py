"""Guards on the source of our own JavaScript (the behaviour is tested in tests/browser/).

Cheap checks that catch a regression before a browser runs: no eval in any form, no "*" target
origin, each postMessage aimed at the one origin it must go to, and the ES5 style the files keep
(they run unbundled, untranspiled, in whatever browser the merchant's customer has).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from flask import render_template_string

from checkout.paths import STATIC

OURS = sorted([*(STATIC / "checkout").glob("*.js"), *(STATIC / "demo").glob("*.js")])
EMBED = STATIC / "checkout" / "embed.js"
CHECKOUT = STATIC / "checkout" / "checkout.js"
DEPOSIT = STATIC / "checkout" / "deposit.js"


def code_of(path: Path) -> str:
    """The file without its comments (they mention "*" and eval to say why there are none).

    Good enough for our files: no string or regular expression in them holds "/*", and a "//"
    inside a string is always preceded by ":" (a URL).
    """
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?<![:\\])//.*$", "", text, flags=re.M)


def post_message_targets(code: str) -> list[str]:
    """The last argument of every ``.postMessage(...)`` call, as written."""
    targets = []
    for match in re.finditer(r"\.postMessage\(", code):
        depth, i, start = 1, match.end(), match.end()
        last_comma = None
        while depth:
            c = code[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "," and depth == 1:
                last_comma = i
            i += 1
        assert last_comma is not None, f"postMessage without a target origin: {code[start:i]}"
        targets.append(code[last_comma + 1:i - 1].strip())
    return targets


def test_the_files_are_found():
    assert {p.name for p in OURS} >= {"checkout.js", "deposit.js", "filter.js", "embed.js",
                                      "shop.js"}
    assert not any("vendor" in p.parts for p in OURS)


@pytest.mark.parametrize("path", OURS, ids=lambda p: p.name)
def test_no_eval_in_any_form(path):
    code = code_of(path)
    assert not re.search(r"\beval\s*\(", code)
    assert not re.search(r"\bnew\s+Function\b|\bFunction\s*\(", code)
    # A string handed to a timer is eval too.
    assert not re.search(r"set(Timeout|Interval)\s*\(\s*['\"]", code)
    # Markup from data (data-extra, a message) must never become HTML.
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", code)


@pytest.mark.parametrize("path", OURS, ids=lambda p: p.name)
def test_no_wildcard_target_origin(path):
    code = code_of(path)
    assert not re.search(r"""["']\*["']""", code), "a \"*\" literal: never a target origin"
    for target in post_message_targets(code):
        assert target not in ('"*"', "'*'")


def test_embed_posts_only_to_the_checkouts_origin():
    code = code_of(EMBED)
    targets = post_message_targets(code)
    assert targets == ["checkoutOrigin"]
    # ...which is the origin of the URL the iframe loads, and nothing else.
    assert re.search(r"var checkoutOrigin = src\.origin;", code)
    assert len(re.findall(r"\bcheckoutOrigin\s*=", code)) == 1
    # The one message it sends is deposit-sent, from the checked hash, to the iframe's window.
    call = code[code.index("target.postMessage("):]
    assert re.match(r'target\.postMessage\(\s*\{ source: "checkout-parent", version: 1, '
                    r'type: "deposit-sent", txHash: txHash \},\s*checkoutOrigin\)', call)
    assert re.search(r"var target = iframe\.contentWindow;", code)
    assert "TX_HASH.test(txHash)" in code


def test_checkout_posts_only_to_the_parent_origin_and_hears_only_it():
    code = code_of(CHECKOUT)
    assert post_message_targets(code) == ["parentOrigin"]
    assert 'parentOrigin = meta("checkout-parent-origin")' in code
    deposit = code_of(DEPOSIT)
    assert post_message_targets(deposit) == []
    assert "event.source !== window.parent || event.origin !== parentOrigin" in deposit


@pytest.mark.parametrize("path", OURS, ids=lambda p: p.name)
def test_es5_style(path):
    code = code_of(path)
    assert "=>" not in code
    assert "`" not in code
    assert not re.search(r"^\s*(let|const|class)\s", code, flags=re.M)
    assert '"use strict";' in code


@pytest.mark.parametrize("path", OURS, ids=lambda p: p.name)
def test_the_files_parse(path):
    # Node.js is on every machine the tests run on (CI included): no skipping here.
    assert shutil.which("node"), "node is needed to parse the checkout's JavaScript"
    subprocess.run(["node", "--check", str(path)], check=True, capture_output=True, timeout=60)


class _Attributes(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append(dict(attrs))


def test_parent_event_extra_is_json_in_an_attribute(app):
    """What checkout.js reads (data-extra) survives quotes and markup in the values."""
    extra = {"deposit": {"address": "0xabc", "amount": "12.5", "asset": "USDC",
                         "network": "POLYGON", "memo": "it's <b>&amp;</b>"}}
    with app.test_request_context():
        html = render_template_string(
            '{% from "checkout/macros.html" import parent_event %}'
            '{{ parent_event("deposit-requested", key="k1", extra=extra) }}'
            '{{ parent_event("ready") }}', extra=extra)
    parser = _Attributes()
    parser.feed(html)
    with_extra, without = parser.found
    assert with_extra["data-checkout-event"] == "deposit-requested"
    assert with_extra["data-event-key"] == "k1"
    assert json.loads(with_extra["data-extra"]) == extra
    assert "data-extra" not in without and "data-order" not in without
    assert "<b>" not in html
