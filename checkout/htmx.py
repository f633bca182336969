"""htmx through one tiny helper: is this an htmx request, redirect it, render a page or its partial.

One template per step renders the whole page and includes a partial; htmx requests get the partial
alone. Form errors come back with status 200 and the partial, because htmx 2 does not swap 4xx
responses by default. Every response that can differ by ``HX-Request`` says so in ``Vary``.

A step's form is *boosted* (``hx-boost``, :func:`is_boosted`): with JavaScript it is posted in the
background and the answer replaces the whole page, so one round trip moves the user on where a
plain form costs two (post, redirect, get). Such a request wants whole pages, never partials, and
where a plain form would be redirected its answer is the page the redirect leads to, with the
address it stands at (:func:`shown_at`). Any other redirect is a page load (``HX-Redirect``).
"""
from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import urlsplit

from flask import Response, g, make_response, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

__all__ = ["is_htmx", "is_boosted", "from_htmx", "triggered_by", "htmx_redirect", "shown_at",
           "render", "add_vary"]

AnyResponse = TypeVar("AnyResponse", bound=BaseResponse)


def from_htmx() -> bool:
    """True for any request made by htmx (``HX-Request: true``): by the page's script."""
    return request.headers.get("HX-Request") == "true"


def is_boosted() -> bool:
    """True for a boosted form's post (``HX-Boosted: true``): it wants a whole page."""
    return from_htmx() and request.headers.get("HX-Boosted") == "true"


def triggered_by(element_id: str) -> bool:
    """True for a request htmx made for the element of id ``element_id`` (``HX-Trigger``)."""
    return from_htmx() and request.headers.get("HX-Trigger") == element_id


def is_htmx() -> bool:
    """True for requests made by htmx that want a part of the page: not history restores, nor
    boosted forms, which want the whole page exactly like a normal navigation."""
    return (from_htmx() and not is_boosted()
            and request.headers.get("HX-History-Restore-Request") != "true")


def add_vary(response: AnyResponse) -> AnyResponse:
    response.vary.add("HX-Request")
    return response


def htmx_redirect(url: str) -> BaseResponse:
    """Send the browser to ``url``: ``HX-Redirect`` for htmx, a boosted form's post included (a
    full page load), else a 303. A 303 answering a script's request would be followed by that
    request, in the background, to a page the script may not be able to show."""
    response: BaseResponse
    if is_htmx() or is_boosted():
        response = make_response("", 200)
        response.headers["HX-Redirect"] = url
    else:
        response = redirect(url, code=303)
    return add_vary(response)


def shown_at(response: AnyResponse, url: str) -> AnyResponse:
    """``response`` is the page at ``url``, given to a boosted form in place of a redirect there:
    the address bar and the history follow, as after the redirect. The same address again (a
    refused form shown with its messages) replaces the entry rather than adding one for Back."""
    if response.status_code != 200 or any(
            name in response.headers for name in ("HX-Redirect", "HX-Push-Url", "HX-Replace-Url")):
        return response     # a page load, or a page that knows its own address already
    current = urlsplit(request.headers.get("HX-Current-URL", ""))
    target = urlsplit(url)
    same = (current.path, current.query) == (target.path, target.query)
    response.headers["HX-Replace-Url" if same else "HX-Push-Url"] = url
    return response


def render(template: str, partial: str | None = None, *, status: int = 200,
           **context: Any) -> Response:
    """Render ``template`` (the full page), or ``partial`` alone for an htmx request.

    Keep ``status`` at 200 for a form re-rendered with errors: htmx swaps only 2xx by default.
    """
    name = partial if (partial and is_htmx()) else template
    if name == template and context.get("step"):
        g.checkout_page_step = context["step"]      # a step's whole page: checkout.views.funnel
    response = make_response(render_template(name, **context), status)
    return add_vary(response)
