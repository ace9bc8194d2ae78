"""The corpus tools that cross hermes's boundary: ``export_corpus`` (the corpus out, as
BibTeX, RIS, CSL-JSON, Markdown or JSON lines) and ``save_item`` (an item no feed brought,
in). Defined like every tool (:func:`hermes.contract.tool`), in the corpus group.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from hermes.answers import FeedText, MaybeFeedText
from hermes.config import settings
from hermes.contract import Result, ok, tool
from hermes.facekit.faces import plural
from hermes.storage.records import require_user
from hermes.tools import User, caller

from . import export
from .tools import GROUP, _describe

MAX_CHARS = 200_000


class Export(Result):
    user: str | None = None
    format: str | None = None
    facet: str | None = None
    since: int | None = None
    text: FeedText = ""
    count: int = 0
    deleted: int = 0
    revision: int | None = None
    truncated: bool = False
    has_more: bool = False
    next_since: int | None = None


class SavedItem(Result):
    user: str | None = None
    item_id: int | None = None
    title: MaybeFeedText = None
    url: str | None = None
    arxiv_id: str | None = None
    created: bool = False
    facet: str | None = None
    changes: list[dict[str, Any]] = []


@tool(GROUP, result=Export, read_only=True, idempotent=True, untrusted=True)
def export_corpus(
    db,
    user: User,
    format: Annotated[
        Literal["bibtex", "ris", "csl-json", "markdown", "jsonl"], Field(description=("jsonl also lists removals."))
    ] = "bibtex",
    facet: Annotated[
        Literal["all", "experienced", "saved"], Field(description=("experienced: read; saved: not read."))
    ] = "all",
    since: Annotated[int, Field(ge=0, description=("An export's revision or next_since."))] = 0,
    max_chars: Annotated[int, Field(ge=1000, le=MAX_CHARS, description=("Most text (whole entries)."))] = 50_000,
) -> dict:
    """A persona's read and saved items as BibTeX, RIS, CSL-JSON, Markdown or JSON lines, with
    highlights and notes."""
    u = require_user(db, user)
    r = export.export(db, u["id"], format, facet, since, max_chars=max_chars)
    scope = "everything" if not since else f"what entered after revision {since}"
    more = (
        f" More follows: call again with since={r.next_since}."
        if r.has_more
        else f" Up to date at revision {r.revision}; pass since={r.revision} next time for only what is new."
    )
    gone = f" and {r.deleted} removals" if r.deleted else ""
    trimmed = (
        " Part of the change log after that revision was trimmed, so some removals may "
        "be missing: export again with since=0 for the full set."
        if r.truncated
        else ""
    )
    return ok(
        f"{plural(r.count, 'item')} ({facet}){gone} of {u['name']} as {format} ({scope}).{more}{trimmed}",
        user=u["name"],
        format=format,
        facet=facet,
        since=since,
        text=r.text,
        count=r.count,
        deleted=r.deleted,
        revision=r.revision,
        truncated=r.truncated,
        has_more=r.has_more,
        next_since=r.next_since,
    )


def save(db, user: str, ref: str, *, trusted: bool) -> dict:
    """Save ``ref`` for ``user`` (the envelope). ``trusted`` (a person at the CLI) may fetch
    private addresses; the tool never may unless the user allowed it in the settings."""
    # The save module loads only on the first save: feedparser and the fetch layer stay out
    # of `hermes serve`'s start-up (tools/list).
    from . import save as saving

    r = saving.save(
        db, user, ref, allow_private=trusted or settings().allow_private, source="ui" if trusted else caller()
    )
    what = "Stored" if r["created"] else "Already stored:"
    # arXiv was asked to confirm a record a feed brought, and could not be reached
    unchecked = (
        " arXiv could not be reached, so it is saved as the feed that brought it has it (not checked against arXiv)."
        if r["unconfirmed"]
        else ""
    )
    # The remote title stays out of the message (it is in `title`): it is third-party text,
    # and the message is the tool speaking.
    return ok(
        f"{what} item {r['item_id']} (its title is in 'title'); saved for {r['user']} "
        f"({_describe(r['changes'])}; facet {r['facet']}).{unchecked}",
        **{k: r[k] for k in SavedItem.empty()},
    )


@tool(GROUP, result=SavedItem, idempotent=True, open_world=True, untrusted=True)
def save_item(
    db,
    user: User,
    ref: Annotated[
        str,
        Field(
            min_length=1, max_length=2000, description=("An arXiv id ('2401.12345') or URL, a DOI or a web page's URL.")
        ),
    ],
) -> dict:
    """Bring in a paper or page no feed brought (arXiv id, DOI or URL; fetched once) to read
    later. An archive item: favorite."""
    return save(db, user, ref, trusted=False)
