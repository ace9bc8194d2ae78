"""``hermes corpus …``: a persona's corpus at the terminal (read views, reconcile, export,
vault sync), and the person's reading verbs: ``hermes read / save / unsave / note /
highlight USER ITEM…`` (``save`` also takes an arXiv id, DOI or URL of an item no feed brought).

Every command calls the corpus tools through :func:`hermes.facekit.terminal.run_tool` (the same
functions MCP calls; worded for the CLI; signals recorded with source ``ui``). An empty
answer exits 0.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hermes.arguments import validate
from hermes.contract import fail, ok
from hermes.errors import HermesError
from hermes.facekit.faces import plural
from hermes.facekit.terminal import (
    DbOption,
    JsonOption,
    check,
    checked_options,
    clean,
    database,
    emit_json,
    lower_first,
    open_db,
    run_each,
    run_guarded,
    run_tool,
    tool_number,
)
from hermes.storage.records import require_user

from . import exchange, membership
from . import export as exporting
from . import sync as vault
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
    facet: Annotated[
        str, typer.Option(help="experienced (read or captured) or saved (favorited, unread).")
    ] = "experienced",
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many items.")] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """List the items of one facet of USER's corpus, newest first."""
    r = _run(db, "corpus_items", as_json, user=user, facet=facet, limit=limit)
    if as_json:
        return
    typer.echo(r["message"])
    for i in r["items"]:
        typer.echo(f"  #{i['item_id']}  {clean(i['title'], 100)}")


