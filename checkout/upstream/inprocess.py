"""Serve a ``requests.Session``'s calls to one base URL from a WSGI app in the same process.

The checkout talks to its embedded sandbox through exactly the code path it uses for the real
service: the same URL building, headers and signature, the same status and error mapping. Only the
socket is missing: the prepared request becomes a WSGI environ (werkzeug's ``EnvironBuilder``, with
``REQUEST_URI``/``RAW_URI`` holding the path and query byte for byte, as a real server sets them),
the app runs, and its answer becomes a real ``requests.Response``.

Timeouts cannot be honoured: the app runs on the caller's thread and cannot be interrupted, so a
slow sandbox handler blocks the call for as long as it takes. Streaming is not supported either:
the whole body is read before the response is returned.
"""
from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers
from werkzeug.test import EnvironBuilder, run_wsgi_app

WSGIApp = Any  # a WSGI callable: (environ, start_response) -> iterable of bytes


class WSGIAdapter(BaseAdapter):
    """A transport adapter whose "network" is a WSGI application."""

    def __init__(self, wsgi_app: WSGIApp,
                 environ_extras: Callable[[], Mapping[str, Any]] | None = None) -> None:
        super().__init__()
        self.wsgi_app = wsgi_app
        # Extra WSGI environ keys for each call (never HTTP headers: nothing a real peer could
        # send). The embedded sandbox learns from them where browsers reach its pages.
        self.environ_extras = environ_extras

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: object = None, verify: object = True, cert: object = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        url = urlsplit(request.url or "")
        builder = EnvironBuilder(
            path=request.path_url,               # path and query exactly as prepared (and signed)
            base_url=f"{url.scheme}://{url.netloc}",
            method=request.method or "GET",
            headers=list(request.headers.items()),
            data=_body_bytes(request.body),
        )
        try:
            environ = builder.get_environ()
        finally:
            builder.close()
        if self.environ_extras is not None:
            environ.update(self.environ_extras())
        app_iter, status, headers = run_wsgi_app(self.wsgi_app, environ, buffered=True)
        try:
            content = b"".join(app_iter)
        finally:
            close = getattr(app_iter, "close", None)
            if close is not None:
                close()
        return _build_response(request, status, headers, content)

    def close(self) -> None:
        """Nothing to release: there is no connection pool."""


def _body_bytes(body: object) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    read = getattr(body, "read", None)
    if read is not None:
        content: bytes = read()                         # a file opened in binary mode
        return content
    if isinstance(body, Iterable):                     # a generator body (chunked upload)
        return b"".join(chunk.encode() if isinstance(chunk, str) else bytes(chunk)
                        for chunk in body)
    raise TypeError(f"cannot send a {type(body).__name__} body in process")


def _build_response(request: requests.PreparedRequest, status: str, headers: Any,
                    content: bytes) -> requests.Response:
    code, _, reason = status.partition(" ")
    response = requests.Response()
    response.status_code = int(code)
    response.reason = reason
    response.headers = CaseInsensitiveDict(headers.items())
    response.encoding = get_encoding_from_headers(response.headers)
    response._content = content
    response.raw = io.BytesIO(content)
    response.url = request.url or ""
    response.request = request
    return response


def mount_wsgi_app(session: requests.Session, base_url: str, wsgi_app: WSGIApp,
                   environ_extras: Callable[[], Mapping[str, Any]] | None = None) -> WSGIAdapter:
    """Route every request of ``session`` under ``base_url`` to ``wsgi_app``; return the adapter.

    The prefix is mounted with a trailing slash, so ``http://sandbox.invalid`` does not also capture
    ``http://sandbox.invalid.example.com``.
    """
    adapter = WSGIAdapter(wsgi_app, environ_extras)
    session.mount(base_url.rstrip("/") + "/", adapter)
    return adapter
