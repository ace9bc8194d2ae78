"""``hermes feed USER`` (the ranked list, ``-i`` to triage it) and the person's verbs on
items: ``hermes like / dislike / unrate USER ITEM…``, ``hermes explain USER ITEM``.

Each calls the tool MCP calls (:func:`hermes.facekit.terminal.run_tool`: worded for the CLI,
clicks recorded with source ``ui``); :mod:`hermes_feeds.feed_lines` draws what they print.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from hermes.errors import HermesError
from hermes.facekit.faces import n_days, plural, typed
from hermes.facekit.terminal import (
    DbOption,
    JsonOption,
    check,
    database,
    die,
    guarded,
    hermes_command,
    run_each,
    run_tool,
    style,
    tool_number,
)
from hermes.ranking.feed_window import DEFAULT_DAYS, chosen_window, remember_window, wider_window
from hermes.storage.records import require_user

from .feed_lines import explanation_lines, item_lines

UserArg = Annotated[str, typer.Argument(metavar="USER", help="Persona name (see `hermes persona list`).")]
ItemsArg = Annotated[list[int], typer.Argument(metavar="ITEM...", help="Item ids, as `hermes feed USER` prints them.")]


@guarded
def feed(
    user: UserArg,
    limit: Annotated[int, typer.Option("--limit", "-n", parser=tool_number, help="How many items.")] = 20,
    since_days: Annotated[
        int | None,
        typer.Option(
            "--since-days",
            metavar="DAYS",
            parser=tool_number,
            help="Only items from the last DAYS days (default: the window this persona chose last, else 7; remembered).",
        ),
    ] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Rank the whole archive, not just recent items (remembered).")
    ] = False,
    below_bar: Annotated[
        bool, typer.Option("--below-bar", help="Also list the items below the persona's bar (match weak or none).")
    ] = False,
    removed_feeds: Annotated[
        bool,
        typer.Option(
            "--removed-feeds",
            help="Also rank the items of feeds you removed (the archive keeps "
            "them; the feed leaves them out otherwise).",
        ),
    ] = False,
    offset: Annotated[
        int,
        typer.Option(
            "--offset",
            parser=tool_number,
            help="Skip this many ranked items first: the next page is --offset 20 (with the "
            "default --limit), ranks stay their place in the whole feed.",
        ),
    ] = 0,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive",
            "-i",
            help="Triage on the terminal with single keys: j/k move, l like, d dislike, r read, "
            "s save, o open in the browser, e explain, q quit; the list re-ranks after each "
            "like or dislike.",
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Print USER's ranked feed: the items that clear its bar, each with the reason it ranks
    (--below-bar: the others too, under a fold; -i: triage it with keys)."""
    if all_ and since_days is not None:
        die("use either --since-days or --all, not both")
    chosen = all_ or since_days is not None
    with database(db) as conn:
        window = persona_window(conn, user, None if all_ else since_days, chosen=chosen)
    if interactive:
        if as_json or offset:
            die(f"use either --interactive or {'--json' if as_json else '--offset'}, not both")
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            die("--interactive needs a terminal (stdin and stdout); without it `hermes feed` prints the list")

        # Here, not at the top: the triage (webbrowser, the terminal's keys) loads for `-i` only.
        from .triage import Triage

        with database(db) as conn:
            Triage(conn, user, limit=limit, since_days=window).run()
            if chosen:  # the tool took it: the window is one to remember
                remember(conn, user, window)
        return
    with database(db) as conn:
        result = run_tool(
            conn,
            "list_feed",
            user=user,
            limit=limit,
            since_days=window,
            below_bar=below_bar,
            offset=offset,
            removed_feeds=removed_feeds,
        )
        if chosen and result.get("ok"):  # remembered once the tool took it
            remember(conn, user, window)
    check(result, as_json)
    if as_json:
        return
    above = [i for i in result["items"] if i["match"] in ("strong", "good")]
    below = [i for i in result["items"] if i["match"] not in ("strong", "good")]
    typer.echo(style(result["message"], dim=True) if above else result["message"])
    for item in above:
        for line in item_lines(item):
            typer.echo(line)
    last = above[-1]["rank"] if above else 0
    if above and result["above_bar"] > last:
        # the header's "(the best 20 shown)" pointed nowhere: the next page's command
        rest = result["above_bar"] - last
        # the next page shows at most ``limit`` of them (a trial read "shows ranks 9–57" of
        # a page of 8); the database named, as the person named it
        shown_to = min(result["above_bar"], last + limit)
        ranks = f"rank {last + 1}" if shown_to == last + 1 else f"ranks {last + 1}–{shown_to}"
        page = hermes_command(f"feed {typed(user)} --offset {last}" + (f" --limit {limit}" if limit != 20 else ""), db)
        typer.echo(
            style(
                f"— {plural(rest, 'more item')} {'clears' if rest == 1 else 'clear'} your bar: "
                f"`{page}` shows {ranks} —",
                dim=True,
            )
        )
    if above and result["below_bar"]:
        n = result["below_bar"]
        fold = f"— {plural(n, 'item')} below your bar"
        # listed, they follow in score order: the bar is each item's own match, not a score
        # cut (a trial read "+1.71 above +2.29" as unsorted)
        listed = ", by score: the bar is each one's match, not its score —"
        typer.echo(style(fold + (listed if below_bar else " (--below-bar lists them) —"), dim=True))
    for item in below:
        for line in item_lines(item):
            typer.echo(line)
    if not result["items"] and not offset and window is not None:
        with database(db) as conn:
            # a window with more to rank than this one (nothing here cleared the bar, or it
            # is empty)
            offer = wider_window(
                conn, require_user(conn, user), window, more_than=result["above_bar"] + result["below_bar"]
            )
        if offer:
            wider, n = offer
            option = "--all" if wider is None else f"--since-days {wider:g}"
            where = "the whole archive" if wider is None else f"the last {n_days(wider)}"
            verb = "has" if wider is None else "have"
            typer.echo(
                f"{where[0].upper()}{where[1:]} {verb} {plural(n, 'unread item')}: "
                f"`{hermes_command(f'feed {typed(user)} {option}', db)}` shows them (and keeps that window)."
            )


