"""checkout.logs: secrets masked in werkzeug's and gunicorn's log records, request ids."""
from __future__ import annotations

import datetime
import logging
from types import SimpleNamespace

import pytest
from flask import Flask

from checkout import logs
from checkout.journey.creation import short_id
from checkout.logs import MaskSecretsFilter, RequestIdFilter, mask

from .support.waiting import wait_for

# Fixed, not drawn per run: parallel workers must collect the same test ids.
SESSION_ID = "e5i4dRSfPJQKTAouKbHO99a3BlvuPp6iOpGWZwQaYmQ"
LAUNCH_TOKEN = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJmbG93Ijoib25yYW1wIiwianRpIjoiYWJjIn0"
                ".c2lnbmF0dXJlLW9mLXRoZS10b2tlbi1oZXJlLWFiY2RlZg")
# A JWE compact serialisation with the "dir" algorithm: its encrypted key part is empty.
ORDER_TOKEN = ("eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..aXYtMTIzNDU2Nzg5MA"
               ".Y2lwaGVydGV4dC1vZi10aGUtc2Vzc2lvbi1pZA.dGFnLTEyMzQ1Njc4OTAxMg")
CSRF = "KZGppM20sKdc6G7-j_io6s5RT9PcT9eIOdqkTv669kA"
SECRETS = (SESSION_ID, LAUNCH_TOKEN, ORDER_TOKEN, CSRF)


def record(msg: object, args: object = None, name: str = "werkzeug") -> logging.LogRecord:
    rec = logging.LogRecord(name, logging.INFO, __file__, 1, msg, None, None)
    rec.args = args  # type: ignore[assignment]
    return rec


def filtered(rec: logging.LogRecord) -> str:
    assert MaskSecretsFilter().filter(rec) is True
    return rec.getMessage()


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text
    # nor a recognisable part of one
    assert SESSION_ID[:16] not in text and "eyJ" not in text


@pytest.mark.parametrize("path", [
    f"/checkout/s/{SESSION_ID}/pay",
    f"/checkout/s/{SESSION_ID}",
    f"/pay-here/s/{SESSION_ID}/kyc/live?x=1",            # any prefix
    f"/checkout/launch?token={LAUNCH_TOKEN}",
    f"/checkout/launch?lang=fr&token={LAUNCH_TOKEN}&x=1",
    f"/checkout/o/{ORDER_TOKEN}",
    f"/checkout/o/{ORDER_TOKEN}/live",
    f"/checkout/s/{SESSION_ID}/wallet?csrf_token={CSRF}",
    f"/shop/basket?next=%2Fcheckout%2Fs%2F{SESSION_ID}%2Fpay",
    f"/shop/basket?back={LAUNCH_TOKEN}",                  # a JWT anywhere
])
def test_werkzeug_request_lines_are_masked(path):
    # werkzeug's dev server: '"%s" %s %s' with the request line (ANSI-styled on errors) first.
    line = f"\x1b[33mGET {path} HTTP/1.1\x1b[0m"
    text = filtered(record('"%s" %s %s', (line, "404", "-")))
    assert_no_secret(text)
    assert "[masked:" in text and text.endswith('HTTP/1.1\x1b[0m" 404 -')


def test_the_hint_is_stable_keeps_the_route_and_names_the_session_as_the_checkouts_logs_do():
    text = mask(f"GET /checkout/s/{SESSION_ID}/pay?step=2 HTTP/1.1")
    assert text == f"GET /checkout/s/[masked:{short_id(SESSION_ID)}]/pay?step=2 HTTP/1.1"
    assert mask(text) == text                                      # idempotent
    launch = mask(f"/checkout/launch?token={LAUNCH_TOKEN}&lang=fr")
    assert launch.startswith("/checkout/launch?token=[masked:") and launch.endswith("]&lang=fr")
    assert mask(launch) == launch
    order = mask(f"/checkout/o/{ORDER_TOKEN}/live")
    assert order.startswith("/checkout/o/[masked:") and order.endswith("]/live")
    assert mask(order) == order


@pytest.mark.parametrize("text", [
    "GET /checkout/onramp HTTP/1.1", "GET /checkout/static/checkout.css?v=3 HTTP/1.1",
    "GET /checkout/s/short HTTP/1.1", "webhook event 42 stored", "",
])
def test_lines_without_secrets_are_left_alone(text):
    assert mask(text) == text


