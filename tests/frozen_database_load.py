"""The shop under gunicorn (the shipped settings) and load while its PostgreSQL database is frozen
(every process of the cluster stopped with SIGSTOP), then thawed: what
``tests/test_resilience_gunicorn.py`` checks and ``bench/frozen_database.py`` measures.

The load: shoppers who opened the checkout reloading its page, a sender of signed webhooks at a
steady rate whatever the earlier ones wait for (each delivery refused is sent again after the
thaw, as the upstream retries), a readiness probe twice a second, and a visitor of the shop's own
page, which uses no database.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import requests
from sqlalchemy import create_engine, func, select

from checkout.signature import sign
from checkout.webhooks.store import events_table

from . import postgres
from .resilience_gunicorn_app import WEBHOOK_SECRET
from .resilience_support import shop, standalone_sandbox
from .support.waiting import wait_for
from .webhooks.helpers import order_payload


@dataclass
class Sample:
    kind: str           # "home", "checkout", "webhook", "ready"
    started: float      # time.monotonic()
    seconds: float
    status: int         # 0: no answer at all (a connection error)
    text: str = ""


@dataclass
class Run:
    samples: list[Sample] = field(default_factory=list)
    frozen_at: float = 0.0
    thawed_at: float = 0.0
    deliveries: int = 0         # distinct deliveries sent
    stored: int = 0             # distinct deliveries stored once everything was sent again
    log: str = ""

    def during_freeze(self, kind: str) -> list[Sample]:
        return [s for s in self.samples if s.kind == kind
                and self.frozen_at <= s.started < self.thawed_at]


def _timed(kind: str, call: Callable[[], requests.Response], into: list[Sample]) -> Sample:
    started = time.monotonic()
    try:
        answer = call()
        sample = Sample(kind, started, time.monotonic() - started, answer.status_code,
                        answer.text[:4000])
    except requests.RequestException as exc:
        sample = Sample(kind, started, time.monotonic() - started, 0, repr(exc))
    into.append(sample)
    return sample


def enough_seen(run: Run) -> bool:
    """A freeze long enough to judge by: every kind of request answered a few times during it,
    the shop's own page many times. The probe's six at least: its first, sent as the freeze
    begins, may still be answered (a loaded run's was, one of four)."""
    counts = {kind: len(run.during_freeze(kind)) for kind in ("home", "checkout", "webhook",
                                                               "ready")}
    return counts["home"] >= 60 and min(counts["checkout"], counts["webhook"]) >= 10 \
        and counts["ready"] >= 6


def run(tmp_path: Path, *, shoppers: int = 8, webhooks_per_second: float = 8,
        thaw_when: Callable[[Run], bool] = enough_seen) -> Run:
    """One freeze under load, thawed once ``thaw_when`` says so; every answer timed, the shop's
    log kept."""
    result = Run()
    cluster = postgres.Cluster()
    cluster.start()
    log_file = tmp_path / "shop-errors.log"
    try:
        with standalone_sandbox() as sandbox, \
                shop(tmp_path, sandbox, stderr=log_file,
                     CHECKOUT_TEST_DATABASE_URL=cluster.url) as base:
            _load(base, cluster, result, shoppers, webhooks_per_second, thaw_when)
            engine = create_engine(cluster.url)
            try:
                with engine.connect() as conn:       # one row per distinct body (unique hash)
                    result.stored = conn.execute(select(func.count()).select_from(
                        events_table)).scalar_one()
            finally:
                engine.dispose()
        result.log = log_file.read_text(errors="replace")
    finally:
        cluster.thaw()
        cluster.remove()
    return result


def _load(base: str, cluster: postgres.Cluster, result: Run, shoppers: int,
          webhooks_per_second: float, thaw_when: Callable[[Run], bool]) -> None:
    stop = threading.Event()
    samples = result.samples
    refused: list[bytes] = []
    numbers = itertools.count()

    def deliver(body: bytes, session: requests.Session) -> Sample:
        return _timed("webhook", lambda: session.post(
            f"{base}/checkout/webhooks", data=body, timeout=60,
            headers={"Content-Type": "application/json",
                     "x-signature": sign(body, WEBHOOK_SECRET)}), samples)

    def send_one(body: bytes) -> None:
        with requests.Session() as session:
            if deliver(body, session).status != 200:
                refused.append(body)

    def sender() -> None:
        # As the upstream sends them: at its own pace, whatever the earlier ones are waiting for.
        with ThreadPoolExecutor(64) as deliveries:
            while not stop.is_set():
                payload = order_payload(f"frozen-{next(numbers)}")
                result.deliveries += 1
                deliveries.submit(send_one, json.dumps(payload, separators=(",", ":")).encode())
                stop.wait(1 / webhooks_per_second)

    def shopper() -> None:
        with requests.Session() as session:
            # A checkout opened (the session, then its first page at its step's address), then
            # its page again and again, as a user reading it and moving on does.
            page = session.get(f"{base}/checkout/onramp", timeout=60).url
            while not stop.is_set():
                _timed("checkout", lambda: session.get(page, timeout=60), samples)
                stop.wait(0.5)

    def prober() -> None:
        with requests.Session() as session:
            while not stop.is_set():
                _timed("ready", lambda: session.get(f"{base}/checkout/healthz/ready",
                                                    timeout=60), samples)
                stop.wait(0.5)

    def visitor() -> None:
        with requests.Session() as session:
            while not stop.is_set():
                _timed("home", lambda: session.get(f"{base}/", timeout=60), samples)
                stop.wait(0.05)

    workers = [sender, prober, visitor, *[shopper] * shoppers]
    with ThreadPoolExecutor(len(workers)) as pool:
        running = [pool.submit(work) for work in workers]
        try:
            # The load settles on a database that answers, then the database stops.
            wait_for(lambda: sum(s.kind == "webhook" and s.status == 200
                                 for s in list(samples)) >= 5, timeout=60)
            result.frozen_at, result.thawed_at = time.monotonic(), float("inf")
            cluster.freeze()
            wait_for(lambda: thaw_when(result), timeout=300, interval=0.2)
        finally:
            cluster.thaw()
            result.thawed_at = time.monotonic()
        # Back: the probe says so again, and every delivery refused is sent again until taken.
        wait_for(lambda: any(s.kind == "ready" and s.started > result.thawed_at
                             and s.status == 200 for s in list(samples)), timeout=30)
        stop.set()
        for done in running:
            done.result()
    with requests.Session() as session:
        for body in refused:
            wait_for(lambda body=body: deliver(body, session).status == 200, timeout=30,
                     interval=0.5)
