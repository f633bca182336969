"""The checkout's log lines are seen by default: under gunicorn with no logging set up by the host,
its warnings and its INFO lines of events (the schema upgraded) reach gunicorn's error log with
time and level, once per event, never one per request; a host's own configuration decides
otherwise."""
from __future__ import annotations

import logging
import re

import requests

from checkout import logs

from .gunicorn_support import gunicorn_workers
from .support.waiting import wait_for
from .webhooks.helpers import order_payload, signed_webhook

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) checkout\.\S+ "
                  r"\[[0-9a-f-]+\] ")


def test_under_gunicorn_with_no_logging_set_up_the_checkout_is_heard(tmp_path):
    error_log = tmp_path / "error.log"
    with gunicorn_workers(
            "tests.logs_gunicorn_app:create()",
            {"CHECKOUT_TEST_DATABASE_URL": f"sqlite:///{tmp_path}/shop.sqlite3"}, tmp_path,
            access_format="%(s)s", workers=1, shipped_settings=True,
            extra_args=["--error-logfile", str(error_log)]) as (port, _access):
        base = f"http://127.0.0.1:{port}"
        forged = signed_webhook(order_payload("o1"), signature="0" * 64)
        for _ in range(3):
            answer = requests.post(f"{base}/checkout/webhooks", data=forged.body,
                                   headers=forged.headers, timeout=30)
            assert answer.status_code == 401
        for _ in range(3):                      # pages that ask the sandbox: no line each
            assert requests.get(f"{base}/checkout/onramp", timeout=30).status_code == 200
        wait_for(lambda: "webhook refused" in error_log.read_text(), timeout=10)
    lines = [line for line in error_log.read_text().splitlines() if " checkout." in line]
    upgraded = [line for line in lines if "database was upgraded" in line]
    assert len(upgraded) == 1 and LINE.match(upgraded[0]) and " INFO " in upgraded[0]
    refused = [line for line in lines if "webhook refused" in line]
    assert len(refused) == 3 and all(LINE.match(line) and " WARNING " in line
                                     for line in refused)
    # Every upstream call and page is DEBUG: nothing of the three pages.
    assert not [line for line in lines if "upstream GET" in line], lines


def test_a_hosts_own_logging_configuration_is_respected(monkeypatch):
    root = logging.getLogger()
    checkout_logger = logging.getLogger("checkout")
    for name in logs.SHOWN_BY_DEFAULT:
        monkeypatch.setattr(logging.getLogger(name), "handlers", [])
        monkeypatch.setattr(logging.getLogger(name), "level", logging.NOTSET)
    monkeypatch.setattr(root, "handlers", [logging.NullHandler()])
    # Not under gunicorn here: the handler writes to stderr.
    monkeypatch.setattr(logging.getLogger("gunicorn.error"), "handlers", [])
    logs.show_by_default()
    assert checkout_logger.handlers == [] and checkout_logger.level == logging.NOTSET
    monkeypatch.setattr(root, "handlers", [])
    logs.show_by_default()
    assert len(checkout_logger.handlers) == 1 and checkout_logger.level == logging.INFO
    logs.show_by_default()                      # a second app of the process adds nothing
    assert len(checkout_logger.handlers) == 1


def test_logging_set_up_after_the_checkout_is_not_written_twice(monkeypatch, capsys):
    root = logging.getLogger()
    for name in logs.SHOWN_BY_DEFAULT:
        monkeypatch.setattr(logging.getLogger(name), "handlers", [])
        monkeypatch.setattr(logging.getLogger(name), "level", logging.NOTSET)
    monkeypatch.setattr(root, "handlers", [])
    monkeypatch.setattr(logging.getLogger("gunicorn.error"), "handlers", [])
    logs.show_by_default()
    logging.getLogger("checkout.test").warning("before the host set up logging")
    assert "WARNING checkout.test [-] before the host set up logging" in capsys.readouterr().err
    seen: list[str] = []

    class Host(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    monkeypatch.setattr(root, "handlers", [Host()])       # the host's logging, set up later
    logging.getLogger("checkout.test").warning("after")
    assert seen == ["after"] and capsys.readouterr().err == ""
