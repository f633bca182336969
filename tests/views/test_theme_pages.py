"""The merchant's theme on the pages: custom properties in checkout.css (no inline style, no
extra request), the logo allowed by the CSP, and the scheme the launch token chooses."""
from __future__ import annotations

import re

import pytest
from flask import Flask

from checkout import Checkout
from checkout.errors import LaunchTokenError
from tests.conftest import make_app

from .test_assets import BOTH, decoded

LOGO = "https://shop.test/brand/logo.svg"
THEME = {"accent": "#6b3d12", "accent_text": "#ffffff", "radius": 4, "font": "serif",
         "logo": LOGO, "scheme": "auto"}


@pytest.fixture
def themed(config) -> Flask:
    config["CHECKOUT_THEME"] = THEME
    config["CHECKOUT_MERCHANT_NAME"] = "Duka la Ada"
    return make_app(config)


def first_page(app: Flask, **claims) -> tuple[str, dict]:
    client = app.test_client()
    if claims:
        with app.test_request_context():
            url = Checkout.launch_url("onramp", **claims)
    else:
        url = "/checkout/onramp"
    start = client.get(url)
    assert start.status_code == 303, start.get_data(as_text=True)[:500]
    page = client.get(start.headers["Location"])
    return page.get_data(as_text=True), dict(page.headers)


def stylesheet_of(app: Flask, html: str) -> tuple[str, str]:
    address = re.search(r'href="(/checkout/assets/[^"]+/checkout\.css)"', html)
    assert address, html[:1500]
    response = app.test_client().get(address.group(1), headers=BOTH)
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    return address.group(1), decoded(response).decode()


def test_the_theme_comes_in_checkout_css_itself(app, themed):
    html, _ = first_page(themed)
    address, css = stylesheet_of(themed, html)
    assert "--accent:#6b3d12" in css and "--radius:4px" in css and "Georgia" in css
    assert "prefers-color-scheme:dark" in css
    # Its own address: a browser that kept the default stylesheet asks for this one.
    default_address, default_css = stylesheet_of(app, first_page(app)[0])
    assert address != default_address and "--accent:#6b3d12" not in default_css
    # Never inline: the pages keep their strict policy, and only stylesheets they link.
    assert "style=" not in html and "<style" not in html


def test_the_logo_is_in_the_header_and_the_policy_allows_its_site_only(themed):
    html, headers = first_page(themed)
    assert f'<img class="checkout-logo" src="{LOGO}" alt="Duka la Ada">' in html
    policy = headers["Content-Security-Policy"]
    assert "img-src 'self' data: blob: https://shop.test;" in policy
    assert "script-src 'self';" in policy and "style-src 'self';" in policy


def test_without_a_token_s_choice_the_page_follows_the_device(themed):
    html, _ = first_page(themed)
    assert '<meta name="color-scheme" content="light dark">' in html
    assert "data-scheme" not in html


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_launch_token_chooses_light_or_dark(themed, scheme):
    html, _ = first_page(themed, colorScheme=scheme)
    assert f'<html lang="en" data-scheme="{scheme}">' in html
    assert f'<meta name="color-scheme" content="{scheme}">' in html


def test_a_light_only_theme_stays_light_whatever_the_token_says(config):
    config["CHECKOUT_THEME"] = {"accent": "#6b3d12"}
    html, _ = first_page(make_app(config), colorScheme="dark")
    assert "data-scheme" not in html and '<meta name="color-scheme" content="light">' in html


def test_a_scheme_that_is_neither_is_refused_in_the_token(themed):
    with themed.test_request_context(), pytest.raises(LaunchTokenError) as caught:
        Checkout.launch_url("onramp", colorScheme="sepia")
    assert "colorScheme must be one of light, dark" in caught.value.detail
