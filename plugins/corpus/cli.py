"""``hermes corpus …``: a persona's corpus at the terminal (read views + reconcile)."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes.cli.support import DbOption, JsonOption, check, emit_json, open_db, run_guarded
from hermes.errors import HermesError
from hermes.records import require_user

from . import membership
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
