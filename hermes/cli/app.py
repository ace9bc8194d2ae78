"""The ``hermes`` command line (typer). Plugins add commands via ``hermes_register_commands``.

:func:`build_app` makes a fresh app each time (the tests build one per plugin set).
"""

from __future__ import annotations

import sys

import typer

from .. import __version__
from ..errors import HermesError
from ..plugins import describe_plugins, get_plugin_manager
from ..tools import caller_as
from . import core
from .support import DbOption, JsonOption, emit_json


def plugins_command(db: DbOption = None, as_json: JsonOption = False):
    """List every loaded plugin: its distribution and version, the hooks and tools it provides."""
    found = describe_plugins()
    if as_json:
        emit_json(found)
        return
    for p in found:
        origin = f"{p['distribution']} {p['version']}" if p["distribution"] else "not installed"
        typer.echo(f"{p['name']}  ({p['module']}, {origin})")
        typer.echo(f"    hooks: {', '.join(p['hooks']) or '-'}")
        if p["tools"]:
            typer.echo(f"    tools: {', '.join(p['tools'])}")


def _version(value: bool):
    if value:
        typer.echo(f"hermes {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="hermes",
        help="A self-hosted personal feed engine for researchers.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        ctx: typer.Context,
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                     help="Print the version and exit."),
    ):
        """hermes: ingest feeds, rank them per persona, explain, digest, keep a corpus."""
        # A person at the command line: tools the commands call record source 'ui' (as the
        # web UI does); `hermes serve` still says 'agent' for every MCP call.
        ctx.with_resource(caller_as("ui"))

    app.command("plugins")(plugins_command)
    core.register(app)
    get_plugin_manager().hook.hermes_register_commands(app=app)
    return app


def main() -> None:
    try:
        build_app()()
    except HermesError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
