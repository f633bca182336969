"""Faults between the checkout and its upstream, for real: an HTTP proxy on 127.0.0.1 whose mode is
read per request.

- ``pass``: forwarded to the upstream as it came, answered as it answered;
- ``delay``: forwarded after ``delay`` seconds;
- ``hang``: the connection is taken and never answered (until the proxy stops);
- ``refuse``: nothing listens (the listening socket is closed: connections are refused);
- ``error``: 500 with a JSON body, the upstream never asked;
- ``garbage``: 200 with a body that is not JSON, the upstream never asked.

``calls`` counts what reached the proxy in each mode, ``forwarded`` what it passed on.
"""
from __future__ import annotations

import http.client
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

MODES = ("pass", "delay", "hang", "refuse", "error", "garbage")
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate"}


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.mode = "pass"
        self.delay = 0.0
        self.calls: Counter[str] = Counter()
        self.forwarded = 0
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set(self, mode: str, delay: float = 0.0) -> None:
        if mode not in MODES:
            raise ValueError(mode)
        if mode == "refuse":
            self._close_listener()
        elif self._server is None:
            self._listen()
        if self.mode == "hang" and mode != "hang":
            self._released.set()             # the hanging connections are dropped
        if mode == "hang":
            self._released = threading.Event()
        self.mode, self.delay = mode, delay

    # -- serving -----------------------------------------------------------------------------

    def _listen(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()

    def _close_listener(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        mode, delay, released = self.mode, self.delay, self._released
        with self._lock:
            self.calls[mode] += 1
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        if mode == "hang":
            released.wait()
            request.close_connection = True
            return
        if mode == "error":
            self._answer(request, 500, b'{"message": "internal error"}', "application/json")
            return
        if mode == "garbage":
            self._answer(request, 200, b"<html>maintenance</html>", "text/html")
            return
        if mode == "delay" and released.wait(delay):
            return
        self._forward(request, body)

    def _forward(self, request: BaseHTTPRequestHandler, body: bytes) -> None:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        upstream = http.client.HTTPConnection(*self.target, timeout=30)
        try:
            upstream.request(request.command, request.path, body=body or None, headers=headers)
            answer = upstream.getresponse()
            data = answer.read()
            with self._lock:
                self.forwarded += 1
            request.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                    request.send_header(name, value)
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
        finally:
            upstream.close()

    @staticmethod
    def _answer(request: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
        request.send_response(status)
        request.send_header("Content-Type", kind)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def close(self) -> None:
        self._released.set()
        self._close_listener()


@contextmanager
def fault_proxy(upstream: str) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream)
    proxy._listen()
    try:
        yield proxy
    finally:
        proxy.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
