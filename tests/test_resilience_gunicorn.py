"""A hanging upstream never takes the shop down, under real gunicorn with the shipped settings:
the shop's own page stays fast, and every checkout page ends with the friendly "not answering"
page within the page's budget. The upstream is the standalone sandbox over HTTP, with signing,
behind the fault proxy (tests/faults.py)."""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import requests

from checkout.config import DEFAULTS
from checkout.sandbox import create_app as create_sandbox
from checkout.upstream.budget import DEFAULT_TIMEOUTS, REFERENCE

from .faults import fault_proxy
from .gunicorn_support import free_port, gunicorn_workers
from .resilience_gunicorn_app import CLIENT_ID, CLIENT_SECRET, WEBHOOK_SECRET
from .support.live_server import live_server
from .support.waiting import wait_for

NOT_ANSWERING = "Our payment partner is not answering right now"
BUDGET = float(DEFAULTS["CHECKOUT_REQUEST_BUDGET"])
# A page that waited for the hanging upstream took its reference call's read timeout (5 s); one
# answered from an open breaker waits for nothing, however long a loaded machine takes to serve it.
WAITED_FOR_THE_UPSTREAM = 0.8 * DEFAULT_TIMEOUTS[REFERENCE][1]


@contextmanager
def standalone_sandbox() -> Iterator[str]:
    """The sandbox as its own HTTP server, checking the checkout's signatures."""
    sandbox = create_sandbox({"SANDBOX_CLIENT_ID": CLIENT_ID,
                              "SANDBOX_CLIENT_SECRET": CLIENT_SECRET,
                              "SANDBOX_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with live_server(sandbox) as url:
        yield url


@contextmanager
def shop(tmp_path, upstream: str, extra_args: Sequence[str] = (), **env: str) -> Iterator[str]:
    """The shop under gunicorn with the shipped settings (2 workers); ``extra_args`` after them."""
    port = free_port()
    with gunicorn_workers(
            "tests.resilience_gunicorn_app:create()",
            {"CHECKOUT_TEST_DATABASE_URL": f"sqlite:///{tmp_path}/shop.sqlite3",
             "CHECKOUT_TEST_UPSTREAM": upstream,
             "CHECKOUT_TEST_PUBLIC_URL": f"http://127.0.0.1:{port}", **env},
            tmp_path, access_format='%(s)s "%(r)s" %(L)s', workers=2, shipped_settings=True,
            port=port, extra_args=extra_args):
        yield f"http://127.0.0.1:{port}"


def open_checkout(base: str) -> tuple[int, float, str]:
    """A shopper opens the checkout: the session, then its first page (reference data from the
    upstream). Status, seconds, page."""
    started = time.monotonic()
    answer = requests.get(f"{base}/checkout/onramp", timeout=120)
    return answer.status_code, time.monotonic() - started, answer.text


def test_a_hanging_upstream_never_takes_the_shop_down(tmp_path):
    with standalone_sandbox() as sandbox, fault_proxy(sandbox) as proxy, \
            shop(tmp_path, proxy.url) as base:
        # The upstream hangs from the start: no page has its reference data cached yet.
        proxy.set("hang")
        served_meanwhile = 0
        with ThreadPoolExecutor(20) as shoppers:
            checkouts = [shoppers.submit(open_checkout, base) for _ in range(20)]
            wait_for(lambda: proxy.calls["hang"] >= 1)          # the upstream is being waited on
            with requests.Session() as visitor:
                while not all(f.done() for f in checkouts):
                    assert visitor.get(f"{base}/", timeout=30).status_code == 200
                    # Answered while no checkout has been answered yet: not queued behind them.
                    served_meanwhile += not any(f.done() for f in checkouts)
            results = [f.result() for f in checkouts]
        # Each checkout waits seconds on the upstream; the shop answers its own page meanwhile,
        # again and again (workers blocked by the checkout would answer it only after them).
        assert served_meanwhile >= 5, served_meanwhile
        for status, seconds, page in results:
            assert status == 502 and NOT_ANSWERING in page, (status, page[:300])
            assert seconds < BUDGET + 2, seconds
        # A worker's breaker of the reference data opens once its window holds
        # CHECKOUT_BREAKER_MIN_CALLS (3) failed requests: a first page asks two (countries and
        # assets, which the other pages of the wave wait for), so a second wave opens it.
        with ThreadPoolExecutor(20) as shoppers:
            more = [f.result() for f in [shoppers.submit(open_checkout, base)
                                         for _ in range(20)]]
        for status, seconds, page in more:
            assert status == 502 and NOT_ANSWERING in page, (status, page[:300])
            assert seconds < BUDGET + 2, seconds
        # The breakers are open now: the next shoppers are answered at once, nothing is sent
        # but a worker's one trial call once its wait is over.
        sent = proxy.calls["hang"]
        with ThreadPoolExecutor(10) as shoppers:
            second = [f.result() for f in [shoppers.submit(open_checkout, base)
                                           for _ in range(10)]]
        waits = [seconds for _status, seconds, _page in second]
        assert all(s == 502 and NOT_ANSWERING in p for s, _w, p in second)
        # Only a worker's trial (one per wait of CHECKOUT_BREAKER_RESET_SECONDS) is sent, and
        # only the page that makes it waits for its timeout; nobody waits behind it.
        assert len([w for w in waits if w > WAITED_FOR_THE_UPSTREAM]) <= 2, waits
        assert max(waits) < BUDGET, waits
        assert proxy.calls["hang"] - sent <= 2
        # Back: the breaker's trial call closes it, and the checkout answers again.
        proxy.set("pass")
        wait_for(lambda: open_checkout(base)[0] == 200, timeout=30, interval=0.5)
