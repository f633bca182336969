"""The flows a checkout session can follow: the on-ramp (buy crypto) and the off-ramp (sell it).

Each implements :class:`checkout.journey.flow.Flow`, what differs between them behind one small
interface. Everything else (the order of steps, quote records, creating once, tracking, the pages'
frame) is the shared journey (:mod:`checkout.journey`), so a new flow or a new step slots in
without a copy.
"""
from __future__ import annotations

from ..journey.flow import Breakdown, Flow, PriceRow
from ..sessions import CheckoutSession

__all__ = ["Flow", "PriceRow", "Breakdown", "flow_named", "flow_of", "FLOW_NAMES"]

FLOW_NAMES = ("onramp", "offramp")


_FLOWS: dict[str, Flow] = {}


def flow_named(name: str) -> Flow:
    """The flow called ``name`` (one instance per process: flows keep no state)."""
    flow = _FLOWS.get(name)
    if flow is None:
        if name == "onramp":
            from .onramp import OnrampFlow
            flow = OnrampFlow()
        elif name == "offramp":
            from .offramp import OfframpFlow
            flow = OfframpFlow()
        else:
            raise KeyError(name)
        _FLOWS[name] = flow
    return flow


def flow_of(session: CheckoutSession) -> Flow:
    return flow_named(session.flow)
