"""The desk's words for what its tables hold: statuses, flows, where a status came from, the
outcome of a delivery, a signal or an action, in the staff member's language. The customer's own
words for a status are the flow's (``Flow.status_text``); these are a support person's."""
from __future__ import annotations

from typing import Any

from flask_babel import lazy_gettext as _l

__all__ = ["STATUS_LABELS", "FLOW_LABELS", "SOURCE_LABELS", "ACTION_OUTCOMES",
           "DELIVERY_OUTCOMES", "REFUSAL_REASONS", "KYC_LEVELS", "KYC_STATUSES",
           "READINESS_WORDS", "BREAKER_WORDS", "PERIOD_LABELS", "status_label",
           "flow_label", "tone_of_status"]

STATUS_LABELS: dict[str, Any] = {
    "deposit_awaiting": _l("Awaiting payment"),
    "deposit_validating": _l("Checking the payment"),
    "deposit_invalid": _l("Payment refused"),
    "deposit_canceled": _l("Cancelled"),
    "deposit_expired": _l("Expired unpaid"),
    "deposit_successful": _l("Payment received"),
    "payout_pending": _l("Paying out"),
    "payout_successful": _l("Paid out"),
    "payout_failed": _l("Payout failed"),
    "refund_pending": _l("Refunding"),
    "refund_successful": _l("Refunded"),
    "refund_failed": _l("Refund failed"),
}

FLOW_LABELS: dict[str, Any] = {"onramp": _l("Buy"), "offramp": _l("Sell")}

SOURCE_LABELS: dict[str, Any] = {
    "webhook": _l("from a webhook"),
    "reconciliation": _l("from the reconciler's check"),
    "page": _l("from a status page's read"),
    "desk": _l("from a check at the desk"),
    "host": _l("from the shop's own code"),
    "create": _l("from the partner's answer to the order"),
    "upstream": _l("from a read of the order"),
}

# How an action went (checkout.desk.actions), by (action, outcome).
ACTION_OUTCOMES: dict[tuple[str, str], Any] = {
    ("check", "moved"): _l("The partner told of a new status: it is recorded."),
    ("check", "unchanged"): _l("Nothing new: the partner says what the checkout knew."),
    ("check", "failed"): _l("The partner could not be asked: nothing changed."),
    ("resend", "acknowledged"): _l("The shop's code ran again and returned."),
    ("resend", "failed"): _l("The shop's code ran again and failed."),
    ("resend", "busy"): _l("The signal was being sent at that moment: try again shortly."),
}

# What processing made of a verified delivery: its outcome, or its state before one.
DELIVERY_OUTCOMES: dict[str, Any] = {
    "applied": _l("Applied: the order moved to this status."),
    "unchanged": _l("Recorded: no status the order did not have."),
    "stale": _l("Older than what was known: nothing changed."),
    "signalled": _l("Passed on to the shop's code."),
    "ignored": _l("Not about an order's status: kept only."),
    "stored": _l("Waiting to be processed."),
    "failed": _l("Processing failed."),
    "invalid": _l("Signed, but not an event the checkout reads."),
}

REFUSAL_REASONS: dict[str, Any] = {
    "signature": _l("Its signature did not match your webhook secret."),
    "too_large": _l("It was larger than the receiver accepts."),
}

KYC_LEVELS: dict[str, Any] = {"none": _l("None"), "basic": _l("Basic"),
                              "advanced": _l("Advanced")}
KYC_STATUSES: dict[str, Any] = {"none": _l("None"), "pending": _l("Under review"),
                                "approved": _l("Approved"), "rejected": _l("Refused")}

# The partner's health now (checkout.readiness, checkout.upstream.breaker).
READINESS_WORDS: dict[str, Any] = {
    "ok": _l("Answering"),
    "unavailable": _l("Not answering"),
    "credentials_refused": _l("Refusing the checkout's credentials"),
    "unknown": _l("Not checked yet"),
    "memory": _l("Counted in each process's memory"),
}
BREAKER_WORDS: dict[str, Any] = {
    "closed": _l("Closed: calls go through"),
    "open": _l("Open: calls are refused for a few seconds"),
    "half_open": _l("Trying one call"),
}

# The overview's periods (checkout.desk.periods).
PERIOD_LABELS: dict[str, Any] = {"today": _l("Today"), "7d": _l("7 days"), "30d": _l("30 days")}

_OK = frozenset({"deposit_successful", "payout_successful"})
_ERROR = frozenset({"deposit_invalid", "payout_failed", "refund_failed"})


def status_label(status: str | None) -> str:
    """A status in the staff member's words ("No status yet" before the first)."""
    if status is None:
        return str(_l("No status yet"))
    label = STATUS_LABELS.get(status)
    return str(label) if label is not None else status


def flow_label(flow: str | None) -> str:
    label = FLOW_LABELS.get(flow or "")
    return str(label) if label is not None else (flow or "—")


def tone_of_status(status: str | None) -> str:
    """``ok``, ``error`` or ``warn``: how a status's tag is drawn (beside its words)."""
    if status in _OK:
        return "ok"
    if status in _ERROR:
        return "error"
    return "warn"
