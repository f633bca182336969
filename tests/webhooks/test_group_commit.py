"""Group commit: concurrent items written together, each thread answered with its own result only
once the write that holds its item has returned."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from checkout.webhooks.group_commit import GroupCommit


class Writes:
    """A write function whose first call blocks until released, so others queue behind it."""

    def __init__(self, fail_on: str | None = None, refuse: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail_on = fail_on      # the whole write raises when this item is in the batch
        self.refuse = refuse        # only this item's result is an exception

    def __call__(self, batch: list[str]) -> list[str | Exception]:
        self.batches.append(list(batch))
        if len(self.batches) == 1:
            self.started.set()
            assert self.release.wait(10)
        if self.fail_on in batch:
            raise RuntimeError("the database is down")
        return [ValueError(item) if item == self.refuse else item.upper() for item in batch]


def wait_until_queued(commit: GroupCommit, count: int) -> None:
    """Until ``count`` threads wait behind the write in progress (a condition, polled)."""
    deadline = time.monotonic() + 10
    while True:
        with commit._guard:
            if len(commit._queue) == count:
                return
        assert time.monotonic() < deadline, "the threads never queued"
        threading.Event().wait(0.001)


def test_alone_a_thread_writes_its_own_item_at_once():
    writes = Writes()
    writes.release.set()
    commit = GroupCommit(writes, max_batch=10)
    assert commit.submit("a") == "A"
    assert commit.submit("b") == "B"
    assert writes.batches == [["a"], ["b"]]


def test_items_that_arrive_during_a_write_go_in_one_batch_and_each_gets_its_result():
    writes = Writes()
    commit = GroupCommit(writes, max_batch=10)
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(commit.submit, "first")
        assert writes.started.wait(10)
        others = [pool.submit(commit.submit, f"item{n}") for n in range(5)]
        wait_until_queued(commit, 5)           # all five wait behind the write in progress
        assert not any(f.done() for f in [first, *others])    # nobody answered before its write
        writes.release.set()
        assert first.result(10) == "FIRST"
        assert [f.result(10) for f in others] == [f"ITEM{n}" for n in range(5)]
    assert writes.batches[0] == ["first"]
    assert sorted(writes.batches[1]) == [f"item{n}" for n in range(5)]
    assert len(writes.batches) == 2
    assert not commit._busy and not commit._queue


def test_a_batch_takes_at_most_max_batch_items_and_the_next_leader_takes_the_rest():
    writes = Writes()
    commit = GroupCommit(writes, max_batch=3)
    with ThreadPoolExecutor(8) as pool:
        first = pool.submit(commit.submit, "first")
        assert writes.started.wait(10)
        others = [pool.submit(commit.submit, f"i{n}") for n in range(7)]
        wait_until_queued(commit, 7)
        writes.release.set()
        assert sorted(f.result(10) for f in [first, *others]) == sorted(
            ["FIRST", *(f"I{n}" for n in range(7))])
    assert [len(batch) for batch in writes.batches] == [1, 3, 3, 1]


def test_a_failed_write_fails_every_item_of_its_batch_and_no_other():
    writes = Writes(fail_on="bad")
    commit = GroupCommit(writes, max_batch=10)
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(commit.submit, "first")
        assert writes.started.wait(10)
        batch = [pool.submit(commit.submit, item) for item in ("bad", "good")]
        wait_until_queued(commit, 2)
        writes.release.set()
        assert first.result(10) == "FIRST"
        for future in batch:
            with pytest.raises(RuntimeError, match="database is down"):
                future.result(10)
    assert commit.submit("later") == "LATER"          # the committer is not stuck


def test_an_item_whose_result_is_an_exception_raises_in_its_own_thread_only():
    writes = Writes(refuse="refused")
    commit = GroupCommit(writes, max_batch=10)
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(commit.submit, "first")
        assert writes.started.wait(10)
        refused, fine = (pool.submit(commit.submit, item) for item in ("refused", "fine"))
        wait_until_queued(commit, 2)
        writes.release.set()
        with pytest.raises(ValueError, match="refused"):
            refused.result(10)
        assert fine.result(10) == "FINE" and first.result(10) == "FIRST"


def test_many_threads_many_items_every_result_once():
    writes = Writes()
    writes.release.set()
    commit = GroupCommit(writes, max_batch=7)
    items = [f"x{n}" for n in range(400)]
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(commit.submit, items))
    assert results == [item.upper() for item in items]
    assert sorted(item for batch in writes.batches for item in batch) == sorted(items)
    assert max(len(batch) for batch in writes.batches) <= 7
