"""Running a function in a forked child of the test process, as gunicorn forks its workers."""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any


def in_forked_child(target: Callable[..., Any], *args: Any, timeout: float = 20) -> Any:
    """What ``target(*args)`` returns in a forked child (which must answer within ``timeout``
    seconds). Forked while the caller's other threads hold what they hold."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_answer, args=(sender, target, args))
    child.start()
    sender.close()          # the child's end only: its exit then reads as the end of the pipe
    try:
        # Read before joining: a child whose answer fills the pipe waits for it to be read.
        if not receiver.poll(timeout):
            raise AssertionError(f"the forked child gave no answer in {timeout} s")
        try:
            return receiver.recv()
        except EOFError:
            raise AssertionError("the forked child ended without an answer") from None
    finally:
        child.join(5)
        if child.is_alive():
            child.kill()
            child.join()
        receiver.close()


def _answer(sender: Any, target: Callable[..., Any], args: tuple[Any, ...]) -> None:
    sender.send(target(*args))
