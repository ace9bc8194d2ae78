"""``hermes persona …``: the persona tools for a person at a terminal.

Each command calls the same function as the MCP tool and prints its result; a refusal is
one ``error:`` line on stderr and exit status 1 (with ``--json`` the result document is
still printed on stdout).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hermes.cli.support import DbOption, JsonOption, check, open_db, run_guarded
from hermes.text import clip

from . import tools as t

InterestsOption = Annotated[str, typer.Option("--interests", help="What this persona wants to read, in plain words.")]
YesOption = Annotated[bool, typer.Option("--yes", help="Really delete (without it nothing changes).")]


def _run(db_path, fn, as_json: bool, *args) -> dict:
    db = run_guarded(open_db, db_path)
    try:
        return check(fn(db, *args), as_json)
    finally:
        db.conn.close()


def create(name: str, interests: InterestsOption, db: DbOption = None, as_json: JsonOption = False):
    """Create a persona NAME with its interests text."""
    result = _run(db, t.create_persona, as_json, name, interests)
    if not as_json:
        created = result["persona"]["name"]
        typer.echo(f"created persona {created!r}; warm it up with: hermes persona bootstrap {created!r}")


def list_(db: DbOption = None, as_json: JsonOption = False):
    """List the personas."""
    result = _run(db, t.list_users, as_json)
    if as_json:
        return
    if not result["users"]:
        typer.echo(result["message"])
    for u in result["users"]:
        interests = clip(u["interests"], 70)
        typer.echo(f"{u['name']}  ({u['likes']} likes, {u['dislikes']} dislikes)  {interests}")


def show(name: str, db: DbOption = None, as_json: JsonOption = False):
    """What persona NAME has taught the ranking (profile_status)."""
    s = _run(db, t.profile_status, as_json, name)
    if as_json:
        return
    src = ", ".join(f"{k} {v}" for k, v in s["clicks_by_source"].items())
    typer.echo(f"{s['user']}: {s['interests']}")
    typer.echo(f"  clicks: {s['clicks']} ({s['likes']} likes, {s['dislikes']} dislikes; {src})")
    typer.echo(f"  blend: {s['blend']}")
    for label, key in (("liked tags", "liked_tags"), ("disliked tags", "disliked_tags"),
                       ("liked types", "liked_types"), ("disliked types", "disliked_types"),
                       ("liked sources", "liked_sources"), ("disliked sources", "disliked_sources")):
        if s[key]:
            typer.echo(f"  {label}: " + ", ".join(f"{e['key']} ({e['score']:+.2f})" for e in s[key]))
    state = "" if s["classifier_active"] else "inactive: "
    typer.echo(f"  classifier: {state}{s['classifier_reason']}")


def update(name: str, interests: InterestsOption, db: DbOption = None, as_json: JsonOption = False):
    """Replace the interests text of persona NAME."""
    result = _run(db, t.update_persona, as_json, name, interests)
    if not as_json:
        typer.echo(result["message"].replace(" (previous_interests holds the old text)", ""))


def _destroy(db_path, name: str, yes: bool, as_json: bool, *, persona: bool):
    db = run_guarded(open_db, db_path)
    try:
        result = t.destroy(db, name, yes, persona=persona, source="ui",
                           how_to_confirm="Pass --yes to do it.")
        check(result, as_json)
    finally:
        db.conn.close()
    if not as_json:
        typer.echo(result["message"])


def delete(name: str, yes: YesOption = False, db: DbOption = None, as_json: JsonOption = False):
    """Delete persona NAME with its clicks and every other per-persona row (needs --yes)."""
    _destroy(db, name, yes, as_json, persona=True)


def reset(name: str, yes: YesOption = False, db: DbOption = None, as_json: JsonOption = False):
    """Delete every click of persona NAME, keeping the persona (needs --yes)."""
    _destroy(db, name, yes, as_json, persona=False)


def bootstrap(
    name: str,
    likes: Annotated[int, typer.Option("--likes", help="How many closest items to like.")] = 5,
    dislikes: Annotated[int, typer.Option("--dislikes", help="How many farthest items to dislike.")] = 5,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Warm a new persona from its interests: like the closest items, dislike the farthest."""
    result = _run(db, t.bootstrap_persona, as_json, name, likes, dislikes)
    if as_json:
        return
    typer.echo(result["message"])
    for mark, key in (("+", "liked"), ("-", "disliked")):
        for item in result[key]:
            typer.echo(f"  {mark} [{item['id']}] {item['title']}")


def search(
    name: str,
    query: Annotated[str, typer.Argument(help="Words that must all occur in the title or summary.")] = "",
    tag: Annotated[Optional[str], typer.Option(help="Only items with this tag.")] = None,
    content_type: Annotated[Optional[str], typer.Option("--type", help="Only items of this content type.")] = None,
    limit: Annotated[int, typer.Option(help="How many results (1-50).")] = 10,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Search the whole archive for persona NAME, in its ranking order."""
    result = _run(db, t.search_feed, as_json, name, query, tag, content_type, limit)
    if as_json:
        return
    typer.echo(result["message"])
    for r in result["results"]:
        rated = f"  [{r['rated']}d]" if r["rated"] else ""
        typer.echo(f"{r['rank']:>3}. [{r['id']}] {r['title']}{rated}")


def persona_app() -> typer.Typer:
    app = typer.Typer(help="Personas: create, list, show, update, delete, reset, bootstrap, search.",
                      no_args_is_help=True)
    app.command()(create)
    app.command("list")(list_)
    app.command()(show)
    app.command()(update)
    app.command()(delete)
    app.command()(reset)
    app.command()(bootstrap)
    app.command()(search)
    return app
