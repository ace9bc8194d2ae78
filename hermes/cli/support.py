"""What every CLI command shares: the ``--db`` / ``--json`` options, opening the database,
printing JSON, and turning a user mistake into one clear line with a non-zero exit."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer

from ..errors import HermesError
from ..storage.db import get_db

DbOption = Annotated[
    Optional[str],
    typer.Option("--db", help="Database file (default: $HERMES_DB or <HERMES_HOME>/hermes.db).",
                 envvar="HERMES_DB", show_envvar=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def open_db(path: str | None):
    return get_db(path)


def emit_json(payload) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")


def die(message: str, code: int = 1):
    """Print one line on stderr and exit non-zero (no traceback for user mistakes)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def check(result: dict, as_json: bool) -> dict:
    """Print a tool result for humans or as JSON; exit non-zero when it failed."""
    if as_json:
        emit_json(result)
        if not result.get("ok", True):
            raise typer.Exit(1)
    elif not result.get("ok", True):
        die(result.get("message", "failed"))
    return result


def run_guarded(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except HermesError as exc:
        die(str(exc))
