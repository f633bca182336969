"""State that belongs to one process, made afresh in a forked child.

Gunicorn forks its workers from a master that may have made the app (``--preload``), and any
process may fork while its threads are busy. A lock a thread of the parent held at the fork stays
held in the child, where that thread does not exist; a record of the parent's work in progress
(a batch being written, a delivery being stored) would be waited on there for ever. So state of
that kind lives in a :class:`ProcessLocal`: the child starts from a new value and a new lock.
"""
from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["ProcessLocal"]

T = TypeVar("T")


class ProcessLocal(Generic[T]):
    """``value`` (made by ``make()``) and the ``lock`` that guards it, both new after a fork."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self.value: T = make()
        self.lock = threading.Lock()
        _everyone.add(self)

    def _start_afresh(self) -> None:
        self.value = self._make()
        self.lock = threading.Lock()


_everyone: weakref.WeakSet[ProcessLocal[Any]] = weakref.WeakSet()


def _after_fork() -> None:
    for state in list(_everyone):
        state._start_afresh()


os.register_at_fork(after_in_child=_after_fork)
