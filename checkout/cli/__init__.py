"""``flask checkout ...``: every command of the checkout, in one place: the group and its small
commands here (launch-url, sessions purge, worker, desk reindex), the schema's (:mod:`.db`), the
stored webhooks' (:mod:`.webhooks`) and the orders' (:mod:`.orders`) beside. A command reads the
request-free parts of the package (the state, the stores) and prints; it holds no logic of its own
that a page or the worker would need."""
from __future__ import annotations

import click
from flask import current_app
from flask.cli import AppGroup, ScriptInfo

from ..config import MAX_DAYS


class _CheckoutGroup(AppGroup):
    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        ctx.meta["checkout.command_args"] = rest
        return name, command, rest


@click.group("checkout", cls=_CheckoutGroup)
@click.pass_context
def checkout_cli(ctx: click.Context) -> None:
    """Checkout: launch URLs, sessions, webhooks, orders, the database."""
    rest = ctx.meta.get("checkout.command_args", [])
    if ctx.invoked_subcommand == "db" or any(arg in ctx.help_option_names for arg in rest):
        return
    # Any other command works on the tables: first what start-up does with their schema (the
    # ``flask`` command left it for now, see checkout.state), as one line if it refuses.
    from ..errors import SchemaError
    from ..state import CheckoutState

    app = ctx.ensure_object(ScriptInfo).load_app()
    state: CheckoutState = app.extensions["checkout"]
    try:
        state.ensure_schema(app)
    except SchemaError as exc:
        raise click.ClickException(str(exc)) from None


@checkout_cli.command("launch-url")
@click.option("--flow", type=click.Choice(["onramp", "offramp"]), required=True)
@click.option("--network", help="e.g. CELO")
@click.option("--asset", help="e.g. USDC")
@click.option("--amount", help="a decimal number, in --currency")
@click.option("--currency", help="onramp: local or crypto; offramp: local or usd")
@click.option("--country", "countryIsoCode", help="ISO 3166 alpha-2 code, e.g. NG")
@click.option("--payment-channel", "paymentChannel", help="e.g. bank, mobile_money")
@click.option("--carrier", "carrierCode", help="carrier code, for channels that need one")
@click.option("--address", help="the user's wallet (onramp: receives; offramp: sends)")
@click.option("--memo", help="memo, for networks that have one")
@click.option("--email")
@click.option("--phone", "phoneNumber", help="with country code, e.g. +2348012345678")
@click.option("--order-params", "orderParams", help="your own reference, echoed in webhooks")
@click.option("--payment-type", "paymentType", type=click.Choice(["CRYPTO_WALLET", "VIRTUAL_WALLET"]),
              help="offramp: VIRTUAL_WALLET pays out of your balance (lock amount and currency)")
@click.option("--lock", multiple=True, help="a claim the user cannot change (repeatable)")
@click.option("--parent-origin", "parentOrigin", help="the one origin allowed to frame the session")
@click.option("--return-url", "returnUrl", help='where "back to the shop" goes')
@click.option("--locale", help="UI language, e.g. fr or sw_KE")
@click.option("--color-scheme", "colorScheme", type=click.Choice(["light", "dark"]),
              help="your page's mode, for a theme that offers both (CHECKOUT_THEME)")
# From 60: a --ttl written in minutes, as it once was (1 to 30), is refused, not taken as seconds.
@click.option("--ttl", type=click.IntRange(60, 1800), default=900, show_default=True,
              help="seconds until the token expires, 60 to 1800 (seconds, as launch_url's _ttl)")
@click.option("--external", is_flag=True,
              help="absolute URL (the default when CHECKOUT_PUBLIC_URL or SERVER_NAME is set)")
