"""The README's "Serving in production" commands work as written: the extra they install exists and
brings the driver, and gunicorn takes every option of the command, an access log included."""
from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from gunicorn.config import Config
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _commands(title: str) -> list[str]:
    """The lines of the ```sh blocks of the README's section ``title``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    return [line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines()]


def test_the_install_line_names_an_extra_that_brings_postgresql_s_driver():
    (install,) = [line for line in _commands("Serving in production")
                  if line.startswith("pip install")]
    packages = [Requirement(word) for word in shlex.split(install)[2:]]
    assert [p.name for p in packages] == ["checkout", "gunicorn"]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert packages[0].extras == {"postgres"}
    assert {Requirement(r).name for r in extras["postgres"]} == {"psycopg"}


def test_the_gunicorn_command_takes_the_checkout_s_settings_and_keeps_an_access_log():
    (command,) = [line for line in _commands("Serving in production")
                  if line.startswith("gunicorn ")]
    given = Config().parser().parse_args(shlex.split(command)[1:])
    assert given.config == "python:checkout.gunicorn_config"
    assert given.accesslog == "-"                   # gunicorn writes none without it
    assert given.args == ["wsgi:app"]
