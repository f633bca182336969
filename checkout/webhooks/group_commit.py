"""Group commit: the items of concurrent threads written together, one statement and one commit.

The receiver must commit each delivery before it answers. At hundreds of deliveries a second, one
INSERT and one commit per request spends more time in the database driver, SQLAlchemy and
(SQLite) the single writer's turn-taking than in anything else the receiver does. Here the first
thread to arrive writes (the leader), taking every item queued by then, up to ``max_batch``; the
others wait for its result. Threads arriving meanwhile queue for the next batch, which the first
of them leads. A thread that arrives alone writes its own item at once: nobody waits for company,
so a batch is only as large as the concurrency that is already there.

Each thread gets its own item's result only after the batch's write returned, so "acknowledged
only once committed" holds for every item of it.
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class _Slot(Generic[T, R]):
    __slots__ = ("item", "result", "error", "leads", "wake")

    def __init__(self, item: T) -> None:
        self.item = item
        self.result: R | None = None
        self.error: BaseException | None = None
        self.leads = False
        # A plain lock, taken now and released by the leader: waking a thread costs no more.
        self.wake = threading.Lock()
        self.wake.acquire()

    def outcome(self) -> R:
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]   # set with the batch's results


class GroupCommit(Generic[T, R]):
    """``submit(item)`` returns ``write([..., item, ...])``'s result for ``item``.

    ``write`` gets a batch of items and returns one result per item, in order; a result that is
    an exception is raised in its item's thread. If ``write`` raises, every item of the batch gets
    that exception.
    """

    def __init__(self, write: Callable[[list[T]], list[R | Exception]], max_batch: int) -> None:
        self._write = write
        self._max_batch = max_batch
        self._guard = threading.Lock()
        self._queue: deque[_Slot[T, R]] = deque()
        # True while a thread leads a batch. When it is False the queue is empty: a leader that
        # finds the queue not empty hands over rather than setting it False.
        self._busy = False

    def submit(self, item: T) -> R:
        slot: _Slot[T, R] = _Slot(item)
        with self._guard:
            self._queue.append(slot)
            leads = not self._busy
            self._busy = True
        if not leads:
            slot.wake.acquire()         # written by a leader, or this thread leads the next batch
            leads = slot.leads
        if leads:
            self._lead()
        return slot.outcome()

    def _lead(self) -> None:
        # This thread's slot is the first in the queue: it arrived to an idle committer, or it was
        # the first to wait and was handed the lead.
        with self._guard:
            batch = [self._queue.popleft() for _ in range(min(self._max_batch, len(self._queue)))]
        try:
            results = self._write([slot.item for slot in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"{len(results)} results for a batch of {len(batch)}")
            for slot, result in zip(batch, results, strict=True):
                if isinstance(result, Exception):
                    slot.error = result
                else:
                    slot.result = result
        except BaseException as exc:  # every waiter must wake, whatever happened
            for slot in batch:
                slot.error = exc
        with self._guard:
            following = self._queue[0] if self._queue else None
            if following is None:
                self._busy = False
            else:
                following.leads = True
        if following is not None:
            following.wake.release()    # the next batch starts before this one's answers go out
        for slot in batch[1:]:
            slot.wake.release()
