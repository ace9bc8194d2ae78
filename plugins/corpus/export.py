"""Corpus exports: the one entry point (:func:`export`) and the formats it writes — BibTeX
(:mod:`.bibtex`), RIS (:mod:`.ris`), CSL-JSON (:mod:`.csl_json`), Markdown (:mod:`.markdown`)
and JSON lines (:mod:`.jsonl`).

Every format takes the records of :mod:`.references` (oldest membership first) and returns
text; no format reads the database. No timestamp of the export itself is written, so the
same corpus exports to the same bytes (diffable, and a re-import finds nothing new). Keys
are the person's library's where an import named the item (their LaTeX cites them), else
:func:`.references.citation_key`; stable across runs either way, so a reference manager
that matches on them updates an entry rather than duplicating it.

Titles and abstracts carry arXiv's LaTeX. BibTeX keeps it for LaTeX to typeset; JSON lines
keep the stored text (exact, for tools); RIS, CSL-JSON and Markdown get what hermes shows
people (``readable``): they would print "\\emph{In vivo}" as a macro.

:func:`export` is the one entry point the CLI, the MCP tool and the web download share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlite_utils

from hermes.errors import InvalidInput

from . import references
from .bibtex import bibtex
from .csl_json import csl_json
from .jsonl import jsonl
from .markdown import markdown
from .membership import _read_snapshot
from .ris import ris


@dataclass(frozen=True)
class Format:
    name: str
    render: object
    extension: str
    media_type: str


FORMATS = {
    f.name: f
    for f in (
        Format("bibtex", bibtex, "bib", "application/x-bibtex"),
        Format("ris", ris, "ris", "application/x-research-info-systems"),
        Format("csl-json", csl_json, "json", "application/vnd.citationstyles.csl+json"),
        Format("markdown", markdown, "md", "text/markdown"),
        Format("jsonl", jsonl, "jsonl", "application/jsonl"),
    )
}


def check_format(name) -> Format:
    if name not in FORMATS:
        raise InvalidInput(f"unknown format {name!r}; use one of {', '.join(FORMATS)}")
    return FORMATS[name]


@dataclass
class Export:
    text: str
    count: int  # items written
    deleted: int  # tombstones written (jsonl only)
    revision: int  # the corpus revision the export reflects
    since: int
    truncated: bool  # removals after ``since`` may be missing: the log was trimmed
    has_more: bool = False
    next_since: int | None = None
    keys: list[str] = field(default_factory=list)


def export(
    db: sqlite_utils.Database, user_id: int, fmt: str, facet: str = "all", since: int = 0, max_chars: int | None = None
) -> Export:
    """Export the items that entered ``facet`` after revision ``since`` (0 = all of them).

    ``max_chars`` bounds the text (the MCP tool): whole entries are taken, oldest first,
    until the next would pass the bound (at least one is always taken); ``has_more`` and
    ``next_since`` then say where the next page starts. Paging by revision rather than by
    offset keeps pages consistent while the corpus changes between calls.
    """
    form = check_format(fmt)
    facets = references.facets_of(facet)
    with _read_snapshot(db):  # records, tombstones and revision from one snapshot
        revision, truncated = references.check_since(db, user_id, since)
        records = references.load(db, user_id, facets, since=since)
        gone = references.tombstones(db, user_id, facets, since) if since and fmt == "jsonl" else []
    has_more = False
    if max_chars is not None:
        events = sorted(
            [(r["revision"], "r", r) for r in records] + [(t["revision"], "t", t) for t in gone], key=lambda e: e[0]
        )
        taken, size = 0, 0
        for _, kind, ev in events:
            piece = len(form.render([ev] if kind == "r" else [], [ev] if kind == "t" else []))
            if taken and size + piece > max_chars:
                break
            taken, size = taken + 1, size + piece
        has_more = taken < len(events)
        if has_more:
            last = events[taken - 1][0]
            records = [r for r in records if r["revision"] <= last]
            gone = [t for t in gone if t["revision"] <= last]
            next_since = last
    text = form.render(records, gone)
    return Export(
        text=text,
        count=len(records),
        deleted=len(gone),
        revision=revision,
        since=since,
        truncated=truncated,
        has_more=has_more,
        next_since=next_since if has_more else revision,
        keys=[r["key"] for r in records],
    )
