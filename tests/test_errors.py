"""The checkout's one exception tree: what a host catches as ``CheckoutError`` is every error the
checkout raises on purpose, and the tree drawn in ``checkout.errors`` names each one."""
from __future__ import annotations

import inspect
import re

import checkout
from checkout import errors
from checkout.errors import CheckoutError, OrderUnderway, SessionConflict
from checkout.views.journey import StepRefused


def test_the_session_and_step_refusals_are_in_the_tree():
    for refusal in (SessionConflict, OrderUnderway, StepRefused):
        assert issubclass(refusal, CheckoutError), refusal


def test_the_drawn_tree_names_every_error_of_the_package():
    drawn = errors.__doc__ or ""
    raised_on_purpose = {
        cls.__name__ for module in _modules() for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, CheckoutError) and cls.__module__.startswith("checkout.")}
    assert raised_on_purpose, "no error found"
    assert {name for name in raised_on_purpose
            if not re.search(rf"\b{name}\b", drawn)} == set()


def _modules():
    import pkgutil
    from importlib import import_module

    for info in pkgutil.walk_packages(checkout.__path__, "checkout."):
        if info.name.startswith("checkout.sandbox") or info.name.endswith("gunicorn_config"):
            continue
        yield import_module(info.name)
