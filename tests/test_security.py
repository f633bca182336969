"""Security headers on every kind of page, anti-forgery tokens, no inline script anywhere."""
from __future__ import annotations

import logging
import re

import pytest
from flask import render_template_string

from checkout.errors import UpstreamUnavailable
from checkout.htmx import htmx_redirect, is_htmx, render
from checkout.paths import TEMPLATES
from checkout.security import event_target_origin
from checkout.views.context import session_route

from .conftest import make_app
from .launch_support import claims, install_flow_stub, session_id_from, sign

SHOP = "https://shop.test"
HTMX = {"HX-Request": "true"}


def add_test_routes(app):
    """Session pages that act (POST), fail upstream, or crash, for the hooks to wrap."""
    prefix = app.config["CHECKOUT_URL_PREFIX"]

    @session_route
    def act(session):
        if request_is_post():
            return render_template_string("done {{ checkout_session.id }}")
        return render_template_string(
            '{% extends "checkout/base.html" %}{% block content %}'
            '{% from "checkout/macros.html" import csrf_input with context %}'
            '<form method="post">{{ csrf_input() }}</form>{% endblock %}')

    @session_route
    def upstream_down(session):
        raise UpstreamUnavailable("connection refused", method="GET", path="/api/onramp/assets")

    @session_route
    def crash(session):
        raise RuntimeError("secret internals")

    app.add_url_rule(f"{prefix}/s/<session_id>/test-act", endpoint="checkout.test_act",
                     view_func=act, methods=["GET", "POST"])
    app.add_url_rule(f"{prefix}/s/<session_id>/test-upstream", endpoint="checkout.test_upstream",
                     view_func=upstream_down)
    app.add_url_rule(f"{prefix}/s/<session_id>/test-crash", endpoint="checkout.test_crash",
                     view_func=crash)


def request_is_post() -> bool:
    from flask import request

    return request.method == "POST"


@pytest.fixture
def app(config):
    config["PROPAGATE_EXCEPTIONS"] = False  # let the 500 page render, as in production
    app = make_app(dict(config))
    install_flow_stub(app)
    add_test_routes(app)
    return app


def open_session(app, client, **extra) -> tuple[str, str]:
    """Launch a session; return its id and anti-forgery token."""
    location = client.get("/checkout/launch",
                          query_string={"token": sign(app, claims(**extra))}).headers["Location"]
    sid = session_id_from(location)
    with app.app_context():
        from checkout.state import get_state

        return sid, get_state().sessions.get(sid).csrf_token


def csp(response) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    return {d.split(" ", 1)[0]: d.split(" ", 1)[1] for d in (p.strip() for p in policy.split(";"))}


def assert_machine_headers(response):
    """An answer to a machine (the webhook receiver's): JSON that nothing may load into, frame,
    sniff or cache, with its request id; none of the page set."""
    assert response.mimetype == "application/json"
    assert response.headers["Content-Security-Policy"] == \
        "default-src 'none'; frame-ancestors 'none'"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "no-store"
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["X-Request-ID"])
    for page_only in ("Referrer-Policy", "Permissions-Policy", "X-Frame-Options"):
        assert page_only not in response.headers


def assert_page_headers(response, frame_ancestors: str):
    policy = csp(response)
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'"
    assert policy["form-action"] == "'self'"
    assert policy["base-uri"] == "'none'"
    assert policy["frame-ancestors"] == frame_ancestors
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]
    assert "unsafe-eval" not in response.headers["Content-Security-Policy"]
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "X-Frame-Options" not in response.headers
    assert response.headers["Cache-Control"] == "no-store"
    assert "clipboard-write=(self)" in response.headers["Permissions-Policy"]


