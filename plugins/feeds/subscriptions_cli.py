"""``hermes feeds …``: a person's subscriptions at the terminal (add, list, remove, rename,
folder, trust, preview, OPML import and export).

A person at the CLI is trusted: ``feeds add`` and ``feeds preview`` take any URL or a local
path and may reach private hosts. The commands call the same functions as the MCP tools
(worded for the CLI); a user mistake is one ``error:`` line on stderr and exit status 1, and
an empty answer exits 0.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hermes.contract import ok
from hermes.facekit.faces import plural
from hermes.facekit.terminal import (
    DbOption,
    JsonOption,
    check,
    checked_options,
    clean,
    database,
    die,
    emit_json,
    guarded,
    hermes_command,
    run_tool,
    style,
    tool_number,
)

from .subscriptions import (
    feed_rows,
    move_to_folder,
    normalise_location,
    probe,
    probe_to_subscribe,
    subscribe,
    trust,
)

feeds_app = typer.Typer(
    name="feeds",
    help="Manage feed subscriptions (add, list, rename, folder, remove, preview, OPML).",
    no_args_is_help=True,
    add_completion=False,
)


@feeds_app.command("add")
@guarded
def add(
    location: Annotated[
        str,
        typer.Argument(
            metavar="URL_OR_PATH",
            help="Feed URL, a web page that links its feed, a file:// URL or a path to a feed file.",
        ),
    ],
    title: Annotated[str | None, typer.Option("--title", help="Display title (default: the feed's own).")] = None,
    folder: Annotated[
        str | None, typer.Option("--folder", help="Folder to put it in; nest with ' / ' (\"Science / Physics\").")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Subscribe to a feed after one fetch + parse checks it.

    A web page is followed to the feed it links. Items arrive with `hermes ingest`. A feed
    removed earlier gets back its items, ratings, title and folder (--title and --folder win)."""
    url = normalise_location(location)
    probed = probe_to_subscribe(url, allow_private=True)  # first: a location that is no feed starts no database
    # the person's own feed: a database this starts gets no starter feeds besides
    with database(db, create=True, starters=False) as conn:
        result = subscribe(conn, url, title, subscribed_by="user", probe_fn=lambda u: probed, folder=folder)
        if not result["ok"] and result["feed"].get("subscribed_by") == "agent" and not as_json:
            feed = result["feed"]
            die(
                f"already subscribed, by an agent: feed {feed['id']}; `hermes feeds trust "
                f"{feed['id']}` lets `hermes ingest` fetch it like a feed you added"
            )
        check(result, as_json)
    if not as_json:
        feed = result["feed"]
        if feed.get("found_on_page"):
            typer.echo(f"{clean(feed['found_on_page'])} is a web page; its feed is {clean(feed['url'])}")
        where = f"in {clean(feed['folder'])}, " if feed.get("folder") else ""
        typer.echo(
            f"Subscribed: [{feed['id']}] {clean(feed['title'])}  "
            f"({where}{plural(feed['n_entries'], 'entry', 'entries')} now)"
        )
        # Here, not at the top: the ingest modules load httpx, which loads only when a feed
        # is fetched or read (as it was just now, by the probe).
        from hermes.ingest.feedlist import taken_back

        back = taken_back(feed, show=lambda value: f"“{clean(value)}”")
        if back:
            typer.echo(back)
        ingest = hermes_command("ingest", db)
        typer.echo(
            f"Run `{ingest}` to load what it published since."
            if feed.get("items_kept")
            else f"Run `{ingest}` to load its items."
        )


@feeds_app.command("list")
@guarded
def list_(db: DbOption = None, as_json: JsonOption = False):
    """List subscriptions with item counts and fetch health."""
    with database(db) as conn:
        result = run_tool(conn, "list_feeds")
    check(result, as_json)
    if as_json:
        return
    failing = (result.get("refresh") or {}).get("failing")
    if failing:  # first: a refresh that keeps failing is why every feed goes stale
        typer.echo(style(clean(failing["words"], 600), fg="red"))
    if not result["feeds"]:
        typer.echo(result["message"])
    for f in result["feeds"]:
        fetched, status = fetch_words(f)
        folder = f"  (in {clean(f['folder'])})" if f.get("folder") else ""
        typer.echo(f"[{f['id']}] {clean(f['title'] or f['url'])}{folder}")
        typer.echo(f"     {clean(f['url'])}")
        by = "added by an agent: fetched with the private-address guard" if f["subscribed_by"] == "agent" else ""
        typer.echo(" · ".join(filter(None, [f"     {plural(f['item_count'], 'item')}", fetched, status, by])))
    if result["orphaned_items"]:
        typer.echo(f"({plural(result['orphaned_items'], 'item')} remain from removed feeds)")


