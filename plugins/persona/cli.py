"""``hermes persona …``: the persona tools for a person at a terminal.

Each command calls the same function as the MCP tool (:func:`hermes.facekit.terminal.run_tool`:
worded for the CLI, clicks recorded with source ``ui``) and prints its result; a refusal is
one ``error:`` line on stderr and exit status 1 (with ``--json`` the result document is
still printed on stdout). Limits are the tools' own, declared on the options.
"""

from __future__ import annotations

import shlex
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from hermes.facekit.faces import plural, typed
from hermes.facekit.terminal import (
    DbOption,
    JsonOption,
    check,
    clean,
    database,
    die,
    keeping_db,
    run_tool,
    tool_number,
)
from hermes.text.clip import clip

from . import library
from .personas import INTERESTS_MAX

#: keyphrase topics are listed in `persona show`, but the ranking does not count them
UNCOUNTED_TOPICS = "keyphrases: listed, not counted in the ranking"

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="Persona name.")]
InterestsOption = Annotated[
    str,
    typer.Option(
        "--interests",
        metavar="TEXT",
        help=f"What this persona wants to read, in plain words (at most {INTERESTS_MAX:,} characters).",
    ),
]
YesOption = Annotated[bool, typer.Option("--yes", help="Really delete (without it nothing changes).")]


def _run(db_path, tool: str, as_json: bool, *, create: bool = False, **arguments) -> dict:
    with database(db_path, create=create) as db:
        return check(run_tool(db, tool, **arguments), as_json)


def create(name: NameArg, interests: InterestsOption, db: DbOption = None, as_json: JsonOption = False):
    """Create a persona NAME with its interests text (starts a new database if needed)."""
    result = _run(db, "create_persona", as_json, create=True, name=name, interests=interests)
    if not as_json:
        typer.echo(result["message"])


def list_(db: DbOption = None, as_json: JsonOption = False):
    """List the personas."""
    result = _run(db, "list_users", as_json)
    if as_json:
        return
    typer.echo(result["message"])
    for u in result["users"]:
        interests = clip(u["interests"], 70)
        typer.echo(f"  {u['name']}  ({plural(u['likes'], 'like')}, {plural(u['dislikes'], 'dislike')})  {interests}")


def show(name: NameArg, db: DbOption = None, as_json: JsonOption = False):
    """What persona NAME has taught the ranking."""
    s = _run(db, "profile_status", as_json, user=name)
    if as_json:
        return
    src = ", ".join(f"{k} {v}" for k, v in s["clicks_by_source"].items())
    typer.echo(f"{s['user']}: {s['interests']}")
    typer.echo(
        f"  clicks: {s['clicks']} ({plural(s['likes'], 'like')}, {plural(s['dislikes'], 'dislike')}"
        + (f"; {src})" if src else ")")
    )
    typer.echo(f"  blend: {s['blend']}")
    for label, key in (
        ("liked tags", "liked_tags"),
        ("disliked tags", "disliked_tags"),
        (f"liked topics ({UNCOUNTED_TOPICS})", "liked_topics"),
        (f"disliked topics ({UNCOUNTED_TOPICS})", "disliked_topics"),
        ("liked types", "liked_types"),
        ("disliked types", "disliked_types"),
        ("liked sources", "liked_sources"),
        ("disliked sources", "disliked_sources"),
    ):
        if s[key]:
            typer.echo(f"  {label}: " + ", ".join(f"{clean(e['key'], 40)} ({e['score']:+.2f})" for e in s[key]))
    state = "" if s["classifier_active"] else "inactive: "
    typer.echo(f"  classifier: {state}{s['classifier_reason']}")
    odd = s.get("disliked_but_asked_for") or []
    if odd:
        typer.echo(
            "  disliked, but the interests ask for them: "
            + ", ".join(
                f"{clean(e['key'], 40)} ({e['kind']}, {plural(e['dislikes'], 'dislike')}"
                + (f", {plural(e['likes'], 'like')})" if e["likes"] else ")")
                for e in odd
            )
            + f" — the clicks weigh {round(100 * s['blend_weight'])}% and pull against "
            "the text; if those dislikes were not meant, `hermes unrate "
            f"{shlex.quote(s['user'])} ITEM_ID` takes one back"
        )