def ranked(
    user: UserArg,
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many items.")] = 10,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """USER's experienced items by strength."""
    r = _run(db, "corpus_ranked", as_json, user=user, limit=limit)
    if as_json:
        return
    typer.echo(r["message"])
    for i in r["items"]:
        typer.echo(f"  {i['strength']:.2f}  #{i['item_id']}  {clean(i['title'], 100)}")


def changes(
    user: UserArg,
    since: Annotated[
        int, typer.Option(parser=tool_number, metavar="REVISION", help="Revision to start after (0 = all).")
    ] = 0,
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many changes.")] = 200,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Membership changes of USER's corpus after revision --since."""
    r = _run(db, "corpus_changes", as_json, user=user, since=since, limit=limit)
    if as_json:
        return
    typer.echo(r["message"])
    for c in r["changes"]:
        typer.echo(f"  r{c['revision']}  {c['kind']:<7}  {c['facet']:<11}  #{c['item_id']}")


def recall(
    user: UserArg,
    query: Annotated[str, typer.Argument(metavar="WORDS", help="Words that must all occur.")],
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many items.")] = 10,
    db: DbOption = None,
    as_json: JsonOption = False,
):
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
            check(fail(str(exc), changes=[]), as_json)
            return
        revision, _ = membership.revision_state(database_, u["id"])
    message = f"{len(found)} membership changes for {u['name']}; revision {revision}"
    if as_json:
        emit_json(ok(message, changes=found, revision=revision))
    else:
        typer.echo(message)


FacetOption = Annotated[str, typer.Option(help="experienced (read or captured), saved (favorited, unread) or all.")]


def export(
    user: str,
    format: Annotated[
        str, typer.Option("--format", "-f", help="bibtex, ris, csl-json (reference managers), markdown or jsonl.")
    ] = "bibtex",
    facet: FacetOption = "all",
    since: Annotated[
        int,
        typer.Option(
            parser=tool_number,
            help="Only items that entered the corpus after this revision (0 = all); "
            "use the revision the previous export printed.",
        ),
    ] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to this file instead of stdout.", dir_okay=False)
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Export USER's corpus for Zotero and other reference managers (BibTeX, RIS, CSL-JSON),
    as Markdown, or as JSON lines."""
    since = checked_options("export", since=(since, int, {"ge": 0}))["since"]
    database = run_guarded(open_db, db)
    try:
        u = run_guarded(require_user, database, user)
        r = run_guarded(exporting.export, database, u["id"], format, facet, since)
    finally:
        database.conn.close()
    where = str(out) if out else "stdout"
    message = (
        plural(r.count, "item")
        + (f" and {plural(r.deleted, 'removal')}" if r.deleted else "")
        + f" of {u['name']} exported as {format} to {where} (revision {r.revision}; "
        f"next time --since {r.revision} exports only what is new)."
    )
    if r.truncated:
        message += (
            f" The change log was trimmed past revision {since}: some removals may be "
            "missing; export with --since 0 for the full set."
        )
    if out:
        run_guarded(_write_file, out, r.text)
    if as_json:
        emit_json(
            ok(
                message,
                format=format,
                facet=facet,
                since=since,
                count=r.count,
                deleted=r.deleted,
                revision=r.revision,
                truncated=r.truncated,
                out=str(out) if out else None,
                **({} if out else {"text": r.text}),
            )
        )
        return
    if not out:
        sys.stdout.write(r.text)
    typer.echo(message, err=not out)


def _write_file(path: Path, text: str) -> None:
    path = path.expanduser()
    if not path.parent.is_dir():
        raise HermesError(f"folder {path.parent} does not exist; create it or choose another --out")
    try:
        vault.write_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        raise HermesError(f"cannot write {path}: {exc.strerror or exc}") from None


def _left(names: list[str], outside: set[str], facet: str) -> str:
    """Why notes left the folder: their items left the corpus, or (the folder was synced
    with another ``--facet``) they are still in the corpus, only not in this facet."""
    moved = sum(n in outside for n in names)
    gone = len(names) - moved
    reasons = [
        f"{moved} whose item is still in your corpus but not in the {facet} facet" if moved else "",
        f"{gone} whose item left the corpus" if gone else "",
    ]
    return "; ".join(r for r in reasons if r)


def _sync_message(folder: Path, r, facet: str) -> str:
    outside = set(r.outside_facet)
    message = f"{folder}: {plural(len(r.written), 'note')} written, {len(r.removed)} removed"
    if r.removed:
        message += f" ({_left(r.removed, outside, facet)})"
    message += f" (revision {r.revision}; {r.reason})."
    if r.kept:
        message += (
            f" Kept {plural(len(r.kept), 'note')} ({_left(r.kept, outside, facet)}) because "
            "you wrote below the marker line: hermes never deletes your text."
        )
    return message


def sync(
    user: str,
    folder: Annotated[
        Path, typer.Argument(help="The folder to keep in step (an Obsidian vault or a folder in it).", file_okay=False)
    ],
    facet: FacetOption = "all",
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rewrite every note (your text below the marker line is kept).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Keep one Markdown note per corpus item of USER in FOLDER: only what changed since the
    last sync is written; what you write below a note's marker line is never touched."""
    database = run_guarded(open_db, db)
    try:
        u = run_guarded(require_user, database, user)
        r = run_guarded(vault.sync, database, u, folder, facet, rebuild=rebuild)
    finally:
        database.conn.close()
    message = _sync_message(folder, r, facet)
    if r.conflicts:
        message += (
            f" Left {plural(len(r.conflicts), 'note')} untouched because the marker line "
            "is gone: put it back, or delete the note to get a fresh one."
        )
    if as_json:
        emit_json(ok(message, **r.as_dict()))
        return
    typer.echo(message)
    for name in r.conflicts:
        typer.echo(f"  untouched: {name}")


def corpus_app() -> typer.Typer:
    app = typer.Typer(help="A persona's corpus: what it read or captured, and what it saved.", no_args_is_help=True)
    app.command()(show)
    app.command()(items)
    app.command()(ranked)
    app.command()(changes)
    app.command()(recall)
    app.command()(reconcile)
    app.command()(export)
    app.command()(sync)
    return app


# --- the person's reading verbs ---------------------------------------------------------


def read(user: UserArg, items_: ItemsArg, db: DbOption = None, as_json: JsonOption = False):
    """Mark items read by USER: they enter the corpus as experienced."""
    run_each(db, "record_progress", items_, as_json, user=user, fraction=1.0)


def save(
    user: UserArg,
    refs: Annotated[
        list[str],
        typer.Argument(
            metavar="ITEM...",
            help="Item ids, as `hermes feed USER` prints them, or an arXiv id "
            "(2401.12345), a DOI (10.1000/xyz) or a URL of something no "
            "feed brought.",
        ),
    ],
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Save items for later for USER (the saved facet; not marked read).

    An item id (a whole number) is saved; an arXiv id, DOI or URL is fetched once, stored,
    embedded and saved (an item already stored is only marked saved)."""
    ids = [int(r) for r in refs if r.strip().isdigit()]
    others = [r.strip() for r in refs if not r.strip().isdigit()]
    saved = _save_references(db, user, others, as_json) if others else True
    if ids:
        run_each(db, "favorite", ids, as_json, user=user, on=True)
    if not saved:
        raise typer.Exit(1)


def _save_references(db_path, user: str, refs: list[str], as_json: bool) -> bool:
    """The ``save_item`` tool's function for a person at the terminal: trusted, so a private
    address may be fetched (an agent's call may not), and recorded with source ``ui``."""
    with database(db_path) as conn:
        results = [_save_one(conn, user, ref) for ref in refs]
    for result in results:
        if as_json:
            emit_json(result)
        elif result.get("ok"):
            typer.echo(result["message"])
            if result.get("title"):  # kept out of the tool's message (it is remote text)
                typer.echo(f"  “{clean(result['title'], 200)}”")
        else:
            typer.echo(f"error: {lower_first(result['message'])}", err=True)
    return all(r.get("ok") for r in results)


def _save_one(db, user: str, ref: str) -> dict:
    """One reference through the tool's own argument checks, then its function as trusted."""
    try:
        checked = validate("save_item", exchange.save_item.argument_model, {"user": user, "ref": ref})
        return exchange.save(db, checked["user"], checked["ref"], trusted=True)
    except HermesError as exc:
        return fail(str(exc), **exchange.SavedItem.empty())


def unsave(user: UserArg, items_: ItemsArg, db: DbOption = None, as_json: JsonOption = False):
    """Remove items from USER's saved-for-later list."""
    run_each(db, "favorite", items_, as_json, user=user, on=False)


def note(user: UserArg, item: ItemArg, text: TextArg, db: DbOption = None, as_json: JsonOption = False):
    """Write a note on ITEM for USER: the item enters the corpus as experienced."""
    r = _run(db, "add_note", as_json, user=user, item_id=item, text=text)
    if not as_json:
        typer.echo(r["message"])


def highlight(
    user: UserArg,
    item: ItemArg,
    text: TextArg,
    comment: Annotated[str | None, typer.Option("--note", metavar="TEXT", help="A comment on the passage.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
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
    # A note or a passage is text, whatever it starts with: "--- text" or "-1 is odd" are
    # not options (an option hermes does not know is left for TEXT to take).
    text_is_text = {"ignore_unknown_options": True}
    app.command("note", context_settings=text_is_text)(note)
    app.command("highlight", context_settings=text_is_text)(highlight)
