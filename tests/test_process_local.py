"""State of one process: a forked child starts from a new value and a lock nobody holds."""
from __future__ import annotations

from checkout.process_local import ProcessLocal

from .forking import in_forked_child


def test_a_forked_child_starts_afresh_and_the_parent_keeps_its_own():
    state: ProcessLocal[list[str]] = ProcessLocal(list)
    state.value.append("the parent's work in progress")
    with state.lock:            # held by this thread at the fork, as by a busy thread of a worker
        seen = in_forked_child(lambda: (state.value, state.lock.acquire(timeout=2)))
    assert seen == ([], True)
    assert state.value == ["the parent's work in progress"]
