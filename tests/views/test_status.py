"""Steps 7 and 8: the live status page, parent events exactly once, the return page, resuming."""
from __future__ import annotations

import json
import re

import pytest

from ..support.sandbox_clock import advance
from .conftest import Flow, advance_sandbox_order

# What a browser sends from inside the merchant's iframe: navigations say "iframe"; htmx requests
# (fetch metadata "empty") carry checkout.js's header.
FRAMED_HTMX = {"HX-Request": "true", "Sec-Fetch-Dest": "empty", "X-Checkout-Framed": "1"}
TOP_HTMX = {"HX-Request": "true", "Sec-Fetch-Dest": "empty"}
TOP_PAGE = {"Sec-Fetch-Dest": "document"}


@pytest.fixture
def client(app):
    """A browser inside the merchant's frame: every navigation is an iframe navigation."""
    client = app.test_client()
    client.environ_base["HTTP_SEC_FETCH_DEST"] = "iframe"
    return client


def events_in(html: str) -> list[tuple[str, dict]]:
    return [(kind, json.loads(order.replace("&#34;", '"')))
            for kind, order in re.findall(
                r'data-checkout-event="([^"]+)" data-event-key="[^"]+" data-order=\'([^\']+)\'',
                html)]


def poll_until(flow: Flow, wanted: str, path: str = "/status/live", **kwargs) -> list[str]:
    """Poll like the page does, the upstream's time moving on between polls (the sandbox's clock,
    five seconds each time: its agent answers 30 s after "I have paid", the payout ends 25 s
    later); returns every page body seen."""
    bodies = []
    headers = kwargs.pop("headers", FRAMED_HTMX)
    for _ in range(40):
        body = flow.get(path, headers=headers, **kwargs).get_data(as_text=True)
        bodies.append(body)
        if f'data-status="{wanted}"' in body:
            return bodies
        advance(flow.app, 5)
    raise AssertionError(f"never reached {wanted}: {bodies[-1][:1500]}")


def test_status_page_polls_until_complete_with_hash_and_explorer_link(flow):
    flow.to_pay("manual")
    status = flow.follow(flow.post("/pay/confirm"))
    html = status.get_data(as_text=True)
    assert 'hx-trigger="every 3s"' in html and "Your order" in html
    bodies = poll_until(flow, "payout_successful")
    final = bodies[-1]
    assert "Done! Your crypto has been sent" in final
    assert 'hx-trigger' not in final                       # settled: polling stops
    tx_hash = re.search(r'data-testid="tx-hash">([^<]+)<', final).group(1)
    # The embedded sandbox runs on test networks: its explorer link is the testnet explorer's.
    assert f'href="https://celo-sepolia.blockscout.com/tx/{tx_hash}"' in final


def test_parent_events_are_each_sent_once_and_one_terminal_event(flow):
    flow.to_pay("manual")
    seen = events_in(flow.responses[-1].get_data(as_text=True))
    flow.follow(flow.post("/pay/confirm"))
    seen += events_in(flow.responses[-1].get_data(as_text=True))
    for body in poll_until(flow, "payout_successful"):
        seen += events_in(body)
    for _ in range(3):                                     # reloads and late polls
        seen += events_in(flow.get("/status").get_data(as_text=True))
        seen += events_in(flow.get("/status/live", headers=FRAMED_HTMX).get_data(as_text=True))
    kinds = [kind for kind, _ in seen]
    assert kinds.count("order-created") == 1
    assert kinds.count("completed") == 1 and "failed" not in kinds
    statuses = [order["status"] for kind, order in seen if kind == "status-changed"]
    assert len(statuses) == len(set(statuses))
    assert statuses[0] == "deposit_awaiting" and statuses[-1] == "payout_successful"
    assert all(order["id"] == flow.session.order_id for _, order in seen)
    assert flow.session.events["terminal"] == "completed"


@pytest.mark.parametrize("sandbox_config", [{"SANDBOX_OUTCOME": "deposit_invalid"}])
def test_a_refused_deposit_ends_with_failed(flow):
    flow.to_pay("manual")
    flow.post("/pay/confirm")
    bodies = poll_until(flow, "deposit_invalid")
    kinds = [kind for body in bodies for kind, _ in events_in(body)]
    assert kinds.count("failed") == 1 and "completed" not in kinds
    assert "could not be accepted" in bodies[-1]