def fetch_words(f: dict) -> tuple[str, str]:
    """When a feed was last fetched, and its health, for `feeds list`. ``last_fetched`` is
    set by every try, a failed one too (hermes.ingest.pipeline), so a feed whose last try
    failed says "last tried": it was not fetched then, and may not have been for long."""
    when = (f["last_fetched"] or "")[:16].replace("T", " ")
    if f["last_error"]:
        in_a_row = f" ({f['error_count']} times in a row)" if f["error_count"] > 1 else ""
        failed = style(f"failed: {clean(f['last_error'], 200)}{in_a_row}", fg="red")
        return (f"last tried {when}, {failed}" if when else failed), ""
    if not when:  # no fetch, so no health to report ("ok" would claim one)
        # items without a fetch: a feed added again took back what an earlier one stored
        return ("not fetched since it was subscribed" if f["item_count"] else "never fetched"), ""
    # a feed that parsed with problems is read, but not "ok" (as the web says)
    status = f"read with a warning: {clean(f['last_warning'], 200)}" if f.get("last_warning") else "ok"
    return f"last fetched {when}", status


FeedId = Annotated[int, typer.Argument(metavar="ID", help="Feed id (see `hermes feeds list`).")]


def _say(db_path: str | None, tool: str, as_json: bool, **arguments) -> None:
    """Call ``tool`` and print its message (or its JSON): the subcommands that only relay
    the tool's answer."""
    with database(db_path) as conn:
        result = run_tool(conn, tool, **arguments)
    check(result, as_json)
    if not as_json:
        typer.echo(clean(result["message"]))


