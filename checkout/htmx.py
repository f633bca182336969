"""htmx through one tiny helper: is this an htmx request, redirect it, render a page or its partial.

One template per step renders the whole page and includes a partial; htmx requests get the partial
alone. Form errors come back with status 200 and the partial, because htmx 2 does not swap 4xx
responses by default. Every response that can differ by ``HX-Request`` says so in ``Vary``.
"""
from __future__ import annotations

from typing import Any, TypeVar

from flask import Response, make_response, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

__all__ = ["is_htmx", "htmx_redirect", "render", "add_vary"]

AnyResponse = TypeVar("AnyResponse", bound=BaseResponse)


def is_htmx() -> bool:
    """True for requests made by htmx (``HX-Request: true``) that are not history restores.

    A history-restore request wants the whole page, exactly like a normal navigation.
    """
    return (request.headers.get("HX-Request") == "true"
            and request.headers.get("HX-History-Restore-Request") != "true")


def add_vary(response: AnyResponse) -> AnyResponse:
    response.vary.add("HX-Request")
    return response


def htmx_redirect(url: str) -> BaseResponse:
    """Send the browser to ``url``: ``HX-Redirect`` for htmx (a full page load), else a 303."""
    response: BaseResponse
    if is_htmx():
        response = make_response("", 200)
        response.headers["HX-Redirect"] = url
    else:
        response = redirect(url, code=303)
    return add_vary(response)


def render(template: str, partial: str | None = None, *, status: int = 200,
           **context: Any) -> Response:
    """Render ``template`` (the full page), or ``partial`` alone for an htmx request.

    Keep ``status`` at 200 for a form re-rendered with errors: htmx swaps only 2xx by default.
    """
    name = partial if (partial and is_htmx()) else template
    response = make_response(render_template(name, **context), status)
    return add_vary(response)
