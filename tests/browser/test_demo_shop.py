"""The demo shop (``wsgi.py``) in Chromium: its page, served by the demo's own app (requests
answered through Playwright's routing by the app's test client, so no port is needed)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def demo() -> Iterator[Any]:
    import wsgi  # makes the demo's app, as gunicorn's "wsgi:app" does

    yield wsgi
    wsgi.app.extensions["checkout"].dispatcher.stop()


@pytest.mark.parametrize(("viewport", "most"), [
    ({"width": 360, "height": 640}, 640), ({"width": 412, "height": 780}, 780),
    ({"width": 1280, "height": 900}, 900)])
def test_without_javascript_the_shops_frame_fits_the_screen(browser, demo, viewport, most):
    """Framed without script, the checkout cannot tell the shop its height: the frame has a
    fixed one and scrolls inside. Taller than the screen, its own bottom (and "Continue") is out
    of reach while the page scrolls; so it is at most the screen's height, and still most of it."""
    client = demo.app.test_client()
    context = browser.new_context(viewport=viewport, java_script_enabled=False)

    def answer(route: Any) -> None:
        url = urlsplit(route.request.url)
        if f"{url.scheme}://{url.netloc}" != demo.SHOP_ORIGIN:
            route.abort()           # the checkout itself is not what is measured here
            return
        response = client.get(url.path + (f"?{url.query}" if url.query else ""),
                              base_url=demo.SHOP_ORIGIN)
        route.fulfill(status=response.status_code, headers=dict(response.headers),
                      body=response.get_data())

    context.route("**/*", answer)
    try:
        page = context.new_page()
        page.goto(f"{demo.SHOP_ORIGIN}/?preset=ng")
        height = page.evaluate(
            "() => document.querySelector('iframe.shop-frame').getBoundingClientRect().height")
        assert 0.6 * most <= height <= most, height
    finally:
        context.close()
