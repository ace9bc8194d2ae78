"""The digest tool group: topic communities of the tag graph and the weekly digest."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes.cli.support import DbOption, JsonOption, check, open_db, run_guarded
from hermes.hookspecs import hookimpl

from . import tools
from .render import render_communities, render_digest


@hookimpl
def hermes_register_tools():
    return [tools.kg_communities, tools.digest]


@hookimpl
def hermes_register_commands(app: typer.Typer) -> None:
    @app.command("digest")
    def digest_command(
        user: Annotated[str, typer.Argument(help="Persona name.")],
        days: Annotated[int, typer.Option(help="Items published in the last N days.")] = 7,
        per_topic: Annotated[int, typer.Option("--per-topic", help="Most items shown per topic.")] = 3,
        limit: Annotated[int, typer.Option(help="How many top-ranked unread items to group.")] = 30,
        below_bar: Annotated[bool, typer.Option(
            "--below-bar", help="Also list the items below the persona's bar (match weak or none).")] = False,
        db: DbOption = None,
        as_json: JsonOption = False,
    ):
        """The persona's ranked unread items of the window that clear its bar, grouped by
        topic, with reasons."""
        database = run_guarded(open_db, db)
        try:
            result = tools.digest(database, user, days=days, per_topic=per_topic, limit=limit,
                                  below_bar=below_bar)
            check(result, as_json)
            if not as_json:
                render_digest(result, user)
        finally:
            database.conn.close()

    @app.command("topics")
    def topics_command(
        limit: Annotated[int, typer.Option(help="How many communities to list.")] = 20,
        db: DbOption = None,
        as_json: JsonOption = False,
    ):
        """The topic communities of the tag graph (labels, sizes, top tags)."""
        database = run_guarded(open_db, db)
        try:
            result = tools.kg_communities(database, limit=limit)
            check(result, as_json)
            if not as_json:
                render_communities(result)
        finally:
            database.conn.close()
