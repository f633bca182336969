"""``flask checkout orders reconcile | list | show ID``: the orders the checkout knows of, and
asking the upstream about those whose webhooks were lost. Upstream errors print their message,
never the credentials."""
from __future__ import annotations

import json
import re
import time
from datetime import datetime, timedelta
from typing import Any

import click
from babel.dates import format_timedelta
from flask import Flask, current_app
from flask.cli import AppGroup

from ..errors import UpstreamError
from ..state import real_app, state_of
from ..webhooks.dispatch import status_signal_states
from ..webhooks.dispatcher import process_pending
from ..webhooks.inspect import FAMILIES, ROW_KEYS, ListFilter, list_orders, order_report
from ..webhooks.printable import cell, csv_lines, for_terminal
from ..webhooks.reconcile import Watched
from ..webhooks.store import DISPATCHING, PENDING, SIGNAL_FAILED, utcnow

orders_cli = AppGroup("orders", help="Orders: list and show them; ask the upstream about those "
                                     "whose webhooks were lost.")


@orders_cli.command("reconcile")
@click.option("--older-than", type=click.FloatRange(min=0), default=None,
              help="seconds an order's status has not been known current  "
                   "[default: CHECKOUT_RECONCILE_AFTER; 0 with --now]")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True,
              help="orders asked about at most (CHECKOUT_RECONCILE_PER_MINUTE also bounds them)")
@click.option("--now", "at_once", is_flag=True,
              help="ask about every order not settled now, whatever its back-off")
def reconcile_command(older_than: float | None, limit: int, at_once: bool) -> None:
    """Ask the upstream once about each due order that is not settled, store what it says, and
    send the signals owed; then list the orders not settled that were not asked about, with
    when each is due."""
    app = real_app(current_app)
    started = utcnow()
    if at_once and older_than is None:
        older_than = 0
    reconciler = state_of(app).reconciler
    done = reconciler.run(older_than=older_than, limit=limit, ignore_backoff=at_once)
    for check in done.checks:
        outcome = (f"error: {check.error}" if check.error
                   else f"{check.before or '-'} -> {check.after}" if check.moved
                   else f"unchanged ({check.after or 'unknown'})")
        click.echo(f"{check.order_id}  {check.flow:<7}  {outcome}"
                   + ("  settled" if check.settled else ""))
    owed = {(c.order_id, c.after) for c in done.checks if c.moved and c.after is not None}
    sent, failed, sending = _send_owed(app, owed, since=started)
    left = done.due - len(done.checks)
    click.echo(f"{len(done.checks)} order(s) checked, "
               f"{sum(1 for c in done.checks if c.moved)} moved, "
               f"{sum(1 for c in done.checks if c.error)} failed, {sent} signal(s) sent"
               + (f" ({failed} raised in a receiver: see the log)" if failed else "")
               + (f", {sending} still being sent" if sending else "")
               + (f"; {left} left for later (per-minute bound reached)" if done.budget_spent
                  else ""))
    checked = {check.order_id for check in done.checks}
    _print_waiting([order for order in reconciler.outlook(older_than=older_than)
                    if order.order_id not in checked], now=utcnow())


WAITING_LISTED = 50         # orders listed at most, soonest due first


def _print_waiting(orders: list[Watched], *, now: datetime) -> None:
    """The orders not settled that this pass did not ask about, and when each is due: one line
    each, with nothing about the person (the order id and flow)."""
    if not orders:
        return
    click.echo(f"{len(orders)} order(s) not settled and not checked now (--now asks about them "
               f"all):")
    for order in orders[:WAITING_LISTED]:
        click.echo(f"  {cell(order.order_id, 26):<26}  {order.flow:<7}  "
                   f"due {order.due_at:%Y-%m-%d %H:%M:%S} UTC  {_why_waiting(order, now)}")
    if len(orders) > WAITING_LISTED:
        click.echo(f"  ... and {len(orders) - WAITING_LISTED} more")


def _why_waiting(order: Watched, now: datetime) -> str:
    if order.checking:
        return "being checked now by another process"
    if order.due_at <= now:
        return "due now (left for the next pass: --limit or the per-minute bound)"
    due = f"in {_span(order.due_at - now)}"
    if not order.backing_off:
        return f"{due}: status known current {_span(now - order.heard_at)} ago"
    if order.quiet_checks:
        return f"{due}: backing off after {order.quiet_checks} check(s) that learned nothing"
    return f"{due}: checked lately"


def _span(delta: timedelta) -> str:
    return format_timedelta(max(delta, timedelta(0)), threshold=2, locale="en")


SIGNALS_WAIT = 10.0         # seconds the command waits for signals another thread is sending