@click.option("--base-url", help="absolute URL on this address, e.g. https://pay.example.com")
def launch_url_command(flow: str, lock: tuple[str, ...], ttl: int, external: bool,
                       base_url: str | None, **claims: str | None) -> None:
    """Print a /launch URL with a freshly signed launch token: absolute on the public address
    (CHECKOUT_PUBLIC_URL, else SERVER_NAME) when one is configured, or on --base-url."""
    from ..errors import LaunchTokenError
    from ..launch import launch_url
    from ..public_address import public_base

    given: dict[str, object] = {name: value for name, value in claims.items() if value is not None}
    if lock:
        given["lock"] = list(lock)
    # A printed URL is pasted into a message or a page: a path alone would lead nowhere.
    external = external or public_base() is not None
    try:
        url = launch_url(current_app, flow, _external=external, _base_url=base_url,
                         _ttl=ttl, **given)
    except LaunchTokenError as exc:
        detail = getattr(exc, "detail", exc)
        raise click.UsageError(f"the token would be refused: {detail}") from exc
    except RuntimeError as exc:  # url_for without SERVER_NAME
        raise click.UsageError("--external needs CHECKOUT_PUBLIC_URL or SERVER_NAME; or pass "
                               "--base-url") from exc
    click.echo(url)


sessions_cli = AppGroup("sessions", help="Checkout sessions: purge expired ones.")


@sessions_cli.command("purge")
@click.option("--older-than-days", type=click.IntRange(min=0, max=MAX_DAYS), default=0,
              show_default=True, help="keep sessions that expired less than this many days ago")
def purge_sessions_command(older_than_days: int) -> None:
    """Delete expired checkout sessions (they hold users' wallet and contact details), and the
    KYC levels the upstream has not confirmed for CHECKOUT_KYC_REMEMBER_DAYS."""
    from datetime import timedelta

    from flask import current_app

    from ..kyc import memory as kyc_memory
    from ..session_purge import purge_expired_sessions
    from ..state import get_state

    engine = get_state().engine
    deleted = purge_expired_sessions(engine, older_than=timedelta(days=older_than_days))
    click.echo(f"deleted {deleted} expired session{'' if deleted == 1 else 's'}")
    days = current_app.config["CHECKOUT_KYC_REMEMBER_DAYS"]
    forgotten = kyc_memory.forget_older_than(engine, float(days))
    click.echo(f"forgot {forgotten} KYC level{'' if forgotten == 1 else 's'} the upstream has not "
               f"confirmed in {days} days")


checkout_cli.add_command(sessions_cli)


@checkout_cli.command("worker")
@click.option("--once", is_flag=True, help="one round, then exit (from cron)")
def worker_command(once: bool) -> None:
    """Process webhooks, send signals, ask about orders whose webhooks were lost and purge old
    data, in this process, until stopped (SIGTERM or Ctrl-C). For hosts whose web processes
    keep no threads: set CHECKOUT_WEBHOOK_BACKGROUND = False there, and run this beside them."""
    import signal
    import threading

    from ..metrics import counting_process
    from ..state import real_app
    from ..webhooks.dispatcher import run_worker, sweep

    app = real_app(current_app)
    with counting_process(app):
        if once:
            sweep(app)
            return
        stop = threading.Event()
        for stop_signal in (signal.SIGTERM, signal.SIGINT):
            signal.signal(stop_signal, lambda *_args: stop.set())
        run_worker(app, stop)

from .db import db_cli  # noqa: E402 - the schema's subgroup

checkout_cli.add_command(db_cli)

from .orders import orders_cli  # noqa: E402
from .webhooks import webhooks_cli  # noqa: E402

checkout_cli.add_command(webhooks_cli)
checkout_cli.add_command(orders_cli)


desk_cli = AppGroup("desk", help="The merchant's desk: its index of orders.")


@desk_cli.command("reindex")
def desk_reindex_command() -> None:
    """Index the orders kept before the desk had its index (after an upgrade), or under another
    CHECKOUT_LAUNCH_SECRET: every stored order and every live session's. Only adds; safe to run
    while the checkout serves."""
    from ..desk.reindex import reindex
    from ..state import get_state

    state = get_state()
    read = reindex(state.engine, state.journal, state.sessions)
    click.echo(f"{read} order record(s) read into the desk's index")


checkout_cli.add_command(desk_cli)
