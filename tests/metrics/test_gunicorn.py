"""Metrics across gunicorn workers (``-c python:checkout.gunicorn_config``): whichever worker
answers a scrape, it shows the sum of every worker's counts, and nothing of an earlier run."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import requests
from prometheus_client.mmap_dict import MmapedDict, mmap_key

from ..conftest import make_app
from ..gunicorn_support import ROOT, gunicorn_workers
from .support import TOKEN, Scrape, bearer

OPENED = "checkout_sessions_opened_total"
HELP = "Checkout sessions opened, by flow and start (launch token or unsigned)"


def _left_by_an_earlier_run(directory) -> None:
    """A counter file of a process of an earlier server, counting 1000 sessions."""
    stale = MmapedDict(str(directory / "counter_999999.db"))
    stale.write_value(mmap_key(OPENED, OPENED, ["flow", "start"], ["onramp", "unsigned"], HELP),
                      1000.0, 0.0)
    stale.close()


def test_a_scrape_shows_the_sum_of_both_workers_counts(config, tmp_path):
    database = f"sqlite:///{tmp_path}/metrics.sqlite3"
    make_app({**config, "CHECKOUT_DATABASE_URL": database})          # the tables, once
    directory = tmp_path / "multiproc"
    directory.mkdir()
    _left_by_an_earlier_run(directory)
    env = {"CHECKOUT_TEST_DATABASE_URL": database, "CHECKOUT_TEST_METRICS_TOKEN": TOKEN,
           "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    access_format = '%(p)s "%(r)s" %(s)s "%({authorization}i)s"'
    with gunicorn_workers("tests.metrics.gunicorn_app:create()", env, tmp_path,
                          access_format=access_format, workers=2,
                          extra_args=["-c", "python:checkout.gunicorn_config"]) as (
                              port, access_log):
        base = f"http://127.0.0.1:{port}/checkout"

        def open_session(_: int) -> int:
            # A connection of its own each time: either worker may take it.
            return requests.get(base + "/onramp", allow_redirects=False, timeout=20,
                                headers={"Connection": "close"}).status_code

        def workers_that_opened() -> set[str]:
            return {line.split(" ", 1)[0] for line in access_log.read_text().splitlines()
                    if "/checkout/onramp" in line}

        opened = 0
        with ThreadPoolExecutor(8) as pool:
            while len(workers_that_opened()) < 2:
                assert opened < 400, "every request went to one worker"
                assert set(pool.map(open_session, range(8))) == {303}
                opened += 8
        scrapes = [requests.get(base + "/metrics", headers={**bearer(), "Connection": "close"},
                                timeout=20) for _ in range(6)]
        refused = requests.get(base + "/metrics", timeout=20)
    assert refused.status_code == 401
    assert all(s.status_code == 200 for s in scrapes)
    assert {s.headers["Content-Type"] for s in scrapes} == \
        {"text/plain; version=0.0.4; charset=utf-8"}
    for answer in scrapes:
        assert Scrape(answer.text).value(OPENED, flow="onramp", start="unsigned") == opened
    log = access_log.read_text()
    # The Authorization header is in the format: gunicorn_config's logger class masks it.
    assert TOKEN not in log
    assert len(re.findall(r'"GET /checkout/metrics HTTP/1.1" 200 "\[masked\]"', log)) == 6


def test_the_config_module_makes_a_private_directory_when_none_is_set(tmp_path):
    program = (
        "import os\n"
        "import checkout.gunicorn_config as conf\n"
        "path = os.environ['PROMETHEUS_MULTIPROC_DIR']\n"
        "assert os.path.isdir(path) and os.listdir(path) == []\n"
        "conf.on_exit(None)\n"
        "print(os.path.exists(path))\n")
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