class TestHeadersOnEveryPageKind:
    def test_pages_without_a_session_use_the_configured_ancestors(self, app, client):
        for response in (
            client.get("/checkout/onramp"),                       # redirect to a new session
            client.get("/checkout/offramp"),                      # friendly page
            client.get("/checkout/launch?token=nope"),            # 400 page
            client.get("/checkout/launch"),                       # 400 page
            client.get("/checkout/no/such/page"),                 # 404 page
            client.get("/checkout/s/unknown-session/"),           # 404 session page
        ):
            assert_page_headers(response, SHOP)

    def test_session_pages_use_the_parent_origin(self, app, client):
        app.config["CHECKOUT_FRAME_ANCESTORS"] = [SHOP, "https://other-shop.test"]
        sid, token = open_session(app, client, parentOrigin="https://other-shop.test")
        for response in (
            client.get(f"/checkout/s/{sid}/"),
            client.get(f"/checkout/s/{sid}/test-act"),
            client.post(f"/checkout/s/{sid}/test-act"),            # CSRF 400
            client.post(f"/checkout/s/{sid}/test-act", data={"csrf_token": token}),
            client.get(f"/checkout/s/{sid}/test-upstream"),        # upstream error page
            client.get(f"/checkout/s/{sid}/test-crash"),           # 500 page
        ):
            assert_page_headers(response, "https://other-shop.test")

    def test_session_without_parent_origin_uses_the_configured_ancestors(self, app, client):
        app.config["CHECKOUT_FRAME_ANCESTORS"] = ["'self'", SHOP]
        sid, _ = open_session(app, client)
        assert_page_headers(client.get(f"/checkout/s/{sid}/"), f"'self' {SHOP}")

    def test_default_ancestors_are_self(self, config):
        config.pop("CHECKOUT_FRAME_ANCESTORS")
        app = make_app(dict(config))
        assert_page_headers(app.test_client().get("/checkout/offramp"), "'self'")

    def test_a_malformed_ancestor_cannot_inject_a_directive(self, app, client):
        app.config["CHECKOUT_FRAME_ANCESTORS"] = [SHOP, "x; script-src *"]
        response = client.get("/checkout/offramp")
        assert csp(response)["script-src"] == "'self'"
        assert csp(response)["frame-ancestors"] == SHOP

    def test_static_files_are_cacheable(self, client):
        response = client.get("/checkout/static/checkout.js")
        assert response.status_code == 200
        assert response.headers.get("Cache-Control") != "no-store"
        assert response.headers["X-Content-Type-Options"] == "nosniff"

    def test_host_pages_are_left_alone(self, app, client):
        app.add_url_rule("/", endpoint="home", view_func=lambda: "shop")
        response = client.get("/")
        assert "Content-Security-Policy" not in response.headers


class TestErrorPages:
    def test_unknown_session_is_a_friendly_404(self, client):
        response = client.get("/checkout/s/does-not-exist/")
        assert response.status_code == 404
        assert "not found or has expired" in response.get_data(as_text=True)

    def test_expired_session_is_a_friendly_404(self, app, client):
        from datetime import UTC, datetime, timedelta

        from checkout.state import get_state
        from checkout.store.tables import sessions_table

        sid, _ = open_session(app, client)
        with app.app_context(), get_state().engine.begin() as conn:
            conn.execute(sessions_table.update().where(sessions_table.c.id == sid).values(
                expires_at=datetime.now(UTC) - timedelta(seconds=1)))
        response = client.get(f"/checkout/s/{sid}/")
        assert response.status_code == 404
        assert "not found or has expired" in response.get_data(as_text=True)

    def test_upstream_error_page_has_a_retry_and_no_internals(self, app, client):
        sid, _ = open_session(app, client)
        response = client.get(f"/checkout/s/{sid}/test-upstream")
        body = response.get_data(as_text=True)
        assert response.status_code == 502
        assert "Try again" in body and "connection refused" not in body
        assert "/api/onramp" not in body

    def test_server_error_page_has_no_traceback(self, app, client):
        sid, _ = open_session(app, client)
        response = client.get(f"/checkout/s/{sid}/test-crash")
        body = response.get_data(as_text=True)
        assert response.status_code == 500
        assert "Traceback" not in body and "secret internals" not in body
        assert '<main id="checkout-main"' in body

    @pytest.mark.parametrize("path", ["test-upstream", "test-crash"])
    def test_error_logs_name_the_route_never_the_session_or_a_token(self, app, client, path,
                                                                     caplog):
        sid, _ = open_session(app, client)
        caplog.set_level(logging.DEBUG)
        caplog.clear()
        client.get(f"/checkout/s/{sid}/{path}", query_string={"token": "eyJhbGciOi.secret.tok"})
        logged = [(r.getMessage(), r.exc_text or "") for r in caplog.records]
        assert any(f"/checkout/s/<session_id>/{path}" in message for message, _ in logged)
        for message, exc_text in logged:
            assert sid not in message and sid not in exc_text
            assert "eyJhbGciOi" not in message and "eyJhbGciOi" not in exc_text

    @pytest.mark.parametrize("path", ["test-upstream", "test-crash"])
    def test_htmx_errors_are_a_swappable_box(self, app, client, path):
        sid, _ = open_session(app, client)
        current = f"http://shop.test/checkout/s/{sid}/test-act"
        response = client.get(f"/checkout/s/{sid}/{path}",
                              headers={**HTMX, "HX-Current-URL": current})
        body = response.get_data(as_text=True)
        assert response.status_code == 200               # htmx 2 swaps only 2xx
        assert "<html" not in body and 'role="alert"' in body
        assert f'href="{current}"' in body                # retry = reload the page the user was on
        assert "HX-Request" in response.headers["Vary"]

    def test_htmx_retry_never_points_at_another_site(self, app, client):
        sid, _ = open_session(app, client)
        response = client.get(f"/checkout/s/{sid}/test-upstream",
                              headers={**HTMX, "HX-Current-URL": "https://evil.test/x"})
        assert "evil.test" not in response.get_data(as_text=True)


