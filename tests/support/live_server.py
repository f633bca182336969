"""A WSGI app served over real HTTP(S) on loopback, in a thread of the test's process: the one
harness of its kind (the browser tests' checkout and shops, the upstream contract's sandbox, the
webhook receivers, the resilience tests' standalone sandbox)."""
from __future__ import annotations

import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server


class LiveServer:
    """A threaded server on a free port of 127.0.0.1, reached as ``host`` (``localhost`` and
    ``127.0.0.1`` are two sites to a browser). Its app may be set after it has started
    (``.app``): an app's settings may need the server's port."""

    def __init__(self, app: Callable[..., Any] | None = None, *, host: str = "127.0.0.1",
                 ssl_context: ssl.SSLContext | None = None,
                 poll_interval: float = 0.5) -> None:
        self.app = app
        self.host = host
        self.scheme = "https" if ssl_context else "http"
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, self._serve, threaded=True,
                                                  ssl_context=ssl_context)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": poll_interval}, daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, host: str) -> LiveServer:
        """A server for an app set later."""
        return cls(host=host)

    def _serve(self, environ: dict, start_response: Any) -> Any:
        assert self.app is not None, "the live server was started without an app"
        return self.app(environ, start_response)

    @property
    def port(self) -> int:
        return self.server.server_port

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@contextmanager
def live_server(wsgi_app: Callable[..., Any]) -> Iterator[str]:
    """Serve ``wsgi_app`` until the block ends; yields its base URL."""
    live = LiveServer(wsgi_app)
    try:
        yield live.origin
    finally:
        live.stop()
