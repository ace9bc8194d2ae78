"""``hermes digest USER`` and ``hermes topics``: the digest tools for a person at a terminal
(the same functions MCP calls, through :func:`hermes.facekit.terminal.run_tool`)."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes.facekit.terminal import DbOption, JsonOption, check, database, die, run_tool, tool_number

from .render import render_communities, render_digest


def digest(
    user: Annotated[str, typer.Argument(metavar="USER", help="Persona name.")],
    since_days: Annotated[
        int | None,
        typer.Option(
            "--since-days",
            metavar="DAYS",
            parser=tool_number,
            help="Only items published in the last DAYS days, as `hermes feed --since-days DAYS` (default: 7).",
        ),
    ] = None,
    # the option's first name, kept for scripts (hidden: one name a person reads, as `hermes feed`'s)
    days_alias: Annotated[int | None, typer.Option("--days", parser=tool_number, hidden=True)] = None,
    per_topic: Annotated[
        int | None,
        typer.Option(
            "--per-topic",
            parser=tool_number,
            help="Most items shown per topic (default: 3, and only when more items clear the bar than --limit groups).",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many top-ranked unread items to group.")] = 30,
    below_bar: Annotated[
        bool, typer.Option("--below-bar", help="Also list the items below the persona's bar (match weak or none).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """The persona's ranked unread items of the window that clear its bar, grouped by
    topic, with reasons."""
    if since_days is not None and days_alias is not None:
        die("use either --since-days or --days, not both")
    days = since_days if since_days is not None else days_alias
    window = {} if days is None else {"days": days}  # none given: the tool's default
    with database(db) as conn:
        result = run_tool(conn, "digest", user=user, **window, per_topic=per_topic, limit=limit, below_bar=below_bar)
    result = check(result, as_json)
    if as_json:
        return
    if result.get("nothing_to_show") and not result.get("n_in_window"):
        typer.echo(result["message"])  # an empty window: nothing else to say
        return
    render_digest(result, user)


def topics(
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many communities to list.")] = 20,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """The topic communities of the tag graph (labels, sizes, top tags)."""
    with database(db) as conn:
        result = check(run_tool(conn, "kg_communities", limit=limit), as_json)
    if not as_json:
        render_communities(result)


def register(app: typer.Typer) -> None:
    """Add ``hermes digest USER`` and ``hermes topics`` to ``app``."""
    app.command("digest")(digest)
    app.command("topics")(topics)
