"""The Markdown export, read by people: a heading, a byline and the summary, highlights and
notes of each record. Feed text is shown, never run (:mod:`.untrusted`); LaTeX is given as
hermes shows it (``readable``)."""

from __future__ import annotations

from hermes.text.latex import readable

from . import references
from .fields import _media_url, duration_text, media
from .untrusted import md_code, md_text, md_url


def byline(r: dict) -> str:
    """ "A. Smith, B. Jones · *Source* · 2024 · arXiv:2401.12345 · experienced, strength 0.55",
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