@feeds_app.command("remove")
@guarded
def remove(
    feed_id: FeedId,
    yes: Annotated[bool, typer.Option("--yes", help="Really remove (without it nothing changes).")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Unsubscribe from a feed. Its items and every click on them are kept."""
    _say(db, "remove_feed", as_json, feed_id=feed_id, confirm=yes)


@feeds_app.command("rename")
@guarded
def rename_command(
    feed_id: FeedId,
    title: Annotated[str, typer.Argument(metavar="TITLE", help="The new display title (quote it).")],
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Change a feed's display title; ingest never overwrites a title you set."""
    _say(db, "rename_feed", as_json, feed_id=feed_id, title=title)


@feeds_app.command("folder")
@guarded
def folder_command(
    feed_id: FeedId,
    folder: Annotated[
        str | None,
        typer.Argument(
            metavar="[FOLDER]",
            help="The folder; nest with ' / ' (\"Science / Physics\", as OPML "
            'import stores them). Leave out, or "", for the top level.',
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Put a feed in a folder, or back at the top level; `feeds list` and OPML export show it."""
    with database(db) as conn:
        feed = move_to_folder(conn, feed_id, folder)
    where = f"in {feed['folder']}" if feed["folder"] else "at the top level"
    was = f"in {feed['was']}" if feed["was"] else "at the top level"
    changed = feed["folder"] != feed["was"]
    message = (
        f"Feed {feed['id']} is now {where} (was {was})."
        if changed
        else f"Feed {feed['id']} is already {where}; nothing changed."
    )
    if as_json:
        emit_json(ok(message, changed=changed, feed=feed))
    else:
        typer.echo(clean(message))


@feeds_app.command("trust")
@guarded
def trust_command(
    feed_id: FeedId,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Trust a feed an agent added: `hermes ingest` then fetches it like yours, LAN included."""
    with database(db) as conn:
        feed = trust(conn, feed_id)
    what = f"feed {feed['id']} ({feed['url']})"
    message = (
        f"{what} is already yours: ingest fetches it without the private-address guard"
        if feed["already"]
        else f"Trusted {what}: `hermes ingest` now fetches it like a feed you added, private "
        "and local-network addresses included"
    )
    if as_json:
        emit_json(ok(message, feed={**feed, "subscribed_by": "user"}, changed=not feed["already"]))
    else:
        typer.echo(message + ".")


@feeds_app.command("preview")
@guarded
def preview(
    location: Annotated[str, typer.Argument(metavar="URL_OR_PATH", help="Feed URL or path to a feed file.")],
    limit: Annotated[int, typer.Option("--limit", parser=tool_number, help="Entries to show (1 to 20).")] = 5,
    as_json: JsonOption = False,
):
    """Show a feed's recent entries without subscribing."""
    limit = checked_options("preview", limit=(limit, int, {"ge": 1, "le": 20}))["limit"]
    url = normalise_location(location)
    parsed = probe(url, allow_private=True)
    entries = parsed["entries"][:limit]
    feed_url = parsed.get("feed_url") or url
    if as_json:
        emit_json(
            {
                "ok": True,
                "feed": {
                    "url": feed_url,
                    "title": parsed["title"],
                    "n_entries": parsed["n_entries"],
                    "found_on_page": parsed.get("page_url"),
                },
                "entries": [
                    {k: e.get(k) for k in ("title", "url", "published", "content_type", "tags", "summary")}
                    for e in entries
                ],
            }
        )
        return
    if parsed.get("page_url"):
        typer.echo(f"{clean(url)} is a web page; its feed is {clean(feed_url)}")
    typer.echo(f"{clean(parsed['title'] or feed_url)}  ({plural(parsed['n_entries'], 'entry', 'entries')})")
    if parsed.get("warning"):
        typer.echo(f"warning: {clean(parsed['warning'])}")
    for e in entries:
        typer.echo(f"  - {clean(e['title'])}")
        meta = " · ".join(filter(None, [(e["published"] or "")[:10] or "date unknown", e["content_type"], e["url"]]))
        typer.echo(f"    {clean(meta)}")


@feeds_app.command("import-opml")
@guarded
def import_opml(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="An OPML file (as exported by most feed readers).")],
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Subscribe to every feed listed in an OPML file (no fetch; `hermes ingest` loads them).

    Folders are kept: a feed in nested folders gets their path, outermost first ("Science /
    Physics"); a " / " inside one folder's name is stored as " ／ " (fullwidth solidus) so it
    stays one folder, and the report says so. A feed listed twice is kept in the folder where
    it is first listed; the report names it. feed:// and feed:https:// addresses are read as
    http(s). A feed already subscribed is not added again; it moves into the folder the
    file gives it (one at the file's top level keeps its folder), and keeps its title.
    Web feeds are taken as listed. A local path or file:// entry (as `hermes feeds
    export-opml` writes for local feeds) is taken only when that file exists here and parses
    as a feed, so a shared OPML file cannot make `hermes ingest` read other files.
    """
    # Here, not at the top: the OPML module (xml, the feed parser) loads for the OPML
    # commands only, not for every command of the plugin (`hermes feed`, issue 36).
    from .opml import is_web_url, local_feed_problem, read_opml, subscribe_outlines

    listed = read_opml(file)
    taken, skipped, repeats = [], [], listed.repeats
    for outline in listed.outlines:
        problem = None if is_web_url(outline.url) else local_feed_problem(outline.url)
        if problem:
            skipped.append({"url": outline.url, "reason": problem})
        else:
            taken.append(outline)
    with database(db, create=True, starters=False) as conn:  # the person's own list
        done = subscribe_outlines(conn, taken)
    added, moved = done["added"], done["moved"]
    message = (
        f"{plural(len(added), 'feed')} added, {done['already']} already subscribed"
        + (f" ({len(moved)} moved to the file's folder)" if moved else "")
        + (f", {len(repeats)} listed twice in the file" if repeats else "")
        + (f", {len(skipped)} skipped" if skipped else "")
        + (". They were not fetched: the next `hermes ingest` checks each one and loads its items." if added else ".")
    )
    if as_json:
        emit_json(
            ok(
                message,
                added=len(added),
                already_subscribed=done["already"],
                moved=moved,
                repeats=repeats,
                skipped=skipped,
                folders_renamed=listed.renamed,
                feed_ids=added,
            )
        )
        return
    typer.echo(message)
    for entry in moved:
        typer.echo(
            f"  moved: feed {entry['id']} to {clean(entry['folder'])}"
            + (f" (was in {clean(entry['was'])})" if entry["was"] else "")
        )
    for entry in repeats:
        typer.echo(
            f"  listed twice: {clean(entry['url'])} (again {_where(entry['folder'])}): "
            + (
                "kept in the first folder, " + repr(clean(entry["kept_in"]))
                if entry["kept_in"]
                else "kept at the top level, where it is first listed"
            )
        )
    for entry in listed.renamed:
        typer.echo(
            f"  folder {clean(entry['name'])!r} is one folder, stored as "
            f"{clean(entry['stored'])!r}: ' / ' separates nested folders in hermes"
        )
    for entry in skipped:
        typer.echo(f"  skipped: {clean(entry['url'])} ({entry['reason']})")


def _where(folder: str | None) -> str:
    return f"in {clean(folder)!r}" if folder else "at the top level"


@feeds_app.command("export-opml")
@guarded
def export_opml(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to this file instead of stdout.")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Write the subscriptions as OPML 2.0 (stdout by default), folders as nested outlines.

    Local feeds are written as file:// URLs, which `hermes feeds import-opml` takes back on
    this machine. --json prints {ok, message, path, feed_count, folders, opml}."""
    with database(db) as conn:
        feeds = feed_rows(conn)
    # Here, as in import_opml: the OPML module loads for the OPML commands only.
    from .opml import build_opml

    document = build_opml(feeds)
    folders = sorted({f["folder"] for f in feeds if f["folder"]})
    counted = f"{plural(len(feeds), 'feed')} in {plural(len(folders), 'folder')}"
    if output is not None:
        try:
            output.expanduser().write_bytes(document)
        except OSError as exc:
            die(f"cannot write {output}: {exc.strerror or exc}")
    if as_json:
        emit_json(
            ok(
                f"Wrote {counted} to {output}" if output else counted,
                path=str(output) if output else None,
                feed_count=len(feeds),
                folders=folders,
                opml=document.decode(),
            )
        )
    elif output is None:
        sys.stdout.buffer.write(document) if hasattr(sys.stdout, "buffer") else sys.stdout.write(document.decode())
        sys.stdout.flush()
    else:
        typer.echo(f"Wrote {output} ({counted})", err=True)