def update(name: NameArg, interests: InterestsOption, db: DbOption = None, as_json: JsonOption = False):
    """Replace the interests text of persona NAME."""
    result = _run(db, "update_persona", as_json, name=name, interests=interests)
    if not as_json:
        typer.echo(result["message"])


def rename(
    name: NameArg,
    new_name: Annotated[str, typer.Argument(metavar="NEW", help="The new name.")],
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Rename persona NAME to NEW, keeping its clicks, interests and corpus."""
    result = _run(db, "rename_persona", as_json, name=name, new_name=new_name)
    if not as_json:
        typer.echo(result["message"])


def delete(name: NameArg, yes: YesOption = False, db: DbOption = None, as_json: JsonOption = False):
    """Delete persona NAME with its clicks and every other per-persona row (needs --yes)."""
    result = _run(db, "delete_persona", as_json, name=name, confirm=yes)
    if not as_json:
        typer.echo(result["message"])


def reset(
    name: NameArg,
    yes: YesOption = False,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            metavar="SOURCE",
            help="Only the clicks of this source: bootstrap (library imports, persona bootstrap), ui or agent.",
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Delete every click of persona NAME (--source: only that source's), keeping the persona (needs --yes)."""
    extra = {"source": source} if source is not None else {}
    result = _run(db, "reset_feedback", as_json, name=name, confirm=yes, **extra)
    if not as_json:
        typer.echo(result["message"])


def bootstrap(
    name: NameArg,
    likes: Annotated[int, typer.Option("--likes", parser=tool_number, help="How many closest items to like.")] = 5,
    dislikes: Annotated[
        int, typer.Option("--dislikes", parser=tool_number, help="How many farthest items to dislike.")
    ] = 5,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Warm a new persona from its interests: like the closest items, dislike the farthest."""
    result = _run(db, "bootstrap_persona", as_json, name=name, n_like=likes, n_dislike=dislikes)
    if as_json:
        return
    typer.echo(
        result["message"]
        if result.get("already_warmed")
        # the commands it names keep the --db given
        else keeping_db(bootstrap_answer(name, result, likes=likes, dislikes=dislikes), db)
    )


def bootstrap_answer(name: str, result: dict, *, likes: int, dislikes: int) -> str:
    """What bootstrap did, for a person: the items liked and disliked as a list, then a
    short line each on where they went, the effect and the undo (the tool's message is one
    paragraph, for an agent)."""
    who = typed(name)
    lines = [f"Warmed {name!r} from its interests (click source 'bootstrap'):"]
    for mark, key, asked, what, fewer in (
        ("+", "liked", likes, "closest to them", "only strong or good matches are liked"),
        ("-", "disliked", dislikes, "farthest", "only items with no match are disliked"),
    ):
        items = result[key]
        if not asked:
            continue
        short = f" ({len(items)} of {asked}: {fewer})" if len(items) < asked else ""
        lines.append(f"{key.capitalize()}, the {plural(len(items), 'item')} {what}{short}:")
        lines += [f"  {mark} [{item['id']}] {clean(item['title'], 100)}" for item in items]
    lines += [
        f"Rated items leave `hermes feed {who}`; `hermes persona search {who} WORDS` still "
        "finds them, marked [liked]/[disliked].",
        "A dislike also counts against the item's source and tags.",
        f"`hermes persona show {who}` shows the effect.",
        f"`hermes persona reset {who} --source bootstrap --yes` takes every bootstrap click back, "
        f"`hermes unrate {who} ITEM` one.",
    ]
    return "\n".join(lines)


def search(
    name: NameArg,
    query: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="WORDS",
            help="Words that must all occur in the title or summary, each as written or inflected "
            "(witness: witnesses); one of 7 letters or more also finds the longer words it begins "
            "(superconduct: superconductor), and so does one ending in * ('graph*', quoted in a shell).",
        ),
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Only items with this tag.")] = None,
    content_type: Annotated[str | None, typer.Option("--type", help="Only items of this content type.")] = None,
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many results.")] = 10,
    author: Annotated[
        str | None, typer.Option(help="Only items by this person: 'Furtak' (any Furtak) or 'L. Furtak'.")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Search the whole archive for persona NAME, in its ranking order."""
    result = _run(
        db,
        "search_feed",
        as_json,
        user=name,
        query=" ".join(query or []),
        tag=tag,
        content_type=content_type,
        limit=limit,
        author=author,
    )
    if as_json:
        return
    typer.echo(result["message"])
    for r in result["results"]:
        rated = f"  [{r['rated']}d]" if r["rated"] else ""
        typer.echo(f"{r['rank']:>3}. [{r['id']}] {clean(r['title'], 100)}  ({r['match']} match){rated}")
        if author and r.get("authors"):
            typer.echo(f"       by {clean(_byline(r['authors']), 100)}")


def _byline(names: list[str], most: int = 4) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def tags(
    limit: Annotated[int, typer.Option(parser=tool_number, help="How many tags.")] = 12,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """The most common tags of the archive: words to build an interests text from."""
    result = _run(db, "propose_interests", as_json, limit=limit)
    if as_json:
        return
    typer.echo(result["message"])
    for t in result["tags"]:
        typer.echo(f"  {clean(t['tag'], 60)} ({t['count']})")


def import_(
    name: NameArg,
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="A BibTeX (.bib), RIS (.ris) or "
            "CSL-JSON (.json) file, as Zotero, JabRef, Mendeley or "
            "`hermes corpus export` write it.",
        ),
    ],
    format: Annotated[
        str, typer.Option("--format", help="auto, bibtex, ris or csl-json (auto tells them apart by their content).")
    ] = "auto",
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Teach persona NAME from a library of papers: every entry becomes a like.

    Entries are found in the archive by arXiv id, DOI, URL or title; the others are stored
    as items of their own from the file (nothing is fetched). Importing the same file again
    adds nothing; a malformed entry is named by its line and the others are imported."""
    text = _library_text(file)
    with database(db) as conn, _import_progress(sys.stdout.isatty() and not as_json):
        result = check(run_tool(conn, "import_library", name=name, text=text, format=format), as_json)
    if as_json:
        return
    typer.echo(result["message"])
    for r in result["refused"]:
        typer.echo(f"  refused, line {r['line']}: {r['reason']}")
    for u in result["unmatched"]:
        typer.echo(f"  new item, line {u['line']}: {clean(u['title'], 80)}")
    if result["n_unmatched"] > len(result["unmatched"]):
        typer.echo(f"  … and {result['n_unmatched'] - len(result['unmatched'])} more new items")


def _library_text(file: Path) -> str:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        die(f"cannot read {file}: {exc.strerror or exc}")
    if len(raw) > 4 * library.IMPORT_MAX_CHARS:
        die(
            f"{file} is {len(raw):,} bytes, more than one import takes; export the library in "
            "parts (by collection or year)"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Older JabRef and BibTeX files are often Latin-1; every byte reads as something.
        return raw.decode("latin-1")


@contextmanager
def _import_progress(enabled: bool):
    """A progress bar fed by the import (:data:`library.PROGRESS`), on a terminal only."""
    if not enabled:
        yield
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("Importing the library (the model loads first)", total=None)
        token = library.PROGRESS.set(lambda done, total: bar.update(task, completed=done, total=total))
        try:
            yield
        finally:
            library.PROGRESS.reset(token)


def persona_app() -> typer.Typer:
    app = typer.Typer(
        help="Personas: create, list, show, update, rename, delete, reset, bootstrap, import, search, tags.",
        no_args_is_help=True,
    )
    app.command()(create)
    app.command("list")(list_)
    app.command()(show)
    app.command()(update)
    app.command()(rename)
    app.command()(delete)
    app.command()(reset)
    app.command()(bootstrap)
    app.command("import")(import_)
    app.command()(search)
    app.command()(tags)
    return app


def register(app: typer.Typer) -> None:
    """Add ``hermes persona …`` to ``app``."""
    app.add_typer(persona_app(), name="persona")
