"""``hermes feeds …`` (subscriptions) and ``hermes feed USER`` (the ranked list).

A person at the CLI is trusted: ``feeds add`` and ``feeds preview`` take any URL or a local
path and may reach private hosts. The commands call the same functions as the MCP tools; a
user mistake is one ``error:`` line on stderr and a non-zero exit.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from hermes.cli.support import DbOption, JsonOption, check, die, emit_json, open_db
from hermes.errors import HermesError
from hermes.ranking.explain import rank_line

from . import tools as t
from .opml import build_opml, is_web_url, read_opml
from .subscriptions import feed_rows, normalise_location, probe, removal_plan, subscribe, trust, unsubscribe

feeds_app = typer.Typer(
    name="feeds", help="Manage feed subscriptions (add, list, remove, preview, OPML).",
    no_args_is_help=True, add_completion=False,
)


def guarded(fn):
    """Turn a :class:`HermesError` into one ``error:`` line and exit status 1."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except HermesError as exc:
            die(str(exc))
    return wrapper


def _db(path):
    return open_db(path)


def _style(text: str, **kw) -> str:
    return typer.style(text, **kw) if sys.stdout.isatty() else text


@feeds_app.command("add")
@guarded
def add(
    location: Annotated[str, typer.Argument(help="Feed URL, file:// URL or path to a feed file.")],
    title: Annotated[Optional[str], typer.Option("--title", help="Display title (default: the feed's own).")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Subscribe to a feed after one fetch + parse checks it. Items arrive with `hermes ingest`."""
    url = normalise_location(location)
    database = _db(db)
    try:
        result = subscribe(database, url, title, subscribed_by="user",
                           probe_fn=lambda u: probe(u, allow_private=True))
    finally:
        database.conn.close()
    if not result["ok"] and result["feed"].get("subscribed_by") == "agent" and not as_json:
        feed = result["feed"]
        die(f"already subscribed, by an agent: feed {feed['id']}; `hermes feeds trust "
            f"{feed['id']}` lets `hermes ingest` fetch it like a feed you added")
    check(result, as_json)
    if not as_json:
        feed = result["feed"]
        typer.echo(f"Subscribed: [{feed['id']}] {feed['title']}  ({feed['n_entries']} entries now)")
        typer.echo("Run `hermes ingest` to load its items.")


@feeds_app.command("list")
@guarded
def list_(db: DbOption = None, as_json: JsonOption = False):
    """List subscriptions with item counts and fetch health."""
    database = _db(db)
    try:
        result = t.list_feeds(database)
    finally:
        database.conn.close()
    if as_json:
        emit_json(result)
        return
    if not result["feeds"]:
        typer.echo("No feeds yet. Add one: hermes feeds add URL")
    for f in result["feeds"]:
        fetched = (f["last_fetched"] or "never fetched")[:16].replace("T", " ")
        status = (_style(f"error x{f['error_count']}: {f['last_error']}", fg="red")
                  if f["last_error"] else "ok")
        typer.echo(f"[{f['id']}] {f['title'] or f['url']}")
        typer.echo(f"     {f['url']}")
        by = ("added by an agent: fetched with the private-address guard"
              if f["subscribed_by"] == "agent" else "")
        typer.echo(" · ".join(filter(None, [f"     {f['item_count']} items",
                                            f"last fetched {fetched}", status, by])))
    if result["orphaned_items"]:
        typer.echo(f"({result['orphaned_items']} items remain from removed feeds)")


@feeds_app.command("remove")
@guarded
def remove(
    feed_id: Annotated[int, typer.Argument(help="Feed id (see `hermes feeds list`).")],
    yes: Annotated[bool, typer.Option("--yes", help="Really remove (without it nothing changes).")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Unsubscribe from a feed. Its items and every click on them are kept."""
    database = _db(db)
    try:
        plan = removal_plan(database, feed_id)
        keeps = (f"its {plan['item_count']} items stay in the archive and its "
                 f"{plan['click_count']} clicks are kept")
        if not yes:
            if as_json:
                emit_json({"ok": False, "removed": False, "feed": plan["feed"],
                           "message": "nothing removed; rerun with --yes"})
                raise typer.Exit(1)
            die(f"nothing removed. This would unsubscribe {plan['what']}; {keeps}. "
                "Rerun with --yes to remove it.")
        unsubscribe(database, feed_id)
    finally:
        database.conn.close()
    if as_json:
        emit_json({"ok": True, "removed": True, "feed": plan["feed"],
                   "message": f"removed {plan['what']}"})
    else:
        typer.echo(f"Removed {plan['what']}; {keeps}.")


@feeds_app.command("trust")
@guarded
def trust_command(
    feed_id: Annotated[int, typer.Argument(help="Feed id (see `hermes feeds list`).")],
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Trust a feed an agent added: `hermes ingest` then fetches it like yours, LAN included."""
    database = _db(db)
    try:
        feed = trust(database, feed_id)
    finally:
        database.conn.close()
    what = f"feed {feed['id']} ({feed['url']})"
    message = (f"{what} is already yours: ingest fetches it without the private-address guard"
               if feed["already"] else
               f"Trusted {what}: `hermes ingest` now fetches it like a feed you added, private "
               "and local-network addresses included")
    if as_json:
        emit_json({"ok": True, "message": message, "feed": {**feed, "subscribed_by": "user"},
                   "changed": not feed["already"]})
    else:
        typer.echo(message + ".")


@feeds_app.command("preview")
@guarded
def preview(
    location: Annotated[str, typer.Argument(help="Feed URL or path to a feed file.")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=50, help="Entries to show.")] = 5,
    as_json: JsonOption = False,
):
    """Show a feed's recent entries without subscribing."""
    url = normalise_location(location)
    parsed = probe(url, allow_private=True)
    entries = parsed["entries"][:limit]
    if as_json:
        emit_json({"ok": True, "feed": {"url": url, "title": parsed["title"],
                                        "n_entries": parsed["n_entries"]},
                   "entries": [{k: e.get(k) for k in ("title", "url", "published", "content_type",
                                                      "tags", "summary")} for e in entries]})
        return
    typer.echo(f"{parsed['title'] or url}  ({parsed['n_entries']} entries)")
    if parsed.get("warning"):
        typer.echo(f"warning: {parsed['warning']}")
    for e in entries:
        typer.echo(f"  - {e['title']}")
        meta = " · ".join(filter(None, [(e["published"] or "")[:10], e["content_type"], e["url"]]))
        typer.echo(f"    {meta}")


@feeds_app.command("import-opml")
@guarded
def import_opml(
    file: Annotated[Path, typer.Argument(help="An OPML file (as exported by most feed readers).")],
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Subscribe to every http(s) feed listed in an OPML file (no fetch; `hermes ingest` loads them)."""
    # Here, not at the top: httpx and feedparser load only when a feed is fetched or read.
    from hermes.ingest.feedlist import add_feeds

    entries = read_opml(file)
    # OPML files are shared around: only web feeds are taken from one, never a local path or
    # file:// URL that would make `hermes ingest` read this machine's disk.
    web = [(u, title) for u, title in entries if is_web_url(u)]
    skipped = [u for u, _ in entries if not is_web_url(u)]
    database = _db(db)
    try:
        added = add_feeds(database, web)
    finally:
        database.conn.close()
    result = {"ok": True, "added": len(added), "already_subscribed": len(web) - len(added),
              "skipped": skipped, "feed_ids": added,
              "message": f"{len(added)} feeds added, {len(web) - len(added)} already subscribed"
                         + (f", {len(skipped)} non-http(s) entries skipped" if skipped else "")
                         + ". Run `hermes ingest` to load their items."}
    if as_json:
        emit_json(result)
    else:
        typer.echo(result["message"])
        for url in skipped:
            typer.echo(f"  skipped: {url}")


@feeds_app.command("export-opml")
@guarded
def export_opml(
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
    db: DbOption = None,
):
    """Write the subscriptions as OPML 2.0 (stdout by default)."""
    database = _db(db)
    try:
        document = build_opml(feed_rows(database))
    finally:
        database.conn.close()
    if output is None:
        sys.stdout.buffer.write(document) if hasattr(sys.stdout, "buffer") else sys.stdout.write(document.decode())
        sys.stdout.flush()
        return
    try:
        output.expanduser().write_bytes(document)
    except OSError as exc:
        die(f"cannot write {output}: {exc.strerror or exc}")
    typer.echo(f"Wrote {output}", err=True)


@guarded
def feed(
    user: Annotated[str, typer.Argument(help="Persona name (see `hermes persona list`).")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="How many items.")] = 20,
    since_days: Annotated[Optional[int], typer.Option("--since-days", min=1, help="Only items from the last D days (default 7).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Rank the whole archive, not just recent items.")] = False,
    below_bar: Annotated[bool, typer.Option(
        "--below-bar", help="Also list the items below the persona's bar (match weak or none).")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Print USER's ranked feed: the items that clear its bar, each with its match and reason."""
    if all_ and since_days is not None:
        die("use either --since-days or --all, not both")
    window = None if all_ else (since_days or 7)
    database = _db(db)
    try:
        result = t.list_feed(database, user, limit=limit, since_days=window, below_bar=below_bar)
    finally:
        database.conn.close()
    check(result, as_json)
    if as_json:
        return
    scope = "the whole archive" if window is None else f"the last {window} days"
    if not result["items"] and not result["below_bar"]:
        typer.echo(result["message"] + ("" if all_ else " (try --all)"))
        return
    above = [i for i in result["items"] if i["match"] in ("strong", "good")]
    below = [i for i in result["items"] if i["match"] not in ("strong", "good")]
    if above:
        typer.echo(_style(f"{result['above_bar']} of {result['above_bar'] + result['below_bar']} "
                          f"unread items from {scope} clear {user}'s bar; best first.", dim=True))
    else:
        typer.echo(f"Nothing from {scope} clears {user}'s bar: no unread item there is a strong "
                   "or good match." + ("" if below_bar else " --below-bar lists the closest "
                                       "anyway") + ("" if all_ else "; --all ranks the whole archive")
                   + ".")
    for item in above:
        _print_item(item)
    if result["below_bar"]:
        n = result["below_bar"]
        fold = f"— {n} item{'s' if n != 1 else ''} below your bar"
        typer.echo(_style(fold + (" —" if below_bar else " (--below-bar lists them) —"), dim=True))
    for item in below:
        _print_item(item)


def _print_item(item: dict) -> None:
    head = f"{item['rank']:>3}. [{item['id']}] {item['title']}"
    typer.echo(_style(head, bold=True))
    meta = " · ".join(filter(None, [item["source"] or "removed feed", (item["published"] or "")[:10],
                                    item["content_type"], f"score {item['score']:+.2f}"]))
    typer.echo(f"     {meta}")
    typer.echo(f"     why: {item['reason']}")
    if item["url"]:
        typer.echo(f"     {item['url']}")


@guarded
def explain(
    user: Annotated[str, typer.Argument(help="Persona name (see `hermes persona list`).")],
    item: Annotated[int, typer.Argument(metavar="ITEM", help="Item id, as `hermes feed USER` prints it.")],
    since_days: Annotated[Optional[int], typer.Option("--since-days", min=1, help="Rank it among the items of the last D days (default 7), as `hermes feed --since-days D` does.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Rank it in the whole archive, as `hermes feed --all` does.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Why ITEM ranks where it does for USER: its match, the evidence, the components."""
    if all_ and since_days is not None:
        die("use either --since-days or --all, not both")
    database = _db(db)
    try:
        result = t.explain_item(database, user, item, since_days=None if all_ else (since_days or 7))
    finally:
        database.conn.close()
    check(result, as_json)
    if not as_json:
        for line in explanation_lines(result["explanation"]):
            typer.echo(line)


def explanation_lines(e: dict) -> list[str]:
    """The one explanation for the terminal: the reason, where it ranks, the evidence."""
    ev = e["evidence"]
    lines = [_style(f"[{e['item_id']}] {e['title']}", bold=True), f"why: {e['reason']}",
             f"{rank_line(e)}{'' if e['above_bar'] else ', below the bar'}; score {e['score']:+.3f}; "
             f"{e['n_clicks']} click{'s' if e['n_clicks'] != 1 else ''}, behaviour weighs "
             f"{e['blend_weight']:.0%}"]
    lines.append(f"match: {e['match']}")
    if ev["interest"]:
        i = ev["interest"]
        lines.append(f"  interests: closest “{i['clause']}”, similarity {i['similarity']:.2f} ({i['level']})")
    if ev["liked"]:
        n = ev["liked"]
        lines.append(f"  liked: nearest [{n['id']}] {n['title']}, similarity {n['similarity']:.2f} ({n['level']})")
    if ev["classifier"]:
        c = ev["classifier"]
        lines.append(f"  classifier: probability {c['probability']:.2f} ({c['level']})")
    else:
        lines.append(f"  classifier: inactive ({e['classifier_reason']})")
    rated = ev["tags"] + ev["authors"] + ev["sources"]
    if rated:
        lines.append("  rated: " + ", ".join(f"{k['label']} ({k['score']:+.2f})" for k in rated[:8]))
    lines.append("components:")
    for name, c in e["components"].items():
        state = "" if c["active"] else "  (inactive)"
        lines.append(f"  {name:<11} {c['contribution']:+.3f}  share {c['share']:.0%}  raw {c['raw']:+.3f}{state}")
    return lines


def register(app: typer.Typer) -> None:
    app.add_typer(feeds_app, name="feeds")
    app.command("feed")(feed)
    app.command("explain")(explain)
