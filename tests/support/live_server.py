"""A WSGI app served over real HTTP on loopback, in a thread of the test's process."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from werkzeug.serving import make_server


@contextmanager
def live_server(wsgi_app: Callable[..., Any]) -> Iterator[str]:
    """Serve ``wsgi_app`` (threaded) until the block ends; yields its base URL."""
    server = make_server("127.0.0.1", 0, wsgi_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)
