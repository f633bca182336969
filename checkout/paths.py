"""Where the checkout's templates and static files are, in a source tree and once installed.

They sit at the top of the repository (so a host site can see and override them by path); the wheel
copies them into the package. We look inside the package first, then beside it.
"""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if (candidate / "checkout").is_dir():
            return candidate
    raise RuntimeError(f"checkout: cannot find the {name}/ folder near {_PACKAGE}")


TEMPLATES = _find("templates")
STATIC = _find("static")
