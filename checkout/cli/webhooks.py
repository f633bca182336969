"""``flask checkout webhooks list | show ID | replay ID | process``: the stored webhook events.
Prints no secret: the webhook secret is never stored, and x-signature (derived from the body) is
not one."""
from __future__ import annotations

import json

import click
from flask import current_app
from flask.cli import AppGroup

from ..state import real_app
from ..webhooks.admin import EventRecord, find_event, recent_events, replay
from ..webhooks.dispatcher import process_pending
from ..webhooks.printable import cell

webhooks_cli = AppGroup("webhooks", help="Stored webhook events: list, show, replay, process.")


@webhooks_cli.command("list")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
def list_command(limit: int) -> None:
    """Recent events, newest first."""
    events = recent_events(real_app(current_app), limit)
    if not events:
        click.echo("no webhook events stored")
        return
    click.echo(f"{'ID':>7}  {'RECEIVED (UTC)':<19}  {'TYPE':<20}  {'ORDER':<26}  "
               f"{'STATUS':<19}  {'STATE':<9}  {'OUTCOME':<9}  DUPLICATES")
    for e in events:
        click.echo(f"{e.id:>7}  {e.received_at:%Y-%m-%d %H:%M:%S}  {cell(e.event_type, 20):<20}  "
                   f"{cell(e.order_id, 26):<26}  {cell(e.status, 19):<19}  {e.state:<9}  "
                   f"{cell(e.outcome, 9):<9}  {e.duplicates}")


@webhooks_cli.command("show")
@click.argument("event_id", type=int)
def show_command(event_id: int) -> None:
    """One event: headers, body (pretty JSON) and what processing did."""
    event = find_event(real_app(current_app), event_id)
    if event is None:
        raise click.ClickException(f"no webhook event {event_id}")
    _print_event(event)


@webhooks_cli.command("replay")
@click.argument("event_id", type=int)
def replay_command(event_id: int) -> None:
    """Process a stored event again through the same idempotent path."""
    try:
        done = replay(real_app(current_app), event_id)
    except KeyError:
        raise click.ClickException(f"no webhook event {event_id}") from None
    click.echo(f"replayed event {event_id}: {done.events} event(s) processed, "
               f"{done.signals} signal(s) sent")
    event = find_event(real_app(current_app), event_id)
    assert event is not None            # replay has just read it
    _print_event(event)


@webhooks_cli.command("process")
def process_command() -> None:
    """Process every stored event and send owed signals now (for CHECKOUT_WEBHOOK_BACKGROUND=False
    deployments, run it from cron or a worker)."""
    done = process_pending(real_app(current_app))
    click.echo(f"{done.events} event(s) processed, {done.signals} signal(s) sent, "
               f"{done.fetches} full order(s) fetched")


def _print_event(event: EventRecord) -> None:
    click.echo(f"event {event.id}: {event.event_type or '(not an event)'}")
    click.echo(f"  received    {event.received_at.isoformat()}  (last seen "
               f"{event.last_seen_at.isoformat()}, {event.duplicates} duplicate(s))")
    if event.order_id:
        updated = event.updated_at.isoformat() if event.updated_at else "-"
        click.echo(f"  order       {event.order_id}  status {event.status}  updatedAt {updated}")
    click.echo(f"  processing  {event.state}"
               + (f" ({event.outcome})" if event.outcome else "")
               + f", {event.attempts} attempt(s)")
    if event.error:
        click.echo(f"  error       {event.error}")
    click.echo("headers:")
    for name, value in sorted(event.headers.items()):
        click.echo(f"  {name}: {value}")
    click.echo("signals:")
    for owed in event.signals or [{"signal": "none"}]:
        click.echo("  " + ", ".join(f"{k}={v}" for k, v in owed.items() if v is not None))
    click.echo("body:")
    try:
        click.echo(json.dumps(json.loads(event.body), indent=2, ensure_ascii=False))
    except ValueError:
        click.echo(event.body.decode("utf-8", errors="replace"))
