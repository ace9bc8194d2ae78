"""Corpus exports: BibTeX, RIS, CSL-JSON, Markdown and JSON lines from reference records.

Every format takes the records of :mod:`.references` (oldest membership first) and returns
text; nothing here reads the database. No timestamp of the export itself is written, so the
same corpus exports to the same bytes (diffable, and a re-import finds nothing new). Keys
are :func:`.references.citation_key`: stable across runs, so a reference manager that
matches on them updates an entry rather than duplicating it.

:func:`export` is the one entry point the CLI, the MCP tool and the web download share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import sqlite_utils

from hermes.errors import InvalidInput
from hermes.text.latex import readable

from . import references
from .bibtex import MATH, _bib_name, bib_escape, bib_tex, bibtex  # noqa: F401 (the BibTeX format)
from .fields import _date, _media_url, duration_text, media, note_text
from .membership import _read_snapshot
from .references import inverted, person
from .untrusted import md_code, md_text, md_url

# --- the plain-text formats ---------------------------------------------------------------

# Titles and abstracts carry arXiv's LaTeX. BibTeX keeps it for LaTeX to typeset (:func:`bib_tex`);
# JSON lines keep the stored text (exact, for tools). RIS (Zotero, EndNote and Mendeley store
# it as typed), CSL-JSON (citeproc prints a title as text; its only markup is HTML-like
# tags) and Markdown (read by people) would print "\emph{In vivo}" and "$\mathcal{O}(n^2)$"
# as macros, so they get what hermes shows people: readable(...), "In vivo", "𝒪(n²)".


# --- RIS -----------------------------------------------------------------------------------

_RIS_TYPES = {"paper": "JOUR", "article": "ELEC", "podcast": "SOUND", "video": "VIDEO"}


def _ris_line(tag: str, value: str) -> str:
    # RIS is line based: a newline inside a value would start a bogus tag.
    return f"{tag}  - {' '.join(str(value).split())}"


#: an arXiv paper's type: Zotero's RIS import has no preprint type (nor UNPB, which it read
#: as a journal article without a journal); a manuscript of type "Preprint" is the nearest,
#: and EndNote and Mendeley read MANSCPT as a manuscript too
RIS_PREPRINT = "MANSCPT"


def _ris_entry(r: dict) -> str:
    kind = RIS_PREPRINT if r["arxiv"] else _RIS_TYPES.get(r["content_type"], "GEN")
    lines = [_ris_line("TY", kind), _ris_line("ID", r["key"]), _ris_line("TI", readable(r["title"]))]
    if r["arxiv"]:
        lines.append(_ris_line("M3", "Preprint"))  # Zotero: the manuscript's type
    lines += [_ris_line("AU", inverted(a, r["source"])) for a in r["authors"]]
    if r["source"]:
        # T2, the secondary title: the journal of a JOUR, the blog of an ELEC, the show of
        # a SOUND (what Zotero's RIS writes for a publication, blog or series title).
        lines.append(_ris_line("T2", r["source"]))
    if r["year"]:
        lines.append(_ris_line("PY", r["year"]))
    if _date(r):
        lines.append(_ris_line("DA", _date(r).replace("-", "/")))
    if r["url"]:
        lines.append(_ris_line("UR", r["url"]))
    if _media_url(r):
        lines.append(_ris_line("UR", _media_url(r)))
    if r["doi"]:
        lines.append(_ris_line("DO", r["doi"]))
    if r["arxiv"]:
        lines += [_ris_line("DB", "arXiv"), _ris_line("AN", f"arXiv:{r['arxiv']}")]
    if r["abstract"]:
        lines.append(_ris_line("AB", readable(r["abstract"])))
    lines += [_ris_line("KW", t) for t in [*r["tags"], f"hermes-{r['facet']}"]]
    for h in r["highlights"]:
        lines.append(_ris_line("N1", f"Highlight: \"{h['text']}\""
                                     + (f" ({h['comment']})" if h["comment"] else "")))
    lines += [_ris_line("N1", f"Note: {n['text']}") for n in r["notes"]]
    lines.append("ER  - ")
    return "\n".join(lines) + "\n"


def ris(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return "\n".join(_ris_entry(r) for r in records)


# --- CSL-JSON ------------------------------------------------------------------------------

_CSL_TYPES = {"paper": "article-journal", "article": "post-weblog", "podcast": "broadcast",
              "video": "motion_picture"}


def _csl_name(parts: dict) -> dict:
    """A name for CSL-JSON with its particle in the family name ("van der Waals"): Zotero's
    import drops ``non-dropping-particle``, and citeproc reads the particle off the family."""
    if "non-dropping-particle" not in parts:
        return parts
    rest = {k: v for k, v in parts.items() if k != "non-dropping-particle"}
    return {**rest, "family": f"{parts['non-dropping-particle']} {parts['family']}"}


def csl_item(r: dict) -> dict:
    """One record as a CSL-JSON item (the citation-style-language input schema)."""
    item: dict = {"id": r["key"], "citation-key": r["key"],
                  "type": "article" if r["arxiv"] else _CSL_TYPES.get(r["content_type"], "document"),
                  "title": readable(r["title"])}
    if r["authors"]:
        item["author"] = [_csl_name(person(a, r["source"])) for a in r["authors"]]
    if r["source"]:
        # CSL's container: the journal of an article, the blog of a post, the programme of
        # a broadcast episode (the CSL spec's own examples). Not publisher: a show is not
        # the network that publishes it.
        item["container-title"] = r["source"]
    found = media(r)
    if found and found["duration"]:
        item["dimensions"] = duration_text(found["duration"])  # CSL: "running time"
    if _date(r):
        item["issued"] = {"date-parts": [[int(p) for p in _date(r).split("-")]]}
    if r["url"]:
        item["URL"] = r["url"]
    if r["doi"]:
        item["DOI"] = r["doi"]
    if r["arxiv"]:
        # How Zotero itself describes a preprint: the server as publisher, the id as number.
        item.update({"publisher": "arXiv", "number": f"arXiv:{r['arxiv']}"})
    if r["abstract"]:
        item["abstract"] = readable(r["abstract"])
    item["keyword"] = ", ".join([*r["tags"], f"hermes-{r['facet']}"])
    if note_text(r):
        item["note"] = note_text(r)
    item["custom"] = {"hermes_item_id": r["item_id"], "hermes_facet": r["facet"],
                      "hermes_strength": r["strength"]}
    return item


def csl_json(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return json.dumps([csl_item(r) for r in records], ensure_ascii=False, indent=2) + "\n"


# --- Markdown ------------------------------------------------------------------------------


def byline(r: dict) -> str:
    """"A. Smith, B. Jones · *Source* · 2024 · arXiv:2401.12345 · experienced, strength 0.55",
    with an episode's duration and audio link after the year."""
    parts = [", ".join(md_text(a) for a in r["authors"])] if r["authors"] else []
    if r["source"]:
        parts.append("*" + md_text(r["source"], emphasis=True) + "*")
    if r["year"]:
        parts.append(r["year"])
    found = media(r)
    if found and found["duration"]:
        parts.append(duration_text(found["duration"]))
    if _media_url(r):
        parts.append(md_link(found["type"].split("/")[0], found["url"]))
    if r["arxiv"]:
        parts.append(f"arXiv:{r['arxiv']}")
    # arXiv's own DOI says nothing the arXiv id does not; a journal DOI does.
    if r["doi"] and not (r["arxiv"] and r["doi"] == references.ARXIV_DOI.format(r["arxiv"])):
        parts.append(f"doi:{r['doi']}")
    parts.append(r["facet"] + (f", strength {r['strength']:.2f}" if r["strength"] is not None else ""))
    return " · ".join(parts)


def quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines() or [""])


def markdown_body(r: dict, level: int = 2) -> str:
    """The summary, highlights (as quotes) and notes of one record; headings at ``level``."""
    h = "#" * level
    out = []
    if r["abstract"]:
        out += [f"{h} Summary", "", md_text(readable(r["abstract"])), ""]
    if r["highlights"]:
        out += [f"{h} Highlights", ""]
        for x in r["highlights"]:
            out += [quote(md_text(x["text"]))]
            if x["comment"]:
                out += [">", quote("— " + x["comment"])]
            out += [""]
    if r["notes"]:
        out += [f"{h} Notes", ""]
        for n in r["notes"]:
            out += [n["text"], ""]
    return "\n".join(out)


def md_link(text: str, url: str | None) -> str:
    # Feed text is shown, never run (.untrusted); angle brackets keep odd URLs whole.
    text, url = md_text(text), md_url(url)
    return f"[{text}](<{url}>)" if url else text


def _md_entry(r: dict) -> str:
    parts = [f"## {md_link(readable(r['title']), r['url'])}", byline(r)]
    if r["tags"]:
        parts.append("Tags: " + " ".join(f"`{md_code(t)}`" for t in r["tags"]))
    parts.append(markdown_body(r, level=3))
    return "\n\n".join(p.strip() for p in parts if p.strip()) + "\n"


