"""The corpus tools that cross hermes's boundary: ``export_corpus`` (the corpus out, as
BibTeX, RIS, CSL-JSON, Markdown or JSON lines) and ``save_item`` (an item no feed brought,
in). Same shape as :mod:`.tools`: a ``view_*`` function returning ``(message, payload)``
and a tool wrapping it in the result envelope.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hermes.config import settings
from hermes.records import require_user
from hermes.tools import caller, int_arg

from . import export
from .tools import User, _describe, _guard, _n

EMPTY = {
    "export_corpus": {"user": None, "format": None, "facet": None, "since": None, "text": "",
                      "count": 0, "deleted": 0, "revision": None, "truncated": False,
                      "has_more": False, "next_since": None},
    "save_item": {"user": None, "item_id": None, "title": None, "url": None, "arxiv_id": None,
                  "created": False, "facet": None, "changes": []},
}
MAX_CHARS = 200_000


def view_export_corpus(db, user, format="bibtex", facet="all", since=0, max_chars=50_000):
    max_chars = int_arg("max_chars", max_chars, 1000, MAX_CHARS)
    since = int_arg("since", since, 0)
    u = require_user(db, user)
    r = export.export(db, u["id"], format, facet, since, max_chars=max_chars)
    scope = "everything" if not since else f"what entered after revision {since}"
    more = (f" More follows: call again with since={r.next_since}." if r.has_more else
            f" Up to date at revision {r.revision}; pass since={r.revision} next time for only "
            "what is new.")
    gone = f" and {r.deleted} removals" if r.deleted else ""
    trimmed = (" Part of the change log after that revision was trimmed, so some removals may "
               "be missing: export again with since=0 for the full set." if r.truncated else "")
    return (f"{_n(r.count, 'item')} ({facet}){gone} of {u['name']} as {format} ({scope})."
            f"{more}{trimmed}",
            {"user": u["name"], "format": format, "facet": facet, "since": since, "text": r.text,
             "count": r.count, "deleted": r.deleted, "revision": r.revision,
             "truncated": r.truncated, "has_more": r.has_more, "next_since": r.next_since})


def export_corpus(
    db,
    user: User,
    format: Annotated[Literal["bibtex", "ris", "csl-json", "markdown", "jsonl"], Field(description=(
        "bibtex, ris or csl-json for a reference manager (Zotero, JabRef), markdown for "
        "notes, jsonl for scripts (one JSON object a line; with since > 0 it also lists "
        "removals)."))] = "bibtex",
    facet: Annotated[Literal["all", "experienced", "saved"], Field(description=(
        "'experienced' = read or highlighted/noted, 'saved' = favorited but not yet read, "
        "'all' = both."))] = "all",
    since: Annotated[int, Field(ge=0, description=(
        "Only items that entered the corpus after this revision (0 = everything). Pass the "
        "'revision' of an earlier export to get only what is new, or 'next_since' to get the "
        "next page."))] = 0,
    max_chars: Annotated[int, Field(ge=1000, le=MAX_CHARS, description=(
        "Upper bound on the text returned; whole entries only, oldest first. When more "
        "remain, has_more is true and next_since continues."))] = 50_000,
) -> dict:
    """Export a persona's corpus as text: each item's title, authors, year, URL, arXiv id,
    DOI, abstract, and the persona's highlights and notes, under a key that stays the same
    across exports."""
    return _guard("export_corpus", view_export_corpus, db, user, format, facet, since, max_chars,
                  empty=EMPTY)


def view_save_item(db, user, ref, *, trusted: bool = False):
    # The save module loads only on the first save: feedparser and the fetch layer stay out
    # of `hermes serve`'s start-up (tools/list).
    from . import save

    r = save.save(db, user, ref, allow_private=trusted or settings().allow_private,
                  source="ui" if trusted else caller())
    what = "Stored" if r["created"] else "Already stored:"
    return (f"{what} item {r['item_id']} {r['title'][:120]!r}; saved for {r['user']} "
            f"({_describe(r['changes'])}; facet {r['facet']}).",
            {k: r[k] for k in EMPTY["save_item"]})


def save_item(
    db,
    user: User,
    ref: Annotated[str, Field(min_length=1, max_length=2000, description=(
        "What to save: an arXiv id ('2401.12345', any version, or its arxiv.org URL), a DOI "
        "('10.1000/xyz' or a doi.org URL), or the http(s) URL of a web page."))],
) -> dict:
    """Save a paper or page that no feed brought: fetch its metadata once (arXiv's API, the
    DOI's citation record, or the page's title and description), store and embed it, and
    put it in the persona's saved facet. An item already stored is only marked saved."""
    return _guard("save_item", view_save_item, db, user, ref, empty=EMPTY)