def persona_window(db, user: str, days: float | None, *, chosen: bool) -> float | None:
    """The window to rank: the one given, else the one the persona chose last. An unknown
    persona gets the default; the tool then names it."""
    if chosen:
        return days
    try:
        persona = require_user(db, user)
    except HermesError:
        return DEFAULT_DAYS
    return chosen_window(db, persona)


def remember(db, user: str, days: float | None) -> None:
    """Keep the window a tool accepted (``--since-days`` / ``--all``) for next time."""
    remember_window(db, require_user(db, user), days)


def like(user: UserArg, items: ItemsArg, db: DbOption = None, as_json: JsonOption = False):
    """Like items for USER: teaches the ranking (click source ui).

    A new answer replaces the old one on that item."""
    run_each(db, "record_feedback", items, as_json, user=user, liked=True)


def dislike(user: UserArg, items: ItemsArg, db: DbOption = None, as_json: JsonOption = False):
    """Dislike items for USER: teaches the ranking (click source ui)."""
    run_each(db, "record_feedback", items, as_json, user=user, liked=False)


def unrate(user: UserArg, items: ItemsArg, db: DbOption = None, as_json: JsonOption = False):
    """Take back USER's like or dislike on items: they return to the unread feed and stop
    teaching the ranking (the `remove_feedback` tool MCP calls; what the web's undo and `u`
    in `hermes feed -i` do)."""
    run_each(db, "remove_feedback", items, as_json, user=user)


def explain(
    user: UserArg,
    item: Annotated[int, typer.Argument(metavar="ITEM", help="Item id, as `hermes feed USER` prints it.")],
    since_days: Annotated[
        int | None,
        typer.Option(
            "--since-days",
            metavar="DAYS",
            parser=tool_number,
            help="Rank it among the items of the last DAYS days, as `hermes feed --since-days DAYS` "
            "does (default: the persona's window, the one `hermes feed` ranks).",
        ),
    ] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Rank it in the whole archive, as `hermes feed --all` does.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Why ITEM ranks where it does for USER: the feed line's reason, its rank in that
    window, the evidence (closest interest, nearest liked item, classifier, rated tags and
    authors) and each ranking component's contribution."""
    if all_ and since_days is not None:
        die("use either --since-days or --all, not both")
    with database(db) as conn:
        # the persona's window when none is given, as `hermes feed` ranks it (not remembered:
        # explaining one item is no choice of window)
        chosen = all_ or since_days is not None
        window = persona_window(conn, user, None if all_ else since_days, chosen=chosen)
        result = run_tool(conn, "explain_item", user=user, item_id=item, since_days=window)
    check(result, as_json)
    if as_json:
        return
    for line in explanation_lines(result["explanation"], result.get("advice") or ""):
        typer.echo(line)
