"""Clean text out of arXiv listings: the abstract, not the wrapping around it.

Two shapes reach hermes:

- rss.arxiv.org: ``arXiv:2401.12345v1 Announce Type: new Abstract: …`` in the description,
  authors in ``dc:creator``. :func:`strip_announce_prefix` removes the prefix.
- arXiv-API-to-RSS bridges: a description that opens with the author list (a paragraph,
  sometimes "Authors: …") and ends with ``Published: / Updated: / Comments: / PDF`` lines —
  separate paragraphs or ``<br>`` lines, or run together into the abstract's last paragraph
  ("… across 30 models. Published: 2026-11-29T23:00:00Z Comments: Accepted at ICLR 2027
  PDF"). :func:`split_bridge` returns the authors, the abstract and the Published / Updated
  dates; the metadata lines go nowhere near the embedding or the snippet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .text import plain_text

_ANNOUNCE = re.compile(r"^arXiv:\S+\s+Announce Type:\s*(\S+)\s+Abstract:\s*", re.I)
_BREAK = re.compile(r"<\s*(?:br\s*/?|/?p\b[^>]*|/?div\b[^>]*|/?li\b[^>]*|/?ul\b[^>]*|hr\s*/?)\s*>|\n", re.I)
_META = re.compile(
    r"^(?:published|updated|submitted|comments?|pdf|journal[ -]?ref(?:erence)?|doi|"
    r"categor(?:y|ies)|primary[ -]category|subjects?|report[ -]?no|msc[ -]class|acm[ -]class|"
    r"links?|abstract page|arxiv(?: id)?|version|license)\s*:",
    re.I,
)
# A line that is only link labels: the bridge's "PDF" link, "[pdf] [html]", "PDF | HTML".
_LINK_LABEL = r"\[?(?:pdf|html|abs(?:tract)?(?: page)?|other formats)\]?"
_LINKS_LINE = re.compile(rf"^{_LINK_LABEL}(?:\s*[|·,/]?\s*{_LINK_LABEL})*$", re.I)
# The metadata run together into the end of the last paragraph: it starts at a
# Published / Updated / Submitted label with a date (so prose that happens to say
# "comments:" is never cut), and only labelled fields and link labels follow it.
_DATE = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
_DATE_FIELD = rf"(?:published|updated|submitted)\s*:\s*{_DATE}"
_TEXT_FIELD = (
    r"(?:comments?|journal[ -]?ref(?:erence)?|doi|categor(?:y|ies)|primary[ -]category|"
    r"subjects?|report[ -]?no|links?|license)\s*:.*?"
)
_META_TAIL = re.compile(
    rf"(?:^|(?<=\s))({_DATE_FIELD}(?:\s+(?:{_DATE_FIELD}|{_TEXT_FIELD}|{_LINK_LABEL}(?::\s*\S+)?))*)\s*$", re.I | re.S
)
_MAX_TAIL = 1000
_LINKS_TAIL = re.compile(rf"(?:\s+{_LINK_LABEL}(?::\s*\S+)?)+\s*$", re.I)
_DATE_LINE = re.compile(r"^(published|updated|submitted)\s*:\s*(\S.*?)\s*$", re.I)
_AUTHORS_LINE = re.compile(r"^(?:authors?|by)\s*:\s*(.+)$", re.I)
_ABSTRACT_LINE = re.compile(r"^abstract\s*:\s*", re.I)
# "A. Smith, B. Jones and C. Wu" — capitalised words, initials, particles, commas.
_NAME_WORD = re.compile(r"^(?:[A-Z\u00c0-\u024f][\w'\u00c0-\u024f.-]*|[a-z]{1,4}|and|&|et|al\.?)$")
_TITLE_SUFFIX = re.compile(r"\s*\(arXiv:\S+(?:\s+\[[^\]]*\])?(?:\s+\w+)?\)\s*$", re.I)


@dataclass
class BridgeText:
    abstract: str  # plain text
    authors: str | None  # the author line as written, for hermes.text.authors.parse_authors
    comments: str | None  # the "Comments:" line (pages, figures, journal), kept apart
    # The "Published:" / "Updated:" / "Submitted:" values as written, by lower-case label:
    # the item's date when the feed gives none (hermes.ingest.dates.text_date reads them).
    dates: dict[str, str] = field(default_factory=dict)


def strip_announce_prefix(text: str) -> tuple[str, str | None]:
    """(text without rss.arxiv.org's prefix, the announce type it named or ``None``)."""
    match = _ANNOUNCE.match(text)
    if not match:
        return text, None
    return text[match.end() :], match.group(1).lower()


def clean_title(title: str) -> str:
    """A title without the "(arXiv:2401.12345v1 [astro-ph.GA])" some listings append."""
    return _TITLE_SUFFIX.sub("", title) or title


def _looks_like_authors(line: str) -> bool:
    if len(line) > 2000 or (line.endswith((".", "!", "?")) and not line.endswith("al.")):
        return False
    words = line.replace(",", " ").split()
    if not 2 <= len(words) <= 400:
        return False
    return sum(bool(_NAME_WORD.match(w)) for w in words) >= 0.9 * len(words)


def _meta_tail(text: str) -> tuple[str, str | None]:
    """(``text`` without metadata run into its end, that metadata or ``None``)."""
    # Metadata is a line or two: looking only at the end keeps a long text cheap.
    found = _META_TAIL.search(text, max(0, len(text) - _MAX_TAIL))
    if not found:
        return text, None
    return text[: found.start()].rstrip(), found.group(1)


def _is_meta_line(line: str) -> bool:
    if _LINKS_LINE.match(line):
        return True
    if not _META.match(line):
        return False
    dated = _DATE_LINE.match(line)  # "Published: work on this is scarce" is prose
    return not dated or any(c.isdigit() for c in dated.group(2))


def _take(meta: str, comments: str | None, dates: dict[str, str]) -> str | None:
    """Note a metadata line's date or comments; returns the comments."""
    line = _DATE_LINE.match(meta)
    if line:
        dates.setdefault(line.group(1).lower(), line.group(2))
    elif meta.lower().startswith("comment"):
        comments = meta.split(":", 1)[1].strip() or comments
    return comments


def _cut_tail(lines: list[str], comments: str | None, dates: dict[str, str]) -> tuple[bool, str | None]:
    """Cut metadata run into the end of ``lines[-1]`` (in place); (whether there was any,
    the comments)."""
    lines[-1], tail = _meta_tail(lines[-1])
    if not tail:
        return False, comments
    for piece in re.split(rf"\s+(?={_DATE_FIELD}|{_TEXT_FIELD})", tail, flags=re.I):
        comments = _take(_LINKS_TAIL.sub("", piece), comments, dates)
    if not lines[-1]:
        lines.pop()
    return True, comments


def split_bridge(html: str, *, limit: int) -> BridgeText | None:
    """Authors, abstract, comments and dates of a bridge-shaped description; ``None`` when
    the description does not have that shape (then the caller keeps the whole text)."""
    lines = [plain_text(part) for part in _BREAK.split(html or "")]
    lines = [line for line in lines if line]
    # A lone paragraph is the text itself ("arXiv:… Announce Type: new Abstract: …" too):
    # only a date-led metadata run at its end is taken off, and no author line is sought.
    several = len(lines) >= 2
    comments, dates = None, {}
    trailing = 0
    while several and lines and _is_meta_line(lines[-1]):
        comments = _take(lines.pop(), comments, dates)
        trailing += 1
    if lines:
        cut, comments = _cut_tail(lines, comments, dates)
        trailing += cut
    authors = None
    if several and lines:
        found = _AUTHORS_LINE.match(lines[0])
        if found:
            authors = found.group(1)
            lines.pop(0)
        elif len(lines) >= 2 and _looks_like_authors(lines[0]):
            authors = lines.pop(0)
    if authors is None and not trailing:
        return None
    if lines:
        lines[0] = _ABSTRACT_LINE.sub("", lines[0])
    abstract = plain_text(" ".join(lines), limit=limit)
    return BridgeText(abstract=abstract, authors=authors, comments=comments, dates=dates)


__all__ = ["BridgeText", "clean_title", "split_bridge", "strip_announce_prefix"]
