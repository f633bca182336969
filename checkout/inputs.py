"""Text from outside that every database can store, checked before it goes anywhere.

PostgreSQL refuses a NUL character in ``text`` and in ``jsonb`` (``\\u0000``), and no driver can
encode a lone surrogate (``"\\ud800"``, which JSON can spell) as UTF-8: such a value reaching an
INSERT is a server error, and for a webhook a 503 that its sender retries for ever. SQLite takes
both, so a check at the database would behave differently on each; the checks here run at the
edge instead (the path and query of every checkout request, its form, a launch token's claims, a
webhook's identifiers), and what fails them is refused as bad input (400), on either database.

Other control characters (except tab, line feed and carriage return in free text) have no place
in anything a person types or an upstream identifies with, and are refused with them.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SESSION_ID", "is_session_id", "storable", "storable_json", "first_unstorable"]

# secrets.token_urlsafe(32) gives 43 characters; older or longer ids stay within these bounds.
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")

# C0 controls but tab, LF and CR; DEL; C1 controls; and UTF-16 surrogates (never valid alone).
_UNSTORABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def is_session_id(value: object) -> bool:
    """True when ``value`` has the shape of a session id (checked before any lookup)."""
    return isinstance(value, str) and SESSION_ID.fullmatch(value) is not None


def storable(text: str) -> bool:
    """True when ``text`` can go into any database as text and means something to a person."""
    return _UNSTORABLE.search(text) is None


def storable_json(value: Any, *, depth: int = 0) -> bool:
    """True when every string of a parsed JSON value (keys included) is :func:`storable`."""
    if depth > 64:
        return False
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and storable(k) and storable_json(v, depth=depth + 1)
                   for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(storable_json(v, depth=depth + 1) for v in value)
    return True


def first_unstorable(pairs: Iterable[tuple[str, str]]) -> str | None:
    """The name of the first (name, value) pair with an unstorable name or value, or None."""
    for name, value in pairs:
        if not storable(name) or not storable(value):
            return name if storable(name) else "(a field name)"
    return None