def markdown(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return "\n".join(_md_entry(r) for r in records)


# --- JSON lines ----------------------------------------------------------------------------

_JSONL_FIELDS = ("key", "item_id", "facet", "revision", "title", "authors", "year", "published",
                 "url", "arxiv", "doi", "abstract", "content_type", "source", "media", "tags",
                 "strength", "favorited", "read_fraction", "added", "first_seen", "last_seen",
                 "highlights", "notes")


def jsonl(records: list[dict], tombstones: list[dict] | None = None) -> str:
    """One JSON object a line, ordered by revision: ``{"op": "upsert", ...record}`` and, for
    an export ``since`` a revision, ``{"op": "delete", key, item_id, facet, revision}`` for
    each item that left the exported facets (the only format that can carry deletions)."""
    events = [(r["revision"], {"op": "upsert", **{k: r[k] for k in _JSONL_FIELDS}}) for r in records]
    events += [(t["revision"], {"op": "delete", **t}) for t in tombstones or []]
    events.sort(key=lambda e: e[0])
    return "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for _, e in events)


# --- the entry point -----------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    name: str
    render: object
    extension: str
    media_type: str


FORMATS = {f.name: f for f in (
    Format("bibtex", bibtex, "bib", "application/x-bibtex"),
    Format("ris", ris, "ris", "application/x-research-info-systems"),
    Format("csl-json", csl_json, "json", "application/vnd.citationstyles.csl+json"),
    Format("markdown", markdown, "md", "text/markdown"),
    Format("jsonl", jsonl, "jsonl", "application/jsonl"),
)}


def check_format(name) -> Format:
    if name not in FORMATS:
        raise InvalidInput(
            f"unknown format {name!r}; use one of {', '.join(FORMATS)}")
    return FORMATS[name]


@dataclass
class Export:
    text: str
    count: int          # items written
    deleted: int        # tombstones written (jsonl only)
    revision: int       # the corpus revision the export reflects
    since: int
    truncated: bool     # removals after ``since`` may be missing: the log was trimmed
    has_more: bool = False
    next_since: int | None = None
    keys: list[str] = field(default_factory=list)


def export(db: sqlite_utils.Database, user_id: int, fmt: str, facet: str = "all", since: int = 0,
           max_chars: int | None = None) -> Export:
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
        events = sorted([(r["revision"], "r", r) for r in records]
                        + [(t["revision"], "t", t) for t in gone], key=lambda e: e[0])
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
    return Export(text=text, count=len(records), deleted=len(gone), revision=revision,
                  since=since, truncated=truncated, has_more=has_more,
                  next_since=next_since if has_more else revision,
                  keys=[r["key"] for r in records])
