"""Static files by the address of their content, kept a year; everything the checkout sends, and
nothing of the host's, compressed as the browser takes it."""
from __future__ import annotations

import gzip
import re

import brotli
import pytest
from flask import Flask

from checkout import assets
from checkout.paths import STATIC
from tests.conftest import make_app

BOTH = {"Accept-Encoding": "gzip, deflate, br"}


def first_page(client) -> str:
    start = client.get("/checkout/onramp")
    page = client.get(start.headers["Location"])
    assert page.status_code == 200
    return page.get_data(as_text=True)


def asset_addresses(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/checkout/assets/[^"]+)"', html)


def decoded(response) -> bytes:
    encoding = response.headers.get("Content-Encoding")
    if encoding == "br":
        return brotli.decompress(response.data)
    if encoding == "gzip":
        return gzip.decompress(response.data)
    assert encoding is None, encoding
    return response.data


def test_a_page_names_each_file_by_its_content_and_the_browser_keeps_it_a_year(client):
    addresses = asset_addresses(first_page(client))
    assert {a.rsplit("/", 1)[1] for a in addresses} >= {
        "checkout.css", "checkout.js", "htmx-2.0.11.min.js", "icon.svg"}
    assert "/checkout/static/" not in first_page(client)
    for address in addresses:
        response = client.get(address, headers=BOTH)
        assert response.status_code == 200, address
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert "ETag" not in response.headers      # never asked about again: no version needed


def test_a_changed_file_gets_a_new_address_and_an_old_one_is_not_kept(tmp_path, app):
    (tmp_path / "a.css").write_text("p { color: red }")
    before = assets.Assets(tmp_path).files["a.css"].fingerprint
    (tmp_path / "a.css").write_text("p { color: blue }")
    assert assets.Assets(tmp_path).files["a.css"].fingerprint != before
    # A page rendered before a deploy asks for the old address: it gets today's file, not
    # for a year.
    response = app.test_client().get("/checkout/assets/0123456789abcdef/checkout.css")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-cache"
    missing = app.test_client().get("/checkout/assets/0123456789abcdef/nope.css")
    assert missing.status_code == 404 and "not found" in missing.get_data(as_text=True).lower()
    assert missing.headers["Cache-Control"] == "no-store"      # there may be one tomorrow


def test_the_fixed_address_is_asked_about_again_and_answered_in_a_few_bytes(client):
    """Merchants put embed.js on their pages by its fixed address: always the current one."""
    response = client.get("/checkout/static/embed.js", headers=BOTH)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-cache"
    again = client.get("/checkout/static/embed.js",
                       headers={**BOTH, "If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""


@pytest.mark.parametrize("accept, encoding", [
    ("gzip, deflate, br", "br"),
    ("gzip, deflate", "gzip"),
    ("br;q=0.5, gzip", "gzip"),
    ("identity", None),
    ("", None),
])
def test_files_come_in_the_encoding_the_browser_takes(client, accept, encoding):
    plain = decoded(client.get("/checkout/static/checkout.js"))
    response = client.get("/checkout/static/checkout.js", headers={"Accept-Encoding": accept})
    assert response.headers.get("Content-Encoding") == encoding
    assert "Accept-Encoding" in response.headers["Vary"]
    assert decoded(response) == plain
    # Minified: the comments that explain it stay in the source.
    assert b"/*" not in plain and len(plain) < 0.6 * len(
        (STATIC / "checkout" / "checkout.js").read_bytes())


def test_files_are_compressed_once_not_at_each_request_nor_for_each_app(config, monkeypatch):
    make_app(config)
    calls = []
    real = brotli.compress
    monkeypatch.setattr(assets.brotli, "compress", lambda *a, **k: calls.append(1) or real(*a, **k))
    app = make_app(config)              # another app in the same process: the same files
    client = app.test_client()
    for _ in range(3):
        assert client.get("/checkout/static/checkout.css", headers=BOTH).headers[
            "Content-Encoding"] == "br"
    assert calls == []


def test_the_checkouts_pages_are_compressed_and_keep_their_headers(client):
    start = client.get("/checkout/onramp")
    page = client.get(start.headers["Location"], headers=BOTH)
    assert page.headers["Content-Encoding"] == "br"
    assert page.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors" in page.headers["Content-Security-Policy"]
    assert b"<h1" in decoded(page)
    small = client.get(start.headers["Location"], headers={"Accept-Encoding": "gzip"})
    assert small.headers["Content-Encoding"] == "gzip"
    assert decoded(small) == decoded(page)


def test_the_hosts_own_pages_are_left_as_the_host_sends_them(app: Flask):
    app.add_url_rule("/catalogue", "catalogue", lambda: "<p>shoes</p>" * 1000)
    response = app.test_client().get("/catalogue", headers=BOTH)
    assert response.status_code == 200
    assert "Content-Encoding" not in response.headers
    assert "Vary" not in response.headers


def test_a_file_gets_the_strict_policy_of_a_file_and_a_page_keeps_a_pages(client):
    """Opened by itself, a file (an SVG, say) may run, load and be framed by nothing; the page
    policy (its sources, its Permissions-Policy) is for documents, and was bytes spent on each
    of the first page's files."""
    html = first_page(client)
    for address in asset_addresses(html):
        response = client.get(address, headers=BOTH)
        assert response.headers["Content-Security-Policy"] == \
            "default-src 'none'; frame-ancestors 'none'", address
        assert "Permissions-Policy" not in response.headers
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "same-origin"
    embed = client.get("/checkout/static/embed.js")
    assert embed.headers["Content-Security-Policy"] == "default-src 'none'; frame-ancestors 'none'"
    start = client.get("/checkout/onramp")
    page = client.get(start.headers["Location"])
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert "camera=(self)" in page.headers["Permissions-Policy"]
