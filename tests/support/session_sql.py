"""The SQL a piece of work sends to the sessions table: what the creation test holds and
``bench/house.py`` prints. Standard library and SQLAlchemy only, so that the bench can run it
inside an older revision's tree."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


def session_statements(engine: Engine, action: Callable[[], Any]) -> tuple[Any, list[str], list[str]]:
    """(what ``action()`` returned, the writes, the reads) of ``checkout_sessions`` meanwhile."""
    writes: list[str] = []
    reads: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        text = " ".join(statement.split()).lower()
        if text.startswith(("update checkout_sessions", "insert into checkout_sessions")):
            writes.append(text)
        elif text.startswith("select") and "from checkout_sessions" in text:
            reads.append(text)

    event.listen(engine, "before_cursor_execute", note)
    try:
        result = action()
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return result, writes, reads
