"""A spy in front of the embedded sandbox: counts the checkout's upstream calls, and can answer
some of them with 429 as a real upstream would when the merchant's key is over its rate."""
from __future__ import annotations

from collections import Counter
from typing import Any

from flask import Flask

from checkout import embedded_sandbox
from checkout.embedded_sandbox import EMBEDDED_SANDBOX_URL
from checkout.upstream.inprocess import mount_wsgi_app


class UpstreamSpy:
    """Every call of ``app``'s upstream client goes through here, then to the sandbox."""

    def __init__(self, app: Flask) -> None:
        state = app.extensions["checkout"]
        self.sandbox = state.sandbox
        assert self.sandbox is not None, "the spy stands in front of the embedded sandbox"
        # (method, path) and, for a call with a query, (method, "path?query") too
        self.calls: Counter[tuple[str, str]] = Counter()
        # path, or "path?query" (one order's read), -> the Retry-After to send with a 429
        # (None: a 429 without one)
        self.too_many: dict[str, str | None] = {}
        mount_wsgi_app(state.upstream.http, EMBEDDED_SANDBOX_URL, self,
                       environ_extras=embedded_sandbox.public_base)

    def count(self, path: str, method: str = "GET") -> int:
        return self.calls[(method, path)]

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        method, path = environ["REQUEST_METHOD"], environ["PATH_INFO"]
        query = environ.get("QUERY_STRING", "")
        self.calls[(method, path)] += 1
        if query:
            self.calls[(method, f"{path}?{query}")] += 1
        refused = next((key for key in (f"{path}?{query}", path) if key in self.too_many), None)
        if refused is not None:
            headers = [("Content-Type", "application/json")]
            if self.too_many[refused] is not None:
                headers.append(("Retry-After", str(self.too_many[refused])))
            start_response("429 Too Many Requests", headers)
            return [b'{"message": "Too many requests"}']
        return self.sandbox(environ, start_response)
