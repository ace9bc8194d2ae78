"""The CSL-JSON export (the citation-style-language input schema that citeproc, pandoc and
Zotero read). citeproc prints a title as text (its only markup is HTML-like tags), so titles
and abstracts are given as hermes shows them to people (``readable``), an author's own
macro read as its name, as the RIS export reads it."""

from __future__ import annotations

import json

from hermes.text.latex import readable

from .fields import _date, duration_text, media, note_text, subject_tags
from .references import person

_CSL_TYPES = {"paper": "article-journal", "article": "post-weblog", "podcast": "broadcast", "video": "motion_picture"}
#: a library's types of the entry (``csl_type``, CSL's own) written as they are: published
#: works, whatever the feed listed; a journal's paper is the published article already. A
#: manuscript is one unless it is arXiv's (a preprint, as Zotero describes it).
_CSL_LIBRARY_TYPES = frozenset({"book", "chapter", "paper-conference", "thesis", "report"})
#: the types in another work: a chapter's container is its book, a conference paper's its
#: proceedings (CSL's container-title); a report's is its series and a book's none
_CSL_CONTAINED = frozenset({"chapter", "paper-conference"})


def _csl_name(parts: dict) -> dict:
    """A name for CSL-JSON with its particle in the family name ("van der Waals"): Zotero's
    import drops ``non-dropping-particle``, and citeproc reads the particle off the family."""
    if "non-dropping-particle" not in parts:
        return parts
    rest = {k: v for k, v in parts.items() if k != "non-dropping-particle"}
    return {**rest, "family": f"{parts['non-dropping-particle']} {parts['family']}"}


def csl_item(r: dict) -> dict:
    """One record as a CSL-JSON item (the citation-style-language input schema)."""
    item: dict = {
        "id": r["key"],
        "citation-key": r["key"],
        "type": "article" if r["arxiv"] else _CSL_TYPES.get(r["content_type"], "document"),
        "title": readable(r["title"], names=True),
    }
    if r["authors"]:
        item["author"] = [_csl_name(person(a, r["source"])) for a in r["authors"]]
    cited = r.get("citation") or {}
    typed = r.get("csl_type") in _CSL_LIBRARY_TYPES
    published = typed or (bool(cited.get("container")) and r["content_type"] == "paper")
    if typed:
        item["type"] = r["csl_type"]
    elif published:
        item["type"] = "article-journal"  # published: no longer the preprint
    elif r.get("csl_type") == "manuscript" and not r["arxiv"]:
        item["type"] = "manuscript"
    if typed:
        container = cited.get("container") if r["csl_type"] in _CSL_CONTAINED else None
    else:
        container = cited.get("container") or r["source"]
    if container:
        # CSL's container: the journal of an article, the blog of a post, the programme of
        # a broadcast episode (the CSL spec's own examples), the book of a chapter. Not
        # publisher: a show is not the network that publishes it.
        item["container-title"] = container
    # a report's number is CSL's number (its issue is a periodical's); a thesis's
    # university and a report's institution are its publisher, its kind genre
    issue = "number" if r.get("csl_type") == "report" and typed else "issue"
    for key, name in (
        ("volume", "volume"),
        ("issue", issue),
        ("pages", "page"),
        ("publisher", "publisher"),
        ("edition", "edition"),
        ("genre", "genre"),
    ):
        if cited.get(key):
            item[name] = cited[key]
    found = media(r)
    if found and found["duration"]:
        item["dimensions"] = duration_text(found["duration"])  # CSL: "running time"
    if _date(r):
        item["issued"] = {"date-parts": [[int(p) for p in _date(r).split("-")]]}
    if r["url"]:
        item["URL"] = r["url"]
    if r["doi"]:
        item["DOI"] = r["doi"]
    if r["arxiv"] and published:
        # A journal article's arXiv id as Zotero's CSL-JSON export gives it: its Extra line
        # "arXiv: …" as note (Zotero's schema maps extra to note, and reads note back into
        # Extra). Not publisher or number: arXiv is not the journal's publisher.
        item["note"] = f"arXiv: {r['arxiv']}"
    elif r["arxiv"]:
        # How Zotero itself describes a preprint: the server as publisher, the id as number.
        item.setdefault("publisher", "arXiv")  # a publisher the entry named, where it named one
        item["number"] = f"arXiv:{r['arxiv']}"
    if r["abstract"]:
        item["abstract"] = readable(r["abstract"], names=True)
    item["keyword"] = ", ".join(subject_tags(r))
    if note_text(r):
        # annote, not note: CSL's note is printed in the reference list by about one style in
        # eleven (258 of the 2,858 in citation-style-language/styles, the ABNT family, APA's
        # annotated bibliography), annote by 14, and citeproc-js reads a note's "Key: value"
        # lines as the item's fields. Zotero's CSL-JSON export writes no notes at all (its note
        # is the item's Extra); its import keeps no annote: for Zotero, RIS carries the notes.
        item["annote"] = note_text(r)
    item["custom"] = {"hermes_item_id": r["item_id"], "hermes_facet": r["facet"], "hermes_strength": r["strength"]}
    return item


def csl_json(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return json.dumps([csl_item(r) for r in records], ensure_ascii=False, indent=2) + "\n"
