"""Upstream links that become target="_top" links: https only (http on loopback or the sandbox)."""
from __future__ import annotations

import logging

import pytest
from flask import Flask

from checkout import Checkout
from checkout.urls import safe_external_url

from .test_config import REAL_UPSTREAM

REFUSED = [
    "javascript:alert(document.domain)//",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "//evil.example/pay",
    "/relative/pay",
    "https:evil.example",
    "https:///path-only",
    "https://user:pw@pay.example/",
    "https://pay.example\\@evil.example/",
    "ftp://pay.example/",
    "https://pay.example/" + "a" * 5000,
]


@pytest.fixture
def real_app(tmp_path) -> Flask:
    app = Flask("host_site", instance_path=str(tmp_path / "instance"))
    app.config.update(CHECKOUT_DATABASE_URL=f"sqlite:///{tmp_path}/c.sqlite3", **REAL_UPSTREAM)
    Checkout(app)
    return app


@pytest.mark.parametrize("url", REFUSED)
def test_unsafe_links_are_refused_and_logged_without_the_url(real_app, url, caplog):
    caplog.set_level(logging.WARNING, logger="checkout.urls")
    with real_app.app_context():
        assert safe_external_url(url) is None
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "alert" not in caplog.text and "evil" not in caplog.text and "pw@" not in caplog.text


def test_https_links_are_kept(real_app):
    with real_app.app_context():
        url = "https://pay.provider.example/checkout/abc?ref=1#x"
        assert safe_external_url(url) == url


@pytest.mark.parametrize("url, kept", [
    ("http://pay.provider.example/abc", False),        # cleartext on a real upstream
    ("http://127.0.0.1:5000/sandbox/pay/1", True),      # loopback: tests and the local demo
    ("http://localhost:5000/sandbox/pay/1", True),
    ("http://[::1]/pay", True),
])
def test_http_only_on_loopback_with_a_real_upstream(real_app, url, kept):
    with real_app.app_context():
        assert (safe_external_url(url) == url) is kept


def test_http_is_accepted_while_the_embedded_sandbox_is_the_upstream(app):
    with app.app_context():
        assert safe_external_url("http://shop.test/sandbox/pay/1") == "http://shop.test/sandbox/pay/1"
        assert safe_external_url("javascript:alert(1)") is None


def test_no_url_is_no_link_and_no_warning(caplog):
    caplog.set_level(logging.WARNING, logger="checkout.urls")
    assert safe_external_url(None) is None and safe_external_url("") is None
    assert not caplog.records
