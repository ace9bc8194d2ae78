"""``hermes corpus …``: a persona's corpus at the terminal (read views + reconcile), and the
person's reading verbs: ``hermes read / save / unsave / note / highlight USER ITEM…``.

Every command calls the corpus tools through :func:`hermes.cli_support.run_tool` (the same
functions MCP calls; worded for the CLI; signals recorded with source ``ui``). An empty
answer exits 0.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hermes.cli_support import (DbOption, JsonOption, check, clean, database, die, emit_json,
                                run_each, run_tool)
from hermes.errors import HermesError
from hermes.faces import plural
from hermes.signals import require_user

from . import membership
from .signals import MAX_TEXT

UserArg = Annotated[str, typer.Argument(metavar="USER", help="Persona name (see `hermes persona list`).")]
ItemsArg = Annotated[list[int], typer.Argument(metavar="ITEM...", help="Item ids, as `hermes feed USER` prints them.")]
ItemArg = Annotated[int, typer.Argument(metavar="ITEM", help="Item id, as `hermes feed USER` prints it.")]
TextArg = Annotated[str, typer.Argument(metavar="TEXT", help=f"At most {MAX_TEXT} characters.")]


def _run(db_path, tool: str, as_json: bool, **arguments) -> dict:
    with database(db_path) as db:
        return check(run_tool(db, tool, **arguments), as_json)


# --- the corpus views ------------------------------------------------------------------

def show(user: UserArg, db: DbOption = None, as_json: JsonOption = False):
    """Summary of USER's corpus: revision, experienced and saved counts, top topics."""
    r = _run(db, "corpus", as_json, user=user)
    if as_json:
        return
    typer.echo(r["message"])
    for e in r["top_entities"]:
        typer.echo(f"  {clean(e['entity'])} ({e['kind']}, {plural(e['item_count'], 'item')})")


def items(
    user: UserArg,
    facet: Annotated[str, typer.Option(help="experienced (read or captured) or saved (favorited, unread).")] = "experienced",
    limit: Annotated[int, typer.Option(min=1, max=500, help="How many items.")] = 50,
    db: DbOption = None, as_json: JsonOption = False,
):
    """List the items of one facet of USER's corpus, newest first."""
    r = _run(db, "corpus_items", as_json, user=user, facet=facet, limit=limit)
    if as_json:
        return
    typer.echo(r["message"])
    for i in r["items"]:
        typer.echo(f"  #{i['item_id']}  {clean(i['title'], 100)}")


def ranked(user: UserArg, limit: Annotated[int, typer.Option(min=1, max=200, help="How many items.")] = 10,
           db: DbOption = None, as_json: JsonOption = False):
    """USER's experienced items by strength."""
    r = _run(db, "corpus_ranked", as_json, user=user, limit=limit)
    if as_json:
        return
    typer.echo(r["message"])
    for i in r["items"]:
        typer.echo(f"  {i['strength']:.2f}  #{i['item_id']}  {clean(i['title'], 100)}")


def changes(user: UserArg,
            since: Annotated[int, typer.Option(min=0, metavar="REVISION",
                                               help="Revision to start after (0 = all).")] = 0,
            limit: Annotated[int, typer.Option(min=1, max=1000, help="How many changes.")] = 200,
            db: DbOption = None, as_json: JsonOption = False):
    """Membership changes of USER's corpus after revision --since."""
    r = _run(db, "corpus_changes", as_json, user=user, since=since, limit=limit)
    if as_json:
        return
    typer.echo(r["message"])
    for c in r["changes"]:
        typer.echo(f"  r{c['revision']}  {c['kind']:<7}  {c['facet']:<11}  #{c['item_id']}")


def recall(user: UserArg,
           query: Annotated[str, typer.Argument(metavar="WORDS", help="Words that must all occur.")],
           limit: Annotated[int, typer.Option(min=1, max=50, help="How many items.")] = 10,
           db: DbOption = None, as_json: JsonOption = False):
    """Search what USER read or captured for WORDS."""
    r = _run(db, "recall", as_json, user=user, query=query, limit=limit)
    if as_json:
        return
    typer.echo(r["message"])
    for i in r["items"]:
        typer.echo(f"  #{i['item_id']}  {clean(i['title'], 100)}  ({', '.join(i['matched_in'])})")