@pytest.mark.parametrize("sandbox_config", [{"SANDBOX_OUTCOME": "expire"}])
def test_an_unpaid_order_that_expired_shows_expired_but_is_not_failed(flow):
    flow.start()                                # unsigned: the session is the checkout's own
    flow.to_pay("manual")
    advance_sandbox_order(flow.app, flow.session.order_id)  # the deposit window ends now
    bodies = poll_until(flow, "deposit_expired")
    kinds = [kind for body in bodies for kind, _ in events_in(body)]
    assert "failed" not in kinds and "completed" not in kinds
    assert "expired before a payment arrived" in bodies[-1]
    assert 'hx-trigger="every 30s"' in bodies[-1]          # a late payment may still arrive
    page = flow.get("/status").get_data(as_text=True)      # and without JavaScript, a slow reload
    assert REFRESH.search(page).group(1) == "60"
    # An unsigned session offers a new order (a launched one goes back to the shop for it).
    assert 'href="/checkout/onramp' in bodies[-1] and "Start a new order" in bodies[-1]
    page = flow.get("/pay")                                # nothing left to pay
    assert "I have paid" not in page.get_data(as_text=True)


@pytest.mark.parametrize("sandbox_config", [{"SANDBOX_OUTCOME": "expire"}])  # stays validating
def test_pay_page_moves_on_once_the_payment_is_seen(flow):
    flow.to_pay("manual")
    waiting = flow.get("/status/live", query_string={"from": "pay"},
                       headers={"HX-Request": "true"})
    assert "HX-Redirect" not in waiting.headers
    flow.post("/pay/confirm")
    moved = flow.get("/status/live", query_string={"from": "pay"},
                     headers={"HX-Request": "true"})
    assert moved.headers["HX-Redirect"].endswith(f"/s/{flow.session_id}/status")
    # That answer is not swapped in: the events of the new status come with the status page.
    status = flow.get("/status").get_data(as_text=True)
    assert ("status-changed", {"id": flow.session.order_id, "status": "deposit_validating"}) \
        in events_in(status)


def test_return_page_stands_alone_with_back_to_shop_and_sends_no_events(flow):
    flow.start(returnUrl="https://shop.test/thanks", lock=[])
    flow.to_pay("redirect")
    page = flow.get("/return")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Your order" in html and 'href="https://shop.test/thanks"' in html
    assert "data-checkout-event" not in html
    assert "top=1" in html                                 # its polling sends no events either
    # Just back from paying: the payment is on its way, never one to make again.
    assert "Checking for your payment" in html and "Waiting for your payment" not in html
    assert "Continue on our payment partner" not in html and "returned=1" in html
    live = flow.get("/status/live", query_string={"top": "1"}, headers={"HX-Request": "true"})
    assert "data-checkout-event" not in live.get_data(as_text=True)


REFRESH = re.compile(r'<noscript><meta http-equiv="refresh" content="(\d+); url=([^"]+)"></noscript>')


def test_without_javascript_the_status_and_return_pages_reload_themselves_until_settled(
        flow):
    flow.to_pay("manual")
    # Read before "I have paid": a manual transfer waits for it.
    for path in ("/status", "/return"):
        html = flow.get(path).get_data(as_text=True)
        head = html[:html.index("</head>")]
        assert REFRESH.search(head).groups() == ("10", f"/checkout/s/{flow.session_id}{path}")
    # htmx's polls get the block alone: no page reload in it.
    live = flow.get("/status/live", headers=FRAMED_HTMX).get_data(as_text=True)
    assert "noscript" not in live
    flow.post("/pay/confirm")
    poll_until(flow, "payout_successful")
    for path in ("/status", "/return"):
        settled = flow.get(path).get_data(as_text=True)
        assert 'data-status="payout_successful"' in settled and "http-equiv" not in settled


def test_how_often_pages_reload_without_javascript_is_configured(app, flow):
    app.config["CHECKOUT_NO_SCRIPT_REFRESH_SECONDS"] = 4
    flow.to_pay("manual")
    flow.post("/pay/confirm")
    for path in ("/status", "/return"):
        assert REFRESH.search(flow.get(path).get_data(as_text=True)).group(1) == "4"


def test_status_and_return_before_an_order_go_to_the_flow(flow):
    flow.start()
    assert flow.get("/status").status_code == 303
    assert flow.get("/return").status_code == 303
    assert "HX-Redirect" in flow.get("/status/live", headers={"HX-Request": "true"}).headers