class TestMethodAndPathErrors:
    def test_wrong_method_on_a_real_page_is_a_friendly_405(self, client):
        response = client.post("/checkout/onramp")
        assert response.status_code == 405
        assert '<main id="checkout-main"' in response.get_data(as_text=True)
        assert_page_headers(response, SHOP)

    def test_unknown_path_is_a_friendly_404_for_any_method(self, client):
        for response in (client.get("/checkout/nope"), client.post("/checkout/nope/deeper")):
            assert response.status_code == 404
            assert "There is no page at this address" in response.get_data(as_text=True)

    @pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                        "TRACE", "OPTIONS", "PROPFIND", "CONNECT"])
    def test_every_answer_under_the_prefix_has_the_headers(self, app, client, method):
        """Unrouted methods, the bare prefix and the router's own redirects included: they
        have no blueprint, and used to go out bare (Werkzeug's page, no CSP, cacheable)."""
        sid, _token = open_session(app, client)
        paths = ["/checkout", "/checkout/", "/checkout/onramp", "/checkout/nope",
                 f"/checkout/s/{sid}", f"/checkout/s/{sid}/", f"/checkout/s/{sid}/review",
                 "/checkout/webhooks", "/checkout/healthz", "/checkout/s/x%00y/"]
        for path in paths:
            response = client.open(path, method=method)
            assert response.status_code < 500, (method, path)
            if path == "/checkout/webhooks" and method == "POST":
                assert_machine_headers(response)    # the receiver's answer: not a page
            else:
                assert_page_headers(response, SHOP)
            body = response.get_data(as_text=True)
            assert "Traceback" not in body and "Werkzeug" not in body, (method, path)
            if response.status_code in (404, 405) and method not in ("HEAD", "OPTIONS"):
                assert '<main id="checkout-main"' in body, (method, path)


def session_post_rules(app):
    return sorted(rule.rule for rule in app.url_map.iter_rules()
                  if "POST" in rule.methods and "<session_id>" in rule.rule
                  and not rule.endpoint.startswith("checkout.test_"))


class TestAntiForgery:
    def test_every_session_post_route_refuses_a_missing_token(self, app, client):
        sid, token = open_session(app, client)
        rules = session_post_rules(app)
        assert rules, "no session POST routes: the flow views are missing"
        urls = []
        for rule in rules:
            url = rule.replace("<session_id>", sid)
            choices = re.search(r"<any\(([^)]*)\):\w+>", url)
            if choices:     # one URL per step name the rule takes
                urls += [url.replace(choices.group(0), name.strip(" '"))
                         for name in choices.group(1).split(",")]
            else:
                urls.append(re.sub(r"<[^>]+>", "x", url))
        for url in urls:
            rule = url
            for headers in ({}, HTMX):
                response = client.post(url, data={"csrf_token": "forged"}, headers=headers)
                body = response.get_data(as_text=True)
                assert "could not verify" in body, (rule, response.status_code)
                assert response.status_code == (200 if headers else 400)

    def test_post_without_token_is_refused(self, app, client):
        sid, _ = open_session(app, client)
        response = client.post(f"/checkout/s/{sid}/test-act")
        assert response.status_code == 400
        assert "could not verify" in response.get_data(as_text=True)

    def test_post_with_a_wrong_token_is_refused(self, app, client):
        sid, token = open_session(app, client)
        other_sid, other_token = open_session(app, client)
        for sent in ("", token[:-1], other_token, token + "x"):
            response = client.post(f"/checkout/s/{sid}/test-act", data={"csrf_token": sent})
            assert response.status_code == 400, sent

    def test_form_field_or_header_is_accepted(self, app, client):
        sid, token = open_session(app, client)
        by_field = client.post(f"/checkout/s/{sid}/test-act", data={"csrf_token": token})
        by_header = client.post(f"/checkout/s/{sid}/test-act",
                                headers={"X-Checkout-CSRF": token, **HTMX})
        assert by_field.status_code == by_header.status_code == 200
        assert by_field.get_data(as_text=True) == f"done {sid}"

    def test_htmx_post_without_token_gets_a_swappable_box(self, app, client):
        sid, _ = open_session(app, client)
        response = client.post(f"/checkout/s/{sid}/test-act", headers=HTMX)
        assert response.status_code == 200
        assert 'role="alert"' in response.get_data(as_text=True)

    def test_get_needs_no_token(self, app, client):
        sid, token = open_session(app, client)
        body = client.get(f"/checkout/s/{sid}/test-act").get_data(as_text=True)
        assert f'name="csrf_token" value="{token}"' in body
        assert f'<meta name="csrf-token" content="{token}">' in body
        assert '"X-Checkout-CSRF": "' + token in body.replace("&#34;", '"')


