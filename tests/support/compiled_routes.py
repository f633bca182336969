"""URL builders compiled once per test process, not once per app.

Werkzeug compiles, for each route of an app, two small Python functions that build its URLs (by
generating their syntax tree and calling ``compile``). Each test builds its own app, its embedded
sandbox another, and the two hold some two hundred routes: a fifth of a view test's time was
compiling the same builders again. A builder depends only on its route's parts (its trace) and
defaults, never on the app: it reaches the route's converters through the route it is bound to.
So the functions are kept here, keyed by what they are made of, and bound to each new route.

A test-only speed-up, like compiled_templates.py: the URLs built are the same. It leans on a private
method of werkzeug's ``Rule`` and does nothing where that method is not found.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.routing import Rule

_compiled: dict[tuple[Any, ...], Callable[..., Any]] = {}


def install() -> None:
    compile_builder = getattr(Rule, "_compile_builder", None)
    if compile_builder is None or getattr(compile_builder, "kept", False):
        return

    def kept_builder(rule: Rule, append_unknown: bool = True) -> Callable[..., Any]:
        defaults = rule.defaults or {}
        # A default given for a part of the route is built into the function, by its converter.
        key = (tuple(rule._trace), append_unknown,
               tuple(sorted((name, repr(value), type(rule._converters.get(name)).__qualname__)
                            for name, value in defaults.items())))
        found = _compiled.get(key)
        if found is None:
            found = _compiled[key] = compile_builder(rule, append_unknown)
        return found

    kept_builder.kept = True            # type: ignore[attr-defined]
    Rule._compile_builder = kept_builder  # type: ignore[method-assign]