def gunicorn_atoms(environ: dict, headers: list[tuple[str, str]]) -> dict:
    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    logger = Logger(Config())
    resp = SimpleNamespace(status="200 OK", sent=123, headers=[("Content-Type", "text/html")])
    req = SimpleNamespace(headers=headers)
    return logger.atoms(resp, req, environ, datetime.timedelta(seconds=0, microseconds=1500))


def session_environ(path: str, query: str) -> dict:
    return {"REQUEST_METHOD": "GET", "RAW_URI": f"{path}?{query}" if query else path,
            "PATH_INFO": path, "QUERY_STRING": query, "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "192.0.2.1", "HTTP_REFERER": f"https://pay.example/checkout/s/{SESSION_ID}/"}


def test_gunicorn_access_records_are_masked_in_every_atom():
    from gunicorn.glogging import SafeAtoms

    environ = session_environ(f"/checkout/s/{SESSION_ID}/wallet", f"csrf_token={CSRF}")
    headers = [("Referer", f"https://pay.example/checkout/launch?token={LAUNCH_TOKEN}"),
               ("X-Checkout-CSRF", CSRF), ("Cookie", "host_session=abc"),
               # htmx sends the bare session id here (no "/s/" before it)
               ("X-Checkout-Session", SESSION_ID), ("User-Agent", "Mozilla/5.0")]
    atoms = SafeAtoms(gunicorn_atoms(environ, headers))
    fmt = ('%(h)s "%(r)s" %(s)s "%(f)s" "%({user-agent}i)s" %(U)s %(q)s %({referer}i)s '
           '%({x-checkout-csrf}i)s %({x-checkout-session}i)s %({cookie}i)s %({raw_uri}e)s '
           '%({nothere}i)s')
    rec = logging.getLogger("gunicorn.access").makeRecord(
        "gunicorn.access", logging.INFO, __file__, 1, fmt, (atoms,), None)
    assert isinstance(rec.args, SafeAtoms)
    text = filtered(rec)
    assert_no_secret(text)
    assert "host_session" not in text
    assert f"/checkout/s/[masked:{short_id(SESSION_ID)}]/wallet" in text
    assert '"Mozilla/5.0"' in text and text.endswith(" -")          # missing atoms still "-"
    assert isinstance(rec.args, SafeAtoms)


def test_the_gunicorn_logger_class_masks_its_access_and_error_logs(tmp_path):
    from gunicorn.config import Config

    from checkout.logs import GunicornLogger

    access_log, error_log = tmp_path / "access.log", tmp_path / "error.log"
    cfg = Config()
    cfg.set("accesslog", str(access_log))
    cfg.set("errorlog", str(error_log))
    cfg.set("access_log_format", '%(h)s "%(r)s" %(s)s "%(f)s"')
    logger = GunicornLogger(cfg)
    try:
        environ = session_environ(f"/checkout/o/{ORDER_TOKEN}", "")
        resp = SimpleNamespace(status="200 OK", sent=10, headers=[])
        logger.access(resp, SimpleNamespace(headers=[]), environ, datetime.timedelta(seconds=1))
        logger.error("Error handling request /checkout/launch?token=%s", LAUNCH_TOKEN)
        logger.setup(cfg)                                    # a reload adds no second filter
        assert sum(isinstance(f, MaskSecretsFilter) for f in logger.access_log.filters) == 1
    finally:
        for log in (logger.access_log, logger.error_log):
            for handler in list(log.handlers):
                handler.close()
                log.removeHandler(handler)
            log.filters.clear()
    access, error = access_log.read_text(), error_log.read_text()
    assert "/checkout/o/[masked:" in access and "/checkout/s/[masked:" in access
    assert "launch?token=[masked:" in error
    assert_no_secret(access + error)


def test_the_gunicorn_logger_class_is_importable_by_name():
    from gunicorn.glogging import Logger
    from gunicorn.util import load_class

    cls = load_class("checkout.logs.GunicornLogger")
    assert issubclass(cls, Logger) and cls is logs.GunicornLogger
    with pytest.raises(AttributeError):
        logs.NoSuchThing  # noqa: B018


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


@pytest.mark.parametrize("msg, args", [
    ("plain", None), ("plain %s", ()), (None, None), (42, None), (Unprintable(), None),
    (b"GET /s/" + SESSION_ID.encode(), None), ("%(a)s", {"a": 1, 2: None}),
    ("%s %s", (Unprintable(), f"/s/{SESSION_ID}")), ({"msg": f"/s/{SESSION_ID}"}, None),
    ("%s", [f"/s/{SESSION_ID}"]),
])
def test_the_filters_never_raise_nor_drop_a_record(msg, args):
    rec = record(msg, args)
    assert MaskSecretsFilter().filter(rec) is True
    assert RequestIdFilter().filter(rec) is True and rec.request_id == "-"


def test_a_non_string_message_that_prints_a_session_id_is_masked():
    rec = record({"path": f"/checkout/s/{SESSION_ID}/pay"})
    assert SESSION_ID not in filtered(rec)


# -- request ids ------------------------------------------------------------------------------------

def test_init_app_installs_the_filters_once_without_touching_handlers_or_levels(app: Flask):
    from checkout import Checkout

    root_handlers = list(logging.getLogger().handlers)
    werkzeug = logging.getLogger("werkzeug")
    level, handlers = werkzeug.level, list(werkzeug.handlers)
    Checkout(Flask("another_host", instance_path=app.instance_path))
    for name in ("werkzeug", "gunicorn.access", "gunicorn.error"):
        assert sum(isinstance(f, MaskSecretsFilter) for f in logging.getLogger(name).filters) == 1
    checkout_loggers = [logger for name, logger in logging.Logger.manager.loggerDict.items()
                        if name.split(".")[0] == "checkout" and isinstance(logger, logging.Logger)]
    assert {"checkout.sessions", "checkout.creation"} <= {lg.name for lg in checkout_loggers}
    for logger in [logging.getLogger("checkout"), *checkout_loggers]:
        assert sum(isinstance(f, RequestIdFilter) for f in logger.filters) == 1, logger.name
    assert werkzeug.level == level and werkzeug.handlers == handlers
    assert logging.getLogger().handlers == root_handlers


def test_masking_of_the_servers_loggers_can_be_turned_off(config, monkeypatch):
    from tests.conftest import make_app

    werkzeug = logging.getLogger("werkzeug")
    monkeypatch.setattr(werkzeug, "filters", [])
    make_app({**config, "CHECKOUT_MASK_ACCESS_LOGS": False})
    assert werkzeug.filters == []
    make_app(dict(config))
    assert any(isinstance(f, MaskSecretsFilter) for f in werkzeug.filters)


def test_a_request_id_is_made_kept_for_the_request_and_echoed(app: Flask):
    client = app.test_client()
    first = client.get("/checkout/onramp").headers["X-Request-ID"]
    second = client.get("/checkout/onramp").headers["X-Request-ID"]
    assert first != second and len(first) == 32
    with app.test_request_context("/checkout/onramp"):
        assert logs.request_id() == logs.request_id()


def test_a_sane_incoming_request_id_is_kept(app: Flask):
    rid = "3f2b9c1e-8a4d-4c7e-9b1a-2d3e4f5a6b7c"
    response = app.test_client().get("/checkout/onramp", headers={"X-Request-ID": rid})
    assert response.headers["X-Request-ID"] == rid


@pytest.mark.parametrize("hostile", [
    "a" * 129, "abc\ndef", "abc\x1bdef", "abc def", "<script>", "", "ab\tc", "\u00e9t\u00e9",
])
def test_a_hostile_incoming_request_id_is_replaced(app: Flask, hostile):
    with app.test_request_context("/checkout/onramp", environ_base={"HTTP_X_REQUEST_ID": hostile}):
        rid = logs.request_id()
    assert rid != hostile and len(rid) == 32 and rid.isalnum()


def test_host_pages_get_no_request_id_header(app: Flask):
    app.add_url_rule("/basket", "basket", lambda: "basket")
    assert "X-Request-ID" not in app.test_client().get("/basket").headers


# -- a real gunicorn ----------------------------------------------------------------------------

def test_gunicorn_with_the_logger_class_writes_no_secret_and_the_request_id(config, tmp_path):
    import requests

    from tests.conftest import make_app
    from tests.gunicorn_support import gunicorn_workers
    from tests.launch_support import session_id_from

    database = f"sqlite:///{tmp_path}/logs.sqlite3"
    make_app({**config, "CHECKOUT_DATABASE_URL": database})          # the tables, once
    access_format = '"%(r)s" %(s)s "%(f)s" %({checkout.request_id}e)s'
    with gunicorn_workers("tests.logs_gunicorn_app:create()",
                          {"CHECKOUT_TEST_DATABASE_URL": database}, tmp_path,
                          access_format=access_format, workers=1,
                          extra_args=["--logger-class", "checkout.logs.GunicornLogger"]) as (
                              port, access_log):
        base = f"http://127.0.0.1:{port}/checkout"
        opened = requests.get(base + "/onramp", allow_redirects=False, timeout=20)
        session_url = opened.headers["Location"]
        session_id = session_id_from(session_url)
        page = requests.get(session_url if session_url.startswith("http") else
                            f"http://127.0.0.1:{port}{session_url}",
                            headers={"Referer": f"{base}/launch?token={LAUNCH_TOKEN}"},
                            allow_redirects=False, timeout=20)
        launched = requests.get(f"{base}/launch?token={LAUNCH_TOKEN}", allow_redirects=False,
                                timeout=20)
        ids = [r.headers["X-Request-ID"] for r in (opened, page, launched)]
        wait_for(lambda: len(access_log.read_text().splitlines()) >= 3, 10)
    text = access_log.read_text()
    assert session_id not in text and LAUNCH_TOKEN not in text and "eyJ" not in text
    # One line per request, ending with its id (the lines of two requests may come in any order).
    by_id = {line.rsplit(" ", 1)[-1]: line for line in text.splitlines()}
    assert len(set(ids)) == 3 and set(ids) <= set(by_id)
    assert f"/checkout/s/[masked:{short_id(session_id)}]" in by_id[ids[1]]
    assert '"http://127.0.0.1' in by_id[ids[1]] and "/launch?token=[masked:" in by_id[ids[1]]
    assert "/checkout/launch?token=[masked:" in by_id[ids[2]]


def test_flasks_line_about_an_unhandled_error_on_a_session_page_is_masked(app: Flask, caplog):
    def boom(session_id: str) -> str:
        raise RuntimeError("boom")

    app.add_url_rule("/checkout/s/<session_id>/boom", "boom", boom)
    app.testing = False                         # answered with a 500 and logged, not raised
    app.config["PROPAGATE_EXCEPTIONS"] = False
    caplog.set_level(logging.ERROR)
    assert app.test_client().get(f"/checkout/s/{SESSION_ID}/boom").status_code == 500
    [line] = [r.getMessage() for r in caplog.records if r.name == app.logger.name]
    assert line == f"Exception on /checkout/s/[masked:{short_id(SESSION_ID)}]/boom [GET]"


def test_a_traceback_quoting_a_secret_is_masked_as_handlers_print_it():
    try:
        raise RuntimeError(f"404 Not Found for url: https://pay.example/s/{SESSION_ID}/pay"
                           f" (token={LAUNCH_TOKEN})")
    except RuntimeError:
        import sys
        rec = logging.LogRecord("werkzeug", logging.ERROR, __file__, 1, "failed", None,
                                sys.exc_info(), sinfo=f"Stack (most recent call last):\n"
                                                      f"  /s/{SESSION_ID}/pay")
    MaskSecretsFilter().filter(rec)
    printed = logging.Formatter("%(message)s").format(rec)
    assert "RuntimeError: 404 Not Found for url: https://pay.example/s/[masked:" in printed
    assert "Traceback (most recent call last)" in printed and "Stack (most recent" in printed
    assert_no_secret(printed)


def test_flasks_traceback_of_an_unhandled_error_is_masked(app: Flask, caplog):
    def boom(session_id: str) -> str:
        raise RuntimeError(f"could not load /s/{session_id} with {ORDER_TOKEN}")

    app.add_url_rule("/checkout/s/<session_id>/boom", "boom", boom)
    app.testing = False
    app.config["PROPAGATE_EXCEPTIONS"] = False
    caplog.set_level(logging.ERROR)
    assert app.test_client().get(f"/checkout/s/{SESSION_ID}/boom").status_code == 500
    assert "RuntimeError: could not load /s/[masked:" in caplog.text
    assert_no_secret(caplog.text)
