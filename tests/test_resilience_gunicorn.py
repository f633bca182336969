"""A hanging upstream or a frozen database never takes the shop down, under real gunicorn with the
shipped settings: the shop's own page stays fast, and every checkout page ends with the friendly
"not answering" or "try again in a moment" page within its time. The upstream is the standalone
sandbox over HTTP, with signing, behind the fault proxy (tests/faults.py)."""
from __future__ import annotations

import statistics
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from checkout.config import DEFAULTS
from checkout.store import REQUEST_DATABASE_TIME
from checkout.upstream.budget import DEFAULT_TIMEOUTS, REFERENCE

from . import frozen_database_load
from .faults import fault_proxy
from .resilience_support import open_checkout, shop, standalone_sandbox
from .support.waiting import wait_for

NOT_ANSWERING = "Our payment partner is not answering right now"
BUDGET = float(DEFAULTS["CHECKOUT_REQUEST_BUDGET"])
# A page that waited for the hanging upstream took its reference call's read timeout (5 s); one
# answered from an open breaker waits for nothing, however long a loaded machine takes to serve it.
WAITED_FOR_THE_UPSTREAM = 0.8 * DEFAULT_TIMEOUTS[REFERENCE][1]


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


@pytest.mark.postgres
def test_a_frozen_database_never_takes_the_shop_down(tmp_path):
    """PostgreSQL frozen (SIGSTOP) under shoppers, a webhook sender and a probe: the shop's own
    page is never held behind the database; each checkout page, delivery and probe is answered
    503 within the request's time for the database (the first of each process), then at once;
    the log tells each kind of failure once per outage a process saw, never a traceback; after
    the thaw every delivery refused is taken again, and none is lost or doubled."""
    run = frozen_database_load.run(tmp_path)
    held = REQUEST_DATABASE_TIME + 1.5      # the database's time, and a loaded machine's margin
    home = run.during_freeze("home")
    assert all(s.status == 200 for s in home)
    assert statistics.median(s.seconds for s in home) < 0.5
    assert max(s.seconds for s in home) < REQUEST_DATABASE_TIME, max(s.seconds for s in home)
    for kind in ("checkout", "webhook", "ready"):
        answered = run.during_freeze(kind)
        refused = [s for s in answered if s.status == 503]
        assert len(refused) >= 0.8 * len(answered), (kind, [s.status for s in answered])
        assert all(s.status in (200, 503) for s in answered), (kind, answered)
        assert max(s.seconds for s in refused) < held, (kind, [s.seconds for s in refused])
    for page in run.during_freeze("checkout"):
        if page.status == 503:
            assert "We cannot reach our records right now" in page.text
    assert "Traceback" not in run.log, run.log[-3000:]
    # Each kind of failure told once per outage and worker. An outage is each worker's own: the
    # freeze is one for each of the two, and on a loaded machine the thawed database's first
    # answers may come late enough for a worker to see a second, short one (a full run's did).
    warnings = [line for line in run.log.splitlines() if "WARNING" in line]
    outages = run.log.count("database not answering")
    assert 1 <= outages <= 4, warnings
    assert run.log.count("database answering again") <= outages, warnings
    for line in ("checkout page answered 503", "webhook not stored",
                 "healthz: database unavailable"):
        assert 1 <= run.log.count(line) <= outages, (line, warnings)
    assert run.stored == run.deliveries
