"""Running a function in a forked child of the test process, as gunicorn forks its workers."""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any


def in_forked_child(target: Callable[..., Any], *args: Any, timeout: float = 20) -> Any:
    """What ``target(*args)`` returns in a forked child (which must end well within ``timeout``
    seconds). Forked while the caller's other threads hold what they hold."""
    context = multiprocessing.get_context("fork")
    answer = context.SimpleQueue()
    child = context.Process(target=_answer, args=(answer, target, args))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
    assert child.exitcode == 0, f"the forked child ended with {child.exitcode}"
    return answer.get()


def _answer(answer: Any, target: Callable[..., Any], args: tuple[Any, ...]) -> None:
    answer.put(target(*args))
