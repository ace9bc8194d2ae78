"""The digest tool group: topic communities of the tag graph and the weekly digest."""

from __future__ import annotations

import copy
from typing import Annotated

import typer

from hermes.cli.support import DbOption, JsonOption, check, open_db, run_guarded
from hermes.contract import UNTRUSTED, Tool
from hermes.hookspecs import hookimpl

from . import tools
from .render import render_communities, render_digest


@hookimpl
def hermes_register_tools():
    return [
        Tool(
            name="kg_communities",
            fn=tools.kg_communities,
            description=(
                "List the topics of the whole archive: communities of the tag graph (tags linked "
                "by how often they appear on the same item). Each has a label (its most central "
                "tag), size (number of tags), n_items and top_tags. Tags found on only one item "
                "are not in the graph; singletons_left_out counts them. No persona needed."
                + UNTRUSTED
            ),
            group="digest",
            read_only=True,
            idempotent=True,
            empty=copy.deepcopy(tools.COMMUNITIES_EMPTY),
        ),
        Tool(
            name="digest",
            # A thin wrapper: the implementation's chat_fn parameter stays out of the schema.
            fn=tools.digest_tool,
            description=(
                "What is worth reading: a persona's ranked unread items from the last `days` days, "
                "grouped into topics (tag-graph communities). Each topic shows at most `per_topic` "
                "items and n_total says how many it really has; items matching no topic are in "
                "`unclustered`; `saved` lists items saved for later but not read yet. Only items "
                "whose match is strong or good (they clear the persona's bar) are grouped; "
                "`below_bar` counts the weak and none ones (below_bar=true lists them). Items "
                "carry their match, a one-line reason and the explanation behind it. "
                "ranking_quality says how trained the ranking is, with a caveat when the "
                "classifier is inactive. Returns structure only: write the summary yourself."
                + UNTRUSTED
            ),
            group="digest",
            read_only=True,
            idempotent=True,
            empty=copy.deepcopy(tools.DIGEST_EMPTY),
        ),
    ]


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
