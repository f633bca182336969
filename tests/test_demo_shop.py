"""The demo shop (``wsgi.py``): the merchant's page frames the checkout with and without script."""
from __future__ import annotations

import html
import re

import pytest


@pytest.fixture(scope="module")
def shop():
    import wsgi  # makes the demo's app, as gunicorn's "wsgi:app" does

    yield wsgi.app, wsgi
    wsgi.app.extensions["checkout"].dispatcher.stop()


def test_without_javascript_the_shop_frames_the_launch_itself(shop):
    """embed.js mounts the checkout; a browser without script gets the same launch in a
    <noscript> iframe, which the page's Content-Security-Policy lets it frame."""
    app, wsgi = shop
    client = app.test_client()
    page = client.get("/?preset=ng", base_url=wsgi.SHOP_ORIGIN)
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    launch = html.unescape(re.search(r'data-checkout-url="([^"]+)"', text).group(1))
    framed = re.search(r"<noscript><iframe [^>]*src=\"([^\"]+)\"", text)
    assert framed is not None and html.unescape(framed.group(1)) == launch
    assert launch.startswith(f"{wsgi.CHECKOUT_ORIGIN}/checkout/launch?token=")
    assert f"frame-src {wsgi.CHECKOUT_ORIGIN};" in page.headers["Content-Security-Policy"]
    # The launch opens the checkout (a session, then its first page).
    opened = client.get(launch.removeprefix(wsgi.CHECKOUT_ORIGIN), base_url=wsgi.CHECKOUT_ORIGIN)
    assert opened.status_code in (302, 303) and "/checkout/s/" in opened.headers["Location"]


def test_the_shop_has_an_icon_its_policy_lets_the_browser_load(shop):
    """Without one a browser asks for /favicon.ico, which the shop does not have (a 404 in the
    console of every demo)."""
    app, wsgi = shop
    client = app.test_client()
    page = client.get("/?preset=ng", base_url=wsgi.SHOP_ORIGIN)
    link = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">',
                     page.get_data(as_text=True))
    assert link is not None
    assert link.group(1).startswith("/")             # the shop's own, from its origin
    icon = client.get(link.group(1), base_url=wsgi.SHOP_ORIGIN)
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
    assert icon.get_data(as_text=True).lstrip().startswith("<svg")
    policy = {d.split()[0]: d.split()[1:]
              for d in page.headers["Content-Security-Policy"].split("; ")}
    assert policy["img-src"] == ["'self'"]


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_the_shop_shows_the_checkout_in_its_own_colours_light_or_dark(shop, mode):
    """Two looks: the shop's page and the checkout in it, in the shop's colours, light or
    dark (the launch token's colorScheme)."""
    app, wsgi = shop
    client = app.test_client()
    page = client.get(f"/?preset=ng&mode={mode}", base_url=wsgi.SHOP_ORIGIN).get_data(
        as_text=True)
    assert f'<html lang="en" data-mode="{mode}">' in page
    launch = html.unescape(re.search(r'data-checkout-url="([^"]+)"', page).group(1))
    opened = client.get(launch.removeprefix(wsgi.CHECKOUT_ORIGIN), base_url=wsgi.CHECKOUT_ORIGIN)
    step = client.get(opened.headers["Location"], base_url=wsgi.CHECKOUT_ORIGIN)
    step = client.get(step.headers["Location"], base_url=wsgi.CHECKOUT_ORIGIN) \
        if step.status_code in (302, 303) else step
    checkout = step.get_data(as_text=True)
    assert f'data-scheme="{mode}"' in checkout
    css = re.search(r'href="([^"]+/checkout\.css)"', checkout).group(1)
    assert "--accent:#6b3d12" in client.get(css, base_url=wsgi.CHECKOUT_ORIGIN).get_data(
        as_text=True)