def _send_owed(app: Flask, owed: set[tuple[str, str]], *,
               since: datetime) -> tuple[int, int, int]:
    """Send the signals this pass owed and count them: (sent, of which a receiver raised, still
    being sent).

    A status move wakes this process's dispatcher thread, which may send its signal before this
    command does (or be sending it now): what was sent is read from the signal log, whoever sent
    it, not from what this thread sent. Signals another thread is still sending are waited for,
    a little.
    """
    engine = state_of(app).engine
    deadline = time.monotonic() + SIGNALS_WAIT
    while True:
        process_pending(app, fetch=False)
        states = status_signal_states(engine, owed, since=since)
        sending = sum(1 for state in states if state in (PENDING, DISPATCHING))
        if not sending or time.monotonic() >= deadline:
            failed = sum(1 for state in states if state == SIGNAL_FAILED)
            return len(states) - sending, failed, sending
        time.sleep(0.05)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class Duration(click.ParamType[timedelta]):
    """``90s``, ``30m``, ``2h``, ``3d``, ``1w``."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> timedelta:
        if isinstance(value, timedelta):
            return value
        match = _DURATION.match(str(value))
        if not match:
            self.fail(f"{value!r} is not a duration like 30m, 2h or 3d", param, ctx)
        return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


def _upstream_failed(exc: UpstreamError) -> click.ClickException:
    # One line, no traceback; the message names the call, never the credentials.
    where = f" ({exc.method} {exc.path})" if exc.method and exc.path else ""
    status = f" HTTP {exc.status}" if exc.status else ""
    return click.ClickException(f"the upstream failed{where}:{status} {exc.message}".rstrip())


@orders_cli.command("list")
@click.option("--flow", type=click.Choice([*FAMILIES, "all"]), default="all", show_default=True,
              help="onramp, offramp (both variants) or legacy (the pay-widget family)")
@click.option("--status", "statuses", multiple=True,
              help="keep orders in this status, in the upstream's words (offramp_success) or the "
                   "webhooks' (payout_successful); repeatable; legacy: buy swap or withdrawal "
                   "status")
@click.option("--older-than", type=Duration(), help="created at least this long ago: 30m, 2h, 3d")
@click.option("--newer-than", type=Duration(), help="created at most this long ago: 30m, 2h, 3d")
@click.option("--order-params", help="only the order with this orderParams (your reference)")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@click.option("--limit", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="orders printed at most")
@click.option("--page-size", type=click.IntRange(1, 100), default=100, show_default=True,
              help="orders asked of the upstream per page")
def list_orders_command(flow: str, statuses: tuple[str, ...], older_than: timedelta | None,
                        newer_than: timedelta | None, order_params: str | None, fmt: str,
                        limit: int, page_size: int) -> None:
    """Every order the upstream has (each family's list walked by cursor, newest first), one row
    each: id, flow, variant, status, storedStatus (the checkout's, when it says something else than
    status: it is kept in webhook words, payout_successful for offramp_success), amount,
    currency, asset, network, orderParams, createdAt, updatedAt. User emails and phone numbers are
    never printed here (``orders show ID`` prints the upstream's full order, which has them)."""
    app = real_app(current_app)
    state = state_of(app)
    wanted = ListFilter(frozenset(statuses), older_than, newer_than, order_params)
    families = FAMILIES if flow == "all" else (flow,)
    try:
        rows = [row.as_dict() for row in list_orders(state.upstream, state.engine, families,
                                                      wanted, limit=limit, page_size=page_size)]
    except UpstreamError as exc:
        raise _upstream_failed(exc) from None
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    elif fmt == "csv":
        click.echo("".join(csv_lines(rows, ROW_KEYS)), nl=False)
    elif not rows:
        click.echo("no orders")
    else:
        widths = {"id": 26, "flow": 7, "variant": 7, "status": 24, "storedStatus": 20,
                  "amount": 12, "currency": 8, "asset": 6, "network": 9, "orderParams": 20,
                  "createdAt": 25, "updatedAt": 25}
        click.echo("  ".join(f"{key.upper():<{widths[key]}}" for key in ROW_KEYS).rstrip())
        for row in rows:
            click.echo("  ".join(f"{cell(row[key], widths[key]):<{widths[key]}}"
                                 for key in ROW_KEYS).rstrip())


@orders_cli.command("show")
@click.argument("order_id")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def show_order_command(order_id: str, fmt: str) -> None:
    """One order: the checkout's stored status, the upstream's full order (asked in each family
    until one knows it; includes the user's contact details), the webhook deliveries for it, the
    signals fired and what staff did from the desk (who, when, what, the outcome). Exits 1 when
    neither the checkout nor the upstream knows the order."""
    app = real_app(current_app)
    state = state_of(app)
    try:
        report = order_report(state.upstream, state.engine, order_id)
    except UpstreamError as exc:
        raise _upstream_failed(exc) from None
    if not report.found:
        raise click.ClickException(f"no order {order_id} (not stored, not known upstream)")
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False, default=str))
        return
    click.echo(f"order {order_id}")
    stored = report.stored
    if stored:
        click.echo(f"  stored      {stored['status']} ({stored['flow'] or '-'}, from "
                   f"{stored['status_source']}, updatedAt {stored['status_updated_at'] or '-'}, "
                   f"previous {stored['previous_status'] or '-'})")
    else:
        click.echo("  stored      -")
    click.echo(f"  upstream    {report.family or 'not found'}")
    click.echo("deliveries:")
    if not report.deliveries:
        click.echo("  none")
    for d in report.deliveries:
        click.echo(f"  event {d['id']}  received {d['received_at']}  {d['event_type'] or '-'}  "
                   f"{d['status'] or '-'}  {d['state']}"
                   + (f" ({d['outcome']})" if d["outcome"] else "")
                   + f"  {d['duplicates']} duplicate(s)"
                   + (f"  error: {d['error']}" if d["error"] else ""))
    click.echo("signals:")
    for s in report.signals or [{"signal": "none"}]:
        click.echo("  " + ", ".join(f"{k}={v}" for k, v in s.items() if v is not None))
    click.echo("desk actions:")
    if not report.actions:
        click.echo("  none")
    for a in report.actions:
        click.echo(f"  {a['at']}  {cell(a['staff'], 40)} ({a['role']})  {a['action']}  "
                   f"{a['outcome']}" + (f"  {for_terminal(a['detail'])}" if a["detail"] else ""))
    click.echo("upstream order:")
    click.echo(json.dumps(report.upstream, indent=2, ensure_ascii=False, default=str)
               if report.upstream is not None else "  -")
