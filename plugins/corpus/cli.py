"""``hermes corpus …``: a persona's corpus at the terminal (read views, reconcile, export,
vault sync), and ``hermes save`` for items no feed brought."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from hermes.arguments import validate
from hermes.cli.support import DbOption, JsonOption, check, emit_json, open_db, run_guarded
from hermes.errors import HermesError
from hermes.records import require_user

from . import exchange, membership
from . import export as exporting
from . import sync as vault
from . import tools as t


def _run(db_path, fn, as_json: bool, *args) -> dict:
    db = run_guarded(open_db, db_path)
    try:
        return check(fn(db, *args), as_json)
    finally:
        db.conn.close()


def show(user: str, db: DbOption = None, as_json: JsonOption = False):
    """Summary of USER's corpus: revision, experienced and saved counts, top topics."""
    r = _run(db, t.corpus, as_json, user)
    if as_json:
        return
    typer.echo(r["message"])
    for e in r["top_entities"]:
        typer.echo(f"  {e['entity']} ({e['kind']}, {e['item_count']} items)")


def items(
    user: str,
    facet: Annotated[str, typer.Option(help="experienced (read or captured) or saved (favorited, unread).")] = "experienced",
    limit: Annotated[int, typer.Option(min=1, max=500)] = 50,
    db: DbOption = None, as_json: JsonOption = False,
):
    """List the items of one facet of USER's corpus, newest first."""
    r = _run(db, t.corpus_items, as_json, user, facet, limit)
    if as_json:
        return
    typer.echo(r["message"])
    for i in r["items"]:
        typer.echo(f"  #{i['item_id']}  {i['title']}")


def ranked(user: str, limit: Annotated[int, typer.Option(min=1, max=200)] = 10,
           db: DbOption = None, as_json: JsonOption = False):
    """USER's experienced items by strength."""
    r = _run(db, t.corpus_ranked, as_json, user, limit)
    if as_json:
        return
    for i in r["items"]:
        typer.echo(f"  {i['strength']:.2f}  #{i['item_id']}  {i['title']}")


def changes(user: str, since: Annotated[int, typer.Option(help="Revision to start after (0 = all).")] = 0,
            limit: Annotated[int, typer.Option(min=1, max=1000)] = 200,
            db: DbOption = None, as_json: JsonOption = False):
    """Membership changes of USER's corpus after revision --since."""
    r = _run(db, t.corpus_changes, as_json, user, since, limit)
    if as_json:
        return
    typer.echo(r["message"])
    for c in r["changes"]:
        typer.echo(f"  r{c['revision']}  {c['kind']:<7}  {c['facet']:<11}  #{c['item_id']}")


def recall(user: str, query: str, limit: Annotated[int, typer.Option(min=1, max=50)] = 10,
           db: DbOption = None, as_json: JsonOption = False):
    """Search what USER read or captured for QUERY."""
    r = _run(db, t.recall, as_json, user, query, limit)
    if as_json:
        return
    typer.echo(r["message"])
    for i in r["items"]:
        typer.echo(f"  #{i['item_id']}  {i['title']}  ({', '.join(i['matched_in'])})")


def reconcile(user: str, db: DbOption = None, as_json: JsonOption = False):
    """Recompute USER's membership from the raw signals (after changing heard_threshold in
    config.toml), logging each difference as a revision."""
    database = run_guarded(open_db, db)
    try:
        try:
            u = require_user(database, user)
            found = membership.reconcile(database, u["id"])
        except HermesError as exc:
            check({"ok": False, "message": str(exc), "changes": []}, as_json)
            return
        revision, _ = membership.revision_state(database, u["id"])
    finally:
        database.conn.close()
    message = f"{len(found)} membership changes for {u['name']}; revision {revision}"
    if as_json:
        emit_json({"ok": True, "message": message, "changes": found, "revision": revision})
    else:
        typer.echo(message)


FacetOption = Annotated[str, typer.Option(
    help="experienced (read or captured), saved (favorited, unread) or all.")]