def reconcile(user: UserArg, db: DbOption = None, as_json: JsonOption = False):
    """Recompute USER's membership from the raw signals.

    Run it after changing heard_threshold in config.toml; each difference is logged as a
    revision."""
    with database(db) as database_:
        try:
            u = require_user(database_, user)
            found = membership.reconcile(database_, u["id"])
        except HermesError as exc:
            check({"ok": False, "message": str(exc), "changes": []}, as_json)
            return
        revision, _ = membership.revision_state(database_, u["id"])
    message = f"{len(found)} membership changes for {u['name']}; revision {revision}"
    if as_json:
        emit_json({"ok": True, "message": message, "changes": found, "revision": revision})
    else:
        typer.echo(message)


def corpus_app() -> typer.Typer:
    app = typer.Typer(help="A persona's corpus: what it read or captured, and what it saved.",
                      no_args_is_help=True)
    app.command()(show)
    app.command()(items)
    app.command()(ranked)
    app.command()(changes)
    app.command()(recall)
    app.command()(reconcile)
    return app


# --- the person's reading verbs ---------------------------------------------------------

def read(user: UserArg, items_: ItemsArg, db: DbOption = None, as_json: JsonOption = False):
    """Mark items read by USER: they enter the corpus as experienced."""
    run_each(db, "record_progress", items_, as_json, user=user, fraction=1.0)


def save(
    user: UserArg,
    refs: Annotated[list[str], typer.Argument(
        metavar="ITEM...", help="Item ids, as `hermes feed USER` prints them. (An arXiv id, DOI "
                                "or URL of something no feed brought is saved by the save_item "
                                "tool, where a plugin provides it.)")],
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Save items for later for USER (the saved facet; not marked read)."""
    ids = [int(r) for r in refs if r.strip().isdigit()]
    others = [r for r in refs if not r.strip().isdigit()]
    if others:
        _save_others(db, user, others, as_json, has_ids=bool(ids))
    if ids:
        run_each(db, "favorite", ids, as_json, user=user, on=True)


def _save_others(db_path, user: str, refs: list[str], as_json: bool, *, has_ids: bool) -> None:
    """Non-integer references (an arXiv id, a DOI, a URL) go to the ``save_item`` tool when
    a plugin provides one; item ids stay with ``favorite``."""
    from hermes.tools import collect_tools

    tool = collect_tools().get("save_item")
    if tool is None:
        die(f"{', '.join(refs[:3])!s} is not an item id (the numbers `hermes feed USER` prints); "
            "saving by arXiv id, DOI or URL needs the save_item tool, which no loaded plugin "
            "provides" + ("; nothing was saved" if has_ids else ""))
    target = next(p.name for p in tool.arguments() if p.name != "user")
    with database(db_path) as conn:
        results = [run_tool(conn, "save_item", user=user, **{target: ref}) for ref in refs]
    for result in results:
        if as_json:
            emit_json(result)
        elif result.get("ok"):
            typer.echo(result["message"])
        else:
            typer.echo(f"error: {result['message']}", err=True)
    if any(not r.get("ok") for r in results):
        raise typer.Exit(1)


def unsave(user: UserArg, items_: ItemsArg, db: DbOption = None, as_json: JsonOption = False):
    """Remove items from USER's saved-for-later list."""
    run_each(db, "favorite", items_, as_json, user=user, on=False)


def note(user: UserArg, item: ItemArg, text: TextArg, db: DbOption = None, as_json: JsonOption = False):
    """Write a note on ITEM for USER: the item enters the corpus as experienced."""
    r = _run(db, "add_note", as_json, user=user, item_id=item, text=text)
    if not as_json:
        typer.echo(r["message"])


def highlight(
    user: UserArg, item: ItemArg, text: TextArg,
    comment: Annotated[Optional[str], typer.Option("--note", metavar="TEXT",
                                                   help="A comment on the passage.")] = None,
    db: DbOption = None, as_json: JsonOption = False,
):
    """Keep a passage of ITEM for USER: the item enters the corpus as experienced."""
    r = _run(db, "add_highlight", as_json, user=user, item_id=item, text=text, note=comment)
    if not as_json:
        typer.echo(r["message"])


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app(), name="corpus")
    app.command("read")(read)
    app.command("save")(save)
    app.command("unsave")(unsave)
    app.command("note")(note)
    app.command("highlight")(highlight)
