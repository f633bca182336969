"""``flask checkout ...``: the command group; each concern adds its subcommands here."""
from __future__ import annotations

from flask.cli import AppGroup

checkout_cli = AppGroup("checkout", help="Checkout: launch URLs, webhooks, sandbox.")