def test_the_resume_link_reopens_the_session_at_its_step_on_another_device(app):
    first = Flow(app, app.test_client())
    first.start()
    first.choose()
    first.wallet()
    other = Flow(app, app.test_client())
    other.session_id = first.session_id
    page = other.open("/")
    assert page.request.path.endswith("/review")
    assert "Review your order" in page.get_data(as_text=True)
    first.create(first.get("/review"))
    assert "I have paid" in other.get("/").get_data(as_text=True)


def test_unknown_session_is_a_friendly_404(client):
    response = client.get("/checkout/s/not-a-session/")
    assert response.status_code == 404
    assert "not found" in response.get_data(as_text=True).lower()


def test_a_top_level_page_records_no_event_and_the_framed_page_still_gets_them(
        app, flow):
    """The resume link opened top-level on another device must not use up ``completed``."""
    flow.to_pay("manual")
    flow.post("/pay/confirm")
    other = Flow(app, app.test_client())                   # another device, top-level
    other.session_id = flow.session_id
    for body in poll_until(other, "payout_successful", headers=TOP_HTMX):
        assert "data-checkout-event" not in body
    page = other.get("/status", headers=TOP_PAGE).get_data(as_text=True)
    assert 'data-status="payout_successful"' in page and "data-checkout-event" not in page
    assert "completed" not in events_in(page)
    assert flow.session.events.get("terminal") is None
    # Back in the merchant's frame: the events it never received come now, once.
    framed = events_in(flow.get("/status").get_data(as_text=True))
    assert [kind for kind, _ in framed].count("completed") == 1
    assert flow.session.events["terminal"] == "completed"
    again = events_in(flow.get("/status").get_data(as_text=True))
    assert "completed" not in [kind for kind, _ in again]


def test_a_top_level_status_page_polls_with_top_1_and_its_polls_send_nothing(
        app, flow):
    flow.to_pay("manual")
    flow.post("/pay/confirm")
    recorded = flow.session.events
    other = Flow(app, app.test_client())
    other.session_id = flow.session_id
    page = other.get("/status", headers=TOP_PAGE).get_data(as_text=True)
    assert "top=1" in page and "data-checkout-event" not in page
    # Even with checkout.js's header, a poll that says top=1 records nothing.
    live = other.get("/status/live", query_string={"top": "1"}, headers=FRAMED_HTMX)
    assert "data-checkout-event" not in live.get_data(as_text=True)
    assert flow.session.events == recorded


def test_an_htmx_poll_without_the_framed_header_records_nothing(flow):
    flow.to_pay("manual")
    recorded = flow.session.events
    flow.post("/pay/confirm")
    body = flow.get("/status/live", headers=TOP_HTMX).get_data(as_text=True)
    assert "data-checkout-event" not in body
    assert flow.session.events == recorded
    framed = flow.get("/status/live", headers=FRAMED_HTMX).get_data(as_text=True)
    assert "status-changed" in [kind for kind, _ in events_in(framed)]


def test_a_browser_without_fetch_metadata_lets_checkout_js_decide(app, flow):
    flow.to_pay("manual")
    flow.post("/pay/confirm")
    recorded = flow.session.events
    old_browser = Flow(app, app.test_client())             # no Sec-Fetch-Dest at all
    old_browser.session_id = flow.session_id
    page = old_browser.get("/status").get_data(as_text=True)
    assert "data-checkout-event" not in page and "top=1" not in page
    assert re.search(r'hx-trigger="load(, every 3s)?"', page)     # asks again through htmx
    assert flow.session.events == recorded
    live = old_browser.get("/status/live", headers={"HX-Request": "true",
                                                     "X-Checkout-Framed": "1"})
    assert "status-changed" in [kind for kind, _ in events_in(live.get_data(as_text=True))]


@pytest.mark.parametrize("config_overrides", [
    {"CHECKOUT_FRAME_ANCESTORS": ["https://shop.test", "https://other.test"]}])
def test_no_event_is_recorded_when_there_is_no_parent_origin_to_post_to(config, config_overrides):
    from tests.conftest import make_app

    app = make_app({**config, **config_overrides})
    client = app.test_client()
    client.environ_base["HTTP_SEC_FETCH_DEST"] = "iframe"
    flow = Flow(app, client)
    flow.to_pay("manual")                                  # unsigned start: no parentOrigin
    flow.post("/pay/confirm")
    page = flow.get("/status").get_data(as_text=True)
    live = flow.get("/status/live", headers=FRAMED_HTMX).get_data(as_text=True)
    assert "data-checkout-event" not in page + live
