"""The RIS export (Zotero, EndNote and Mendeley read it): one record a ``TY`` … ``ER`` block.

Titles and abstracts are given as hermes shows them to people (``readable``: "In vivo",
"𝒪(n²)"): a reference manager stores RIS text as typed and would print arXiv's LaTeX as
macros. An author's own macro is read as its name (``names``: arXiv 0704.1815's
"$\\Delta <\\tk$" is "Δ <tk"), so no span of an abstract stays LaTeX beside the Unicode of
the others; the BibTeX export gives such a span the same text."""

from __future__ import annotations

from hermes.text.latex import readable

from .fields import _date, _media_url, subject_tags
from .references import inverted

_RIS_TYPES = {"paper": "JOUR", "article": "ELEC", "podcast": "SOUND", "video": "VIDEO"}


def _ris_line(tag: str, value: str) -> str:
    # RIS is line based: a newline inside a value would start a bogus tag.
    return f"{tag}  - {' '.join(str(value).split())}"


#: an arXiv paper's type: Zotero's RIS import has no preprint type (nor UNPB, which it read
#: as a journal article without a journal); a manuscript of type "Preprint" is the nearest,
#: and EndNote and Mendeley read MANSCPT as a manuscript too
RIS_PREPRINT = "MANSCPT"
#: a library's type of the entry (``csl_type``) as RIS's TY (the codes Zotero's RIS writes
#: for its book, book section, conference paper, thesis and report; a journal's paper is JOUR
#: already). A manuscript of arXiv's is the preprint above.
_RIS_LIBRARY_TYPES = {
    "book": "BOOK",
    "chapter": "CHAP",
    "paper-conference": "CONF",
    "thesis": "THES",
    "report": "RPRT",
    "manuscript": RIS_PREPRINT,
}
#: the types in another work: a chapter's T2 is its book's title, a conference paper's its
#: proceedings' (Zotero reads T2 as its conference, C3 as its proceedings: both are written).
#: A book's or report's T2 would be its series, a thesis has none.
_RIS_CONTAINED = {"chapter", "paper-conference"}


def _ris_entry(r: dict) -> str:
    cited = r.get("citation") or {}
    library = _RIS_LIBRARY_TYPES.get(r.get("csl_type"))
    typed = library not in (None, RIS_PREPRINT)  # a book, a chapter …: published
    # a paper the person's library names a journal for is the published article, not the preprint
    published = typed or (bool(cited.get("container")) and r["content_type"] == "paper")
    preprint = bool(r["arxiv"]) and not published
    if preprint:
        kind = RIS_PREPRINT
    else:
        kind = library or ("JOUR" if published else _RIS_TYPES.get(r["content_type"], "GEN"))
    lines = [_ris_line("TY", kind), _ris_line("ID", r["key"]), _ris_line("TI", readable(r["title"], names=True))]
    if preprint:
        lines.append(_ris_line("M3", "Preprint"))  # Zotero: the manuscript's type
    elif typed and cited.get("genre"):
        lines.append(_ris_line("M3", cited["genre"]))  # Zotero: a thesis's or report's type
    lines += [_ris_line("AU", inverted(a, r["source"])) for a in r["authors"]]
    # a typed entry's container is the library's, and only a chapter's or conference paper's
    if typed:
        container = cited.get("container") if r["csl_type"] in _RIS_CONTAINED else None
    else:
        container = cited.get("container") or r["source"]
    if container:
        # T2, the secondary title: the journal of a JOUR, the blog of an ELEC, the show of
        # a SOUND, the book of a CHAP (what Zotero's RIS writes for a publication, blog,
        # series or book title).
        lines.append(_ris_line("T2", container))
        if kind == "CONF":
            lines.append(_ris_line("C3", container))
    if cited.get("volume"):
        lines.append(_ris_line("VL", cited["volume"]))
    if cited.get("issue"):
        # a report's number is SN (RIS's and Zotero's report number)
        lines.append(_ris_line("SN" if kind == "RPRT" else "IS", cited["issue"]))
    if cited.get("pages"):
        first, _, last = cited["pages"].partition("–")
        lines += [_ris_line("SP", first)] + ([_ris_line("EP", last)] if last else [])
    if cited.get("publisher"):
        # PB: a thesis's university and a report's institution too (Zotero's RIS)
        lines.append(_ris_line("PB", cited["publisher"]))
    if cited.get("edition"):
        lines.append(_ris_line("ET", cited["edition"]))
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
    if preprint:
        lines += [_ris_line("DB", "arXiv"), _ris_line("AN", f"arXiv:{r['arxiv']}")]
    elif r["arxiv"]:
        # A journal article's arXiv id: not DB/AN, which Zotero's RIS import reads as the
        # item's archive and its place there ("arXiv" as the journal article's archive).
        # M2 it reads into Extra, "arXiv: …", the line its BibTeX import writes for eprint.
        lines.append(_ris_line("M2", f"arXiv: {r['arxiv']}"))
    if r["abstract"]:
        lines.append(_ris_line("AB", readable(r["abstract"], names=True)))
    lines += [_ris_line("KW", t) for t in subject_tags(r)]
    for h in r["highlights"]:
        lines.append(_ris_line("N1", f'Highlight: "{h["text"]}"' + (f" ({h['comment']})" if h["comment"] else "")))
    lines += [_ris_line("N1", f"Note: {n['text']}") for n in r["notes"]]
    lines.append("ER  - ")
    return "\n".join(lines) + "\n"


def ris(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return "\n".join(_ris_entry(r) for r in records)