def export(
    user: str,
    format: Annotated[str, typer.Option(
        "--format", "-f", help="bibtex, ris, csl-json (reference managers), markdown or jsonl.")] = "bibtex",
    facet: FacetOption = "all",
    since: Annotated[int, typer.Option(
        min=0, help="Only items that entered the corpus after this revision (0 = all); "
                    "use the revision the previous export printed.")] = 0,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Write to this file instead of stdout.", dir_okay=False)] = None,
    db: DbOption = None, as_json: JsonOption = False,
):
    """Export USER's corpus for Zotero and other reference managers (BibTeX, RIS, CSL-JSON),
    as Markdown, or as JSON lines."""
    database = run_guarded(open_db, db)
    try:
        u = run_guarded(require_user, database, user)
        r = run_guarded(exporting.export, database, u["id"], format, facet, since)
    finally:
        database.conn.close()
    where = str(out) if out else "stdout"
    message = (t._n(r.count, "item") + (f" and {t._n(r.deleted, 'removal')}" if r.deleted else "")
               + f" of {u['name']} exported as {format} to {where} (revision {r.revision}; "
               f"next time --since {r.revision} exports only what is new).")
    if r.truncated:
        message += (f" The change log was trimmed past revision {since}: some removals may be "
                    "missing; export with --since 0 for the full set.")
    if out:
        run_guarded(_write_file, out, r.text)
    if as_json:
        emit_json({"ok": True, "message": message, "format": format, "facet": facet,
                   "since": since, "count": r.count, "deleted": r.deleted, "revision": r.revision,
                   "truncated": r.truncated, "out": str(out) if out else None,
                   **({} if out else {"text": r.text})})
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


def sync(
    user: str,
    folder: Annotated[Path, typer.Argument(help="The folder to keep in step (an Obsidian vault or a folder in it).",
                                           file_okay=False)],
    facet: FacetOption = "all",
    rebuild: Annotated[bool, typer.Option(
        "--rebuild", help="Rewrite every note (your text below the marker line is kept).")] = False,
    db: DbOption = None, as_json: JsonOption = False,
):
    """Keep one Markdown note per corpus item of USER in FOLDER: only what changed since the
    last sync is written; what you write below a note's marker line is never touched."""
    database = run_guarded(open_db, db)
    try:
        u = run_guarded(require_user, database, user)
        r = run_guarded(vault.sync, database, u, folder, facet, rebuild=rebuild)
    finally:
        database.conn.close()
    message = (f"{folder}: {t._n(len(r.written), 'note')} written, {len(r.removed)} removed "
               f"(revision {r.revision}; {r.reason}).")
    if r.kept:
        message += (f" Kept {t._n(len(r.kept), 'note')} of items that left the corpus, because "
                    "you wrote in them.")
    if r.conflicts:
        message += (f" Left {t._n(len(r.conflicts), 'note')} untouched because the marker line "
                    "is gone: put it back, or delete the note to get a fresh one.")
    if as_json:
        emit_json({"ok": True, "message": message, **r.as_dict()})
        return
    typer.echo(message)
    for name in r.conflicts:
        typer.echo(f"  untouched: {name}")


def save_command(user: str,
         ref: Annotated[str, typer.Argument(help="An arXiv id (2401.12345), a DOI (10.1000/xyz) or a URL.")],
         db: DbOption = None, as_json: JsonOption = False):
    """Save a paper or page no feed brought for USER: fetch its metadata once, store and
    embed it, and put it in USER's saved facet (an item already stored is only marked saved)."""
    database = run_guarded(open_db, db)
    try:
        # A person at the CLI is trusted to save from a private address; still through the
        # tool's argument checks.
        checked = run_guarded(validate, "save_item", exchange.save_item.argument_model,
                              {"user": user, "ref": ref})
        r = run_guarded(exchange.save, database, checked["user"], checked["ref"], trusted=True)
    finally:
        database.conn.close()
    check(r, as_json)
    if not as_json:
        typer.echo(r["message"])


def corpus_app() -> typer.Typer:
    app = typer.Typer(help="A persona's corpus: what it read or captured, and what it saved.",
                      no_args_is_help=True)
    app.command()(show)
    app.command()(items)
    app.command()(ranked)
    app.command()(changes)
    app.command()(recall)
    app.command()(reconcile)
    app.command()(export)
    app.command()(sync)
    return app
