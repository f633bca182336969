"""Who the tests' host site says is at the desk: the ``X-Test-Staff`` header, ``role:name``
(``operator:Kofi``), else nobody. A real host reads its own login (the README shows how)."""
from __future__ import annotations

from typing import Any

from flask import request

HEADER = "X-Test-Staff"


def from_header() -> dict[str, Any] | None:
    """``CHECKOUT_DESK_ACCESS`` of the tests: a mapping, as a host may return."""
    value = request.headers.get(HEADER)
    if not value:
        return None
    role, _, name = value.partition(":")
    return {"name": name, "role": role}


def as_staff(role: str, name: str = "Amina Njoroge") -> dict[str, str]:
    """The header a request of ``name`` with ``role`` carries."""
    return {HEADER: f"{role}:{name}"}


OPERATOR = as_staff("operator", "Kofi Mensah")
VIEWER = as_staff("viewer", "Amina Njoroge")
