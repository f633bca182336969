"""A user with JavaScript, walked with the test client: every step's form is posted as htmx posts a
boosted form, and every page such a post answers with is held against a full load of the same
address (a reload, or the same step without JavaScript). They must show the same thing.

The walks of the view tests (``Flow``, ``Sale``) run unchanged on top: a boosted answer stands for
the redirect a plain form would get, and ``follow`` gives the page it showed.
"""
from __future__ import annotations

import difflib
import re
from typing import Any
from urllib.parse import urlsplit

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from checkout.state import get_state

from .conftest import Flow


def headers(current_url: str) -> dict[str, str]:
    """What htmx sends with a boosted form's post from the page at ``current_url``."""
    return {"HX-Request": "true", "HX-Boosted": "true", "HX-Current-URL": current_url}


def step_names(app: Flask) -> set[str]:
    """The names (URL segments) of every flow's steps before the order: their forms are boosted."""
    with app.app_context():
        return {step.name for flow in get_state().flows.values()
                for step in flow.journey.form_steps}


def shown(html: str) -> str:
    """What a page shows the user: its title and its main content, white space folded."""
    title = re.search(r"<title>(.*?)</title>", html, re.S)
    main = re.search(r"<main\b[^>]*>(.*)</main>", html, re.S)
    assert title and main, html[:2000]
    return " ".join(f"{title.group(1)}\n{main.group(1)}".split())


def difference(in_place: str, loaded: str) -> str:
    """The words where two pages part, side by side."""
    words = difflib.SequenceMatcher(None, a := in_place.split(" "), b := loaded.split(" "))
    return "\n".join(f"in place: {' '.join(a[i1:i2])!r}  loaded: {' '.join(b[j1:j2])!r}"
                     for tag, i1, i2, j1, j2 in words.get_opcodes() if tag != "equal")


class Boosted:
    """Mix into a walk (``class BoostedSale(Boosted, Sale)``): its steps' posts are boosted."""

    app: Flask
    client: FlaskClient
    base: str
    csrf: str | None
    responses: list[TestResponse]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.steps = step_names(self.app)
        # (address, boosted answer, full load) of every page a boosted post answered with.
        self.compared: list[tuple[str, str, str]] = []
        self._loaded: dict[int, TestResponse] = {}

    def post(self, path: str, data: dict[str, Any] | None = None,
             **kwargs: Any) -> TestResponse:
        step = path.strip("/").split("?")[0]
        if step not in self.steps:
            return super().post(path, data, **kwargs)  # type: ignore[misc]
        form = {"csrf_token": self.csrf, **(data or {})}
        current = f"http://localhost{self.base}/{step}"
        answer = self._keep(self.client.post(  # type: ignore[attr-defined]
            self.base + path, data=form, headers=headers(current), **kwargs))
        pushed = answer.headers.get("HX-Push-Url")
        if answer.status_code == 200 and pushed:
            # The page a redirect would have led to, in the answer: a full load of its address
            # must show the same (a reload, Back and Forward, a plain form's GET).
            full = self._keep(self.client.get(pushed))  # type: ignore[attr-defined]
            assert full.status_code == 200, (pushed, full.status_code)
            in_place = shown(answer.get_data(as_text=True))
            loaded = shown(full.get_data(as_text=True))
            self.compared.append((pushed, in_place, loaded))
            assert in_place == loaded, (f"the boosted answer at {pushed} differs from its full "
                                        f"load:\n{difference(in_place, loaded)}")
            self._loaded[id(answer)] = full
        return answer

    def address(self, response: TestResponse) -> str:
        """Where an answer leaves the browser: the page it shows, or the one it sends it to."""
        for name in ("HX-Push-Url", "HX-Replace-Url", "HX-Redirect", "Location"):
            if response.headers.get(name):
                return urlsplit(response.headers[name]).path
        return response.request.path

    def follow(self, response: TestResponse) -> TestResponse:
        if id(response) in self._loaded:
            return self._loaded.pop(id(response))
        if response.status_code == 200 and response.headers.get("HX-Replace-Url"):
            return response                 # a refused form: its own page again, in the answer
        if response.status_code == 200 and response.headers.get("HX-Redirect"):
            return self._keep(self.client.get(  # type: ignore[attr-defined]
                response.headers["HX-Redirect"]))
        return super().follow(response)  # type: ignore[misc]

    def landed(self, response: TestResponse, step: str) -> TestResponse:
        assert self.address(response).endswith(f"/{step}"), self.address(response)
        return self.follow(response)


class BoostedFlow(Boosted, Flow):
    """An on-ramp (or ``name``) walk with JavaScript."""
