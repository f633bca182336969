"""A real HTTP(S) server on 127.0.0.1 that records what webhooks it gets and answers as scripted."""
from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass, field

from werkzeug.wrappers import Request, Response

from ..support.live_server import LiveServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float                       # time.monotonic() when it arrived


@dataclass
class Receiver:
    """``script[path]`` lists (status, headers) answers used in turn; then 200. ``slow`` paths hang."""

    ssl_context: ssl.SSLContext | None = None
    script: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    slow: set[str] = field(default_factory=set)
    received: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._server = LiveServer(self._app, ssl_context=self.ssl_context, poll_interval=0.02)
        self.port = self._server.port

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def at(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path == path]

    def stop(self) -> None:
        self._release.set()
        self._server.stop()

    @Request.application
    def _app(self, request: Request) -> Response:
        body = request.get_data()
        with self._lock:
            self.received.append(Received(request.path, dict(request.headers), body, time.monotonic()))
            answers = self.script.get(request.path)
            status, headers = answers.pop(0) if answers else (200, {})
        if request.path in self.slow:
            self._release.wait(5)
        return Response(f"answer {status}", status=status, headers=headers)
