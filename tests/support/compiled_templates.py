"""Templates compiled once per test process, not once per app.

Each test builds its own app (tests/conftest.py ``make_app``), its embedded sandbox another, and
each app's Jinja environment compiles every template it renders anew: a third of a view test's
time was Jinja parsing and compiling the same twenty files. Jinja keeps compiled templates in a
bytecode cache when given one; this one is a dict shared by every app of the process. A template's
bytecode is used only for the same source (Jinja checks its checksum) compiled under the same
settings (the key below): what a page renders does not change, only how often it is compiled.
"""
from __future__ import annotations

from typing import Any

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket


class CompiledTemplates(BytecodeCache):
    def __init__(self) -> None:
        self._compiled: dict[str, bytes] = {}

    def get_bucket(self, environment: Any, name: str, filename: str | None,
                   source: str) -> Bucket:
        # What compiling depends on besides the source: an environment with other extensions or
        # gettext style, delimiters or escaping compiles the same file to other code.
        settings = (sorted(environment.extensions), getattr(environment, "newstyle_gettext", None),
                    environment.block_start_string, environment.variable_start_string,
                    environment.comment_start_string, environment.line_statement_prefix,
                    environment.trim_blocks, environment.lstrip_blocks,
                    environment.keep_trailing_newline, environment.optimized,
                    environment.finalize is not None,
                    environment.autoescape(name) if callable(environment.autoescape)
                    else environment.autoescape)
        key = self.get_cache_key(f"{name}\n{settings!r}", filename)
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        compiled = self._compiled.get(bucket.key)
        if compiled is not None:
            bucket.bytecode_from_string(compiled)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._compiled[bucket.key] = bucket.bytecode_to_string()


COMPILED = CompiledTemplates()
