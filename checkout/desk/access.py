"""Who may use the desk: the host says, through ``CHECKOUT_DESK_ACCESS``.

The setting is a callable, or an import string ``"package.module:function"``, that the checkout
calls with no arguments inside each desk request, so that it can read the host's own login (its
session, Flask-Login's ``current_user``, a header its proxy sets). It returns ``None`` (no access)
or the staff member: an object or a mapping with a ``name`` and a ``role``, ``"viewer"`` (reads)
or ``"operator"`` (reads and acts). Anything else is no access: a desk that opens by mistake is
worse than one that stays shut.

An import string is imported at the first desk request, not at start-up: the host's module often
imports the host's app, which is still being made when ``Checkout(app)`` runs.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from werkzeug.utils import import_string

from ..errors import ConfigurationError

__all__ = ["ROLES", "VIEWER", "OPERATOR", "Staff", "staff_of", "Access"]

log = logging.getLogger(__name__)

VIEWER, OPERATOR = "viewer", "operator"
ROLES = (VIEWER, OPERATOR)


@dataclass(frozen=True)
class Staff:
    """A staff member at the desk, as the host named them."""

    name: str
    role: str

    @property
    def acts(self) -> bool:
        """Whether they may act on orders, not only read them."""
        return self.role == OPERATOR


def _field(answer: Any, name: str) -> Any:
    return answer.get(name) if isinstance(answer, Mapping) else getattr(answer, name, None)


def staff_of(answer: Any) -> Staff | None:
    """The staff member the host's function answered, or None (no access)."""
    if answer is None:
        return None
    name, role = _field(answer, "name"), _field(answer, "role")
    if not isinstance(name, str) or not name.strip() or role not in ROLES:
        # The host's function returned something: it meant to let someone in. Say why not.
        log.warning("CHECKOUT_DESK_ACCESS returned a staff member without a name or with a role "
                    "other than %s: no access", " or ".join(ROLES))
        return None
    return Staff(name.strip()[:255], str(role))


class Access:
    """The host's access function, imported on first use when given by its import string."""

    def __init__(self, setting: Callable[[], Any] | str) -> None:
        self.setting = setting
        self._function: Callable[[], Any] | None = setting if callable(setting) else None
        self._lock = threading.Lock()

    @staticmethod
    def check(setting: Any) -> None:
        """Refuse at start-up a setting that can never be called."""
        if callable(setting):
            return
        if not isinstance(setting, str) or ":" not in setting.strip(":") \
                or any(c.isspace() for c in setting):
            raise ConfigurationError(
                "CHECKOUT_DESK_ACCESS must be a function, or its import string such as "
                "'shop.staff:desk_access', that returns None or the staff member (name, role)")

    def function(self) -> Callable[[], Any]:
        if self._function is None:
            with self._lock:
                if self._function is None:
                    try:
                        found = import_string(str(self.setting))
                    except ImportError as exc:
                        raise ConfigurationError(
                            f"CHECKOUT_DESK_ACCESS = {self.setting!r} cannot be imported: "
                            f"{exc}") from exc
                    if not callable(found):
                        raise ConfigurationError(
                            f"CHECKOUT_DESK_ACCESS = {self.setting!r} is not a function")
                    self._function = found
        return self._function

    def staff(self) -> Staff | None:
        """Who is at the desk in this request, by the host's own login."""
        return staff_of(self.function()())