class TestParentOrigin:
    def test_page_names_the_exact_parent_origin(self, app, client):
        sid, _ = open_session(app, client, parentOrigin=SHOP)
        body = client.get(f"/checkout/s/{sid}/", follow_redirects=True).get_data(as_text=True)
        assert f'<meta name="checkout-parent-origin" content="{SHOP}">' in body

    @pytest.mark.parametrize("ancestors, parent, expected", [
        ([SHOP], None, SHOP),
        ([SHOP, "https://b.test"], None, None),
        ([SHOP, "https://b.test"], "https://b.test", "https://b.test"),
        (["'self'"], None, "http://shop.test"),
        (["https://*.shop.test"], None, None),
        (["'none'"], None, None),
    ])
    def test_event_target(self, app, ancestors, parent, expected):
        app.config["CHECKOUT_FRAME_ANCESTORS"] = ancestors

        class Session:
            parent_origin = parent

        with app.test_request_context("/checkout/onramp"):
            assert event_target_origin(Session()) == expected


class TestHtmxHelper:
    def test_redirect(self, app):
        with app.test_request_context("/", headers=HTMX):
            response = htmx_redirect("/next")
            assert response.status_code == 200 and response.headers["HX-Redirect"] == "/next"
        with app.test_request_context("/"):
            response = htmx_redirect("/next")
            assert response.status_code == 303 and response.headers["Location"] == "/next"
            assert "HX-Request" in response.headers["Vary"]

    def test_render_chooses_the_partial_for_htmx(self, app):
        with app.test_request_context("/checkout/x", headers=HTMX):
            body = render("checkout/error.html", "checkout/_error_box.html", title="T",
                          message="M", retry_url=None).get_data(as_text=True)
            assert "<html" not in body and "M" in body
        with app.test_request_context("/checkout/x", headers={**HTMX,
                                      "HX-History-Restore-Request": "true"}):
            assert not is_htmx()


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.I)
STYLE = re.compile(r"<style\b|<[^>]*\sstyle\s*=", re.I)
JS_URL = re.compile(r"""(href|src|action)\s*=\s*["']?\s*javascript:""", re.I)
HX_ON = re.compile(r"\shx-on(:|-)|\shx-vals\s*=\s*['\"]\s*js:|\bhx-vars\b", re.I)


def checkout_templates():
    return sorted(p for p in (TEMPLATES / "checkout").rglob("*.html"))


COMMENTS = re.compile(r"\{#.*?#\}|<!--.*?-->", re.S)


@pytest.mark.parametrize("template", checkout_templates(),
                         ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_no_inline_script_style_or_handlers(template):
    source = COMMENTS.sub("", template.read_text())
    for pattern in (INLINE_SCRIPT, EVENT_HANDLER, STYLE, JS_URL, HX_ON):
        match = pattern.search(source)
        assert match is None, f"{template.name}: {match.group(0) if match else ''}"


def test_the_template_scan_finds_what_it_must():
    # The patterns above must catch each forbidden form, or the scan proves nothing.
    assert INLINE_SCRIPT.search("<script>alert(1)</script>")
    assert not INLINE_SCRIPT.search('<script src="/x.js" defer></script>')
    assert EVENT_HANDLER.search('<button type="button" onclick="go()">')
    assert STYLE.search('<div style="color:red">') and STYLE.search("<style>")
    assert JS_URL.search('<a href="javascript:void(0)">')
    assert HX_ON.search('<div hx-on:click="x()">')


@pytest.mark.parametrize("script", ["checkout.js", "embed.js"])
def test_our_scripts_never_eval_or_broadcast(script):
    from checkout.paths import STATIC

    source = (STATIC / "checkout" / script).read_text()
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)   # comments may mention them
    for forbidden in ("eval(", "new Function", "innerHTML", "document.write", "setTimeout(\"",
                      "'*'", '"*"'):
        assert forbidden not in code, forbidden
