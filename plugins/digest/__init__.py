"""The digest tool group: topic communities of the tag graph and the weekly digest.

The tools and the commands' rendering are imported by the hooks that use them: registering
the plugin loads neither."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes.facekit.terminal import DbOption, JsonOption, check, database, run_tool, tool_number
from hermes.hookspecs import hookimpl

from . import prompts

#: The commands :func:`hermes_register_commands` adds, each with the first paragraph of its
#: help: ``hermes --help`` reads them from this file without importing the plugin
#: (:func:`hermes.plugins.declared_commands`; tests/test_cli_start.py holds them to what the
#: hook adds).
COMMANDS = {
    "digest": "The persona's ranked unread items of the window that clear its bar, grouped by "
              "topic, with reasons.",
    "topics": "The topic communities of the tag graph (labels, sizes, top tags).",
}


@hookimpl
def hermes_register_tools():
    # Here, not at the top: the tools (their models, the topics, the ranking) load when tools are collected.
    from . import tools

    return [tools.kg_communities, tools.digest]


@hookimpl
def hermes_register_prompts():
    return [prompts.WORTH_READING]


@hookimpl
def hermes_register_commands(app: typer.Typer) -> None:
    # Here, not at the top: the tools (whose limits the options take) and the rendering load
    # when a command is looked up.
    from . import tools
    from .render import render_communities, render_digest

    @app.command("digest")
    def digest_command(
        user: Annotated[str, typer.Argument(metavar="USER", help="Persona name.")],
        days: Annotated[int, typer.Option(parser=tool_number,
                                          help="Items published in the last N days.")] = 7,
        per_topic: Annotated[int, typer.Option("--per-topic", parser=tool_number,
                                               help="Most items shown per topic.")] = 3,
        limit: Annotated[int, typer.Option(parser=tool_number,
                                           help="How many top-ranked unread items to group.")] = 30,
        below_bar: Annotated[bool, typer.Option(
            "--below-bar", help="Also list the items below the persona's bar (match weak or none).")] = False,
        db: DbOption = None,
        as_json: JsonOption = False,
    ):
        """The persona's ranked unread items of the window that clear its bar, grouped by
        topic, with reasons."""
        with database(db) as conn:
            result = check(run_tool(conn, "digest", user=user, days=days, per_topic=per_topic,
                                    limit=limit, below_bar=below_bar), as_json)
        if as_json:
            return
        if result.get("nothing_to_show") and not result.get("n_in_window"):
            typer.echo(result["message"])  # an empty window: nothing else to say
            return
        render_digest(result, user)

    @app.command("topics")
    def topics_command(
        limit: Annotated[int, typer.Option(parser=tool_number,
                                           help="How many communities to list.")] = 20,
        db: DbOption = None,
        as_json: JsonOption = False,
    ):
        """The topic communities of the tag graph (labels, sizes, top tags)."""
        with database(db) as conn:
            result = check(run_tool(conn, "kg_communities", limit=limit), as_json)
        if not as_json:
            render_communities(result)
