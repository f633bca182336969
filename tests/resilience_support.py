"""The shop of ``tests/resilience_gunicorn_app.py`` under real gunicorn with the shipped settings,
and the standalone sandbox it calls over HTTP: what the resilience tests and the bench scripts
(``bench/slow_upstream.py``, ``bench/frozen_database.py``) start."""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import requests

from checkout.sandbox import create_app as create_sandbox

from .gunicorn_support import free_port, gunicorn_workers
from .resilience_gunicorn_app import CLIENT_ID, CLIENT_SECRET, WEBHOOK_SECRET
from .support.live_server import live_server
from .support.sandbox_clock import MANUAL


@contextmanager
def standalone_sandbox() -> Iterator[str]:
    """The sandbox as its own HTTP server, checking the checkout's signatures."""
    sandbox = create_sandbox({"SANDBOX_CLIENT_ID": CLIENT_ID,
                              "SANDBOX_CLIENT_SECRET": CLIENT_SECRET,
                              "SANDBOX_WEBHOOK_SECRET": WEBHOOK_SECRET, **MANUAL})
    with live_server(sandbox) as url:
        yield url


@contextmanager
def shop(tmp_path, upstream: str, extra_args: Sequence[str] = (), stderr: Path | None = None,
         **env: str) -> Iterator[str]:
    """The shop under gunicorn with the shipped settings (2 workers); ``extra_args`` after them;
    its error output in ``stderr``."""
    port = free_port()
    with gunicorn_workers(
            "tests.resilience_gunicorn_app:create()",
            {"CHECKOUT_TEST_DATABASE_URL": f"sqlite:///{tmp_path}/shop.sqlite3",
             "CHECKOUT_TEST_UPSTREAM": upstream,
             "CHECKOUT_TEST_PUBLIC_URL": f"http://127.0.0.1:{port}", **env},
            tmp_path, access_format='%(s)s "%(r)s" %(L)s', workers=2, shipped_settings=True,
            port=port, extra_args=extra_args, stderr=stderr):
        yield f"http://127.0.0.1:{port}"


def open_checkout(base: str) -> tuple[int, float, str]:
    """A shopper opens the checkout: the session, then its first page (reference data from the
    upstream). Status, seconds, page."""
    started = time.monotonic()
    answer = requests.get(f"{base}/checkout/onramp", timeout=120)
    return answer.status_code, time.monotonic() - started, answer.text
