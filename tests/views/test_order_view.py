"""The order view: the address given to payment providers and the upstream opens one order's
status and the way back to the shop, never the session (checkout.capabilities)."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from checkout.capabilities import order_view_token, session_id_of

from ..conftest import make_app
from .conftest import Flow, sandbox_order


def order_view_path(flow: Flow) -> str:
    return urlsplit(sandbox_order(flow.app, flow.session.order_id).data["redirectUrl"]).path


def test_the_return_address_shows_the_order_and_the_way_back_and_nothing_of_the_session(flow):
    flow.start(returnUrl="https://shop.test/thanks", lock=[])
    flow.to_pay("redirect")
    path = order_view_path(flow)
    assert path.startswith("/checkout/o/") and flow.session_id not in path
    page = flow.client.get(path)
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Your order" in html and flow.session.order_id in html
    assert "Checking for your payment" in html           # just back from the provider's page
    assert 'href="https://shop.test/thanks"' in html
    # Nothing that opens or acts on the session: no id, no token, no form, no resume link.
    assert flow.session_id not in html and flow.csrf not in html
    assert "<form" not in html and "Continue on another device" not in html
    assert "data-checkout-event" not in html
    # It follows the order by itself, on its own address.
    live_url = re.search(r'hx-get="([^"]+)"', html).group(1)
    assert live_url == f"{path}/live"
    live = flow.client.get(live_url, headers={"HX-Request": "true"})
    assert live.status_code == 200 and flow.session_id not in live.get_data(as_text=True)
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["Referrer-Policy"] == "same-origin"


def test_the_session_s_own_pages_still_work_beside_it(flow):
    flow.to_pay("redirect")
    assert flow.get("/return").status_code == 200      # orders made before the order view
    assert flow.get("/status").status_code == 200


def test_a_forged_altered_or_foreign_token_opens_nothing(app, flow):
    flow.to_pay("redirect")
    path = order_view_path(flow)
    token = path.rsplit("/", 1)[1]
    with app.app_context():
        assert session_id_of(token) == flow.session_id
        # A session id is not a token, and a token made under another launch secret is not ours.
        other = make_app({**{k: v for k, v in app.config.items() if k.startswith("CHECKOUT_")},
                          "CHECKOUT_LAUNCH_SECRET": "another-launch-secret-of-at-least-32-bytes",
                          "SERVER_NAME": "shop.test"})
        foreign = order_view_token(flow.session_id, other)
    flipped = token[:-3] + ("AAA" if token[-3:] != "AAA" else "BBB")
    assert flow.client.get("/checkout/o/%00").status_code == 400     # refused before reading
    for bad in (flow.session_id, flipped, foreign, "x" * 600, "eyJ.."):
        response = flow.client.get(f"/checkout/o/{bad}")
        assert response.status_code == 404, bad
        assert "This checkout was not found" in response.get_data(as_text=True)
        # Back from a payment page: never told to start again (a second payment).
        assert "your payment is not lost" in response.get_data(as_text=True)
        assert "start again" not in response.get_data(as_text=True)
    assert flow.client.get(f"/checkout/o/{flipped}/live").status_code == 404
    # Only GET: it shows, it never acts.
    assert flow.client.post(path).status_code == 405


def test_a_session_without_an_order_has_no_order_view(app, flow):
    flow.start()
    with app.app_context():
        token = order_view_token(flow.session_id)
    assert flow.client.get(f"/checkout/o/{token}").status_code == 404


def test_the_order_view_speaks_the_session_s_language(flow):
    flow.start(locale="fr", lock=[])
    flow.to_pay("redirect")
    html = flow.client.get(order_view_path(flow)).get_data(as_text=True)
    assert '<html lang="fr"' in html and "Votre commande" in html


def test_when_the_upstream_fails_the_order_view_s_error_page_names_no_session(app, flow,
                                                                              monkeypatch):
    """Its "Try again" goes to the order view again: the session's page would hand the holder of
    the return address the session id."""
    from checkout.errors import UpstreamUnavailable

    flow.to_pay("redirect")
    path = order_view_path(flow)

    def unavailable(*args, **kwargs):
        raise UpstreamUnavailable("connection refused", method="GET", path="/api/onramp/order")

    monkeypatch.setattr(app.extensions["checkout"].order_statuses, "current", unavailable)
    for url, headers in ((path, {}), (f"{path}/live", {}),
                         (f"{path}/live", {"HX-Request": "true", "HX-Current-URL":
                                           f"http://shop.test/checkout/s/{flow.session_id}/"})):
        response = flow.client.get(url, headers=headers)
        html = response.get_data(as_text=True)
        assert response.status_code in (200, 502), url
        assert "Try again" in html or "try again" in html
        assert flow.session_id not in html and flow.csrf not in html, url
