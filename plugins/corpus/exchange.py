"""The corpus tools that cross hermes's boundary: ``export_corpus`` (the corpus out, as
BibTeX, RIS, CSL-JSON, Markdown or JSON lines) and ``save_item`` (an item no feed brought,
in). Defined like every tool (:func:`hermes.contract.tool`), in the corpus group.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from hermes.config import settings
from hermes.contract import Result, ok, tool
from hermes.records import require_user
from hermes.tools import User, caller

from . import export
from .tools import GROUP, _describe, _n

MAX_CHARS = 200_000


class Export(Result):
    user: str | None = None
    format: str | None = None
    facet: str | None = None
    since: int | None = None
    text: str = ""
    count: int = 0
    deleted: int = 0
    revision: int | None = None
    truncated: bool = False
    has_more: bool = False
    next_since: int | None = None


class SavedItem(Result):
    user: str | None = None
    item_id: int | None = None
    title: str | None = None
    url: str | None = None
    arxiv_id: str | None = None
    created: bool = False
    facet: str | None = None
    changes: list[dict[str, Any]] = []


@tool(GROUP, result=Export, read_only=True, idempotent=True, untrusted=True)
def export_corpus(
    db,
    user: User,
    format: Annotated[Literal["bibtex", "ris", "csl-json", "markdown", "jsonl"], Field(description=(
        "bibtex, ris or csl-json for a reference manager (Zotero, JabRef), markdown for "
        "notes, jsonl for scripts (one JSON object a line; with since > 0 it also lists "
        "removals)."))] = "bibtex",
    facet: Annotated[Literal["all", "experienced", "saved"], Field(description=(
        "'experienced' = read or highlighted/noted, 'saved' = favorited, not yet read, "
        "'all' = both."))] = "all",
    since: Annotated[int, Field(ge=0, description=(
        "Only items that entered after this revision (0 = everything): an earlier export's "
        "'revision' for what is new, or 'next_since' for the next page."))] = 0,
    max_chars: Annotated[int, Field(ge=1000, le=MAX_CHARS, description=(
        "Upper bound on the text returned; whole entries only, oldest first."))] = 50_000,
) -> dict:
    """Export a persona's corpus for a reference manager (BibTeX, RIS, CSL-JSON), notes
    (Markdown) or scripts (JSON lines): title, authors, year, URL, arXiv id, DOI, abstract,
    and the persona's highlights and notes, under keys stable across exports. has_more /
    next_since page through the rest."""
    u = require_user(db, user)
    r = export.export(db, u["id"], format, facet, since, max_chars=max_chars)
    scope = "everything" if not since else f"what entered after revision {since}"
    more = (f" More follows: call again with since={r.next_since}." if r.has_more else
            f" Up to date at revision {r.revision}; pass since={r.revision} next time for only "
            "what is new.")
    gone = f" and {r.deleted} removals" if r.deleted else ""
    trimmed = (" Part of the change log after that revision was trimmed, so some removals may "
               "be missing: export again with since=0 for the full set." if r.truncated else "")
    return ok(f"{_n(r.count, 'item')} ({facet}){gone} of {u['name']} as {format} ({scope})."
              f"{more}{trimmed}",
              user=u["name"], format=format, facet=facet, since=since, text=r.text, count=r.count,
              deleted=r.deleted, revision=r.revision, truncated=r.truncated, has_more=r.has_more,
              next_since=r.next_since)


def save(db, user: str, ref: str, *, trusted: bool) -> dict:
    """Save ``ref`` for ``user`` (the envelope). ``trusted`` (a person at the CLI) may fetch
    private addresses; the tool never may unless the user allowed it in the settings."""
    # The save module loads only on the first save: feedparser and the fetch layer stay out
    # of `hermes serve`'s start-up (tools/list).
    from . import save as saving

    r = saving.save(db, user, ref, allow_private=trusted or settings().allow_private,
                    source="ui" if trusted else caller())
    what = "Stored" if r["created"] else "Already stored:"
    # The remote title stays out of the message (it is in `title`): it is third-party text,
    # and the message is the tool speaking.
    return ok(f"{what} item {r['item_id']} (its title is in 'title'); saved for {r['user']} "
              f"({_describe(r['changes'])}; facet {r['facet']}).",
              **{k: r[k] for k in SavedItem.empty()})


@tool(GROUP, result=SavedItem, idempotent=True, open_world=True, untrusted=True)
def save_item(
    db,
    user: User,
    ref: Annotated[str, Field(min_length=1, max_length=2000, description=(
        "An arXiv id ('2401.12345', any version, or its arxiv.org URL), a DOI ('10.1000/xyz' "
        "or a doi.org URL), or the http(s) URL of a web page."))],
) -> dict:
    """Save a paper or page that no feed brought: fetch its metadata once (arXiv's API, the
    DOI's citation record, or the page's title and description), store and embed it, and
    put it in the persona's saved facet. An item already stored is only marked saved. Only
    public addresses are fetched."""
    return save(db, user, ref, trusted=False)
