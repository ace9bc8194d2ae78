"""Clean text out of arXiv listings: the abstract, not the wrapping around it.

Two shapes reach hermes:

- rss.arxiv.org: ``arXiv:2401.12345v1 Announce Type: new Abstract: …`` in the description,
  authors in ``dc:creator``. :func:`strip_announce_prefix` removes the prefix.
- arXiv-API-to-RSS bridges: a description that opens with the author list (a paragraph,
  sometimes "Authors: …") and ends with ``Published: / Updated: / Comments: / PDF:`` lines.
  :func:`split_bridge` returns the authors and the abstract; the metadata lines go nowhere
  near the embedding or the snippet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import plain_text

_ANNOUNCE = re.compile(r"^arXiv:\S+\s+Announce Type:\s*(\S+)\s+Abstract:\s*", re.I)
_BREAK = re.compile(r"<\s*(?:br\s*/?|/?p\b[^>]*|/?div\b[^>]*|/?li\b[^>]*|/?ul\b[^>]*|hr\s*/?)\s*>|\n",
                    re.I)
_META = re.compile(
    r"^(?:published|updated|submitted|comments?|pdf|journal[ -]?ref(?:erence)?|doi|"
    r"categor(?:y|ies)|primary[ -]category|subjects?|report[ -]?no|msc[ -]class|acm[ -]class|"
    r"links?|abstract page|arxiv(?: id)?|version|license)\s*:", re.I)
_AUTHORS_LINE = re.compile(r"^(?:authors?|by)\s*:\s*(.+)$", re.I)
_ABSTRACT_LINE = re.compile(r"^abstract\s*:\s*", re.I)
# "A. Smith, B. Jones and C. Wu" — capitalised words, initials, particles, commas.
_NAME_WORD = re.compile(r"^(?:[A-Z\u00c0-\u024f][\w'\u00c0-\u024f.-]*|[a-z]{1,4}|and|&|et|al\.?)$")
_TITLE_SUFFIX = re.compile(r"\s*\(arXiv:\S+(?:\s+\[[^\]]*\])?(?:\s+\w+)?\)\s*$", re.I)


@dataclass
class BridgeText:
    abstract: str  # plain text
    authors: str | None  # the author line as written, for hermes.authors.parse_authors
    comments: str | None  # the "Comments:" line (pages, figures, journal), kept apart


def strip_announce_prefix(text: str) -> tuple[str, str | None]:
    """(text without rss.arxiv.org's prefix, the announce type it named or ``None``)."""
    match = _ANNOUNCE.match(text)
    if not match:
        return text, None
    return text[match.end():], match.group(1).lower()


def clean_title(title: str) -> str:
    """A title without the "(arXiv:2401.12345v1 [astro-ph.GA])" some listings append."""
    return _TITLE_SUFFIX.sub("", title) or title


def _looks_like_authors(line: str) -> bool:
    if len(line) > 2000 or line.endswith((".", "!", "?")) and not line.endswith("al."):
        return False
    words = line.replace(",", " ").split()
    if not 2 <= len(words) <= 400:
        return False
    return sum(bool(_NAME_WORD.match(w)) for w in words) >= 0.9 * len(words)


def split_bridge(html: str, *, limit: int) -> BridgeText | None:
    """Authors, abstract and comments of a bridge-shaped description; ``None`` when the
    description does not have that shape (then the caller keeps the whole text)."""
    lines = [plain_text(part) for part in _BREAK.split(html or "")]
    lines = [line for line in lines if line]
    if len(lines) < 2:
        return None
    comments = None
    trailing = 0
    while lines and _META.match(lines[-1]):
        line = lines.pop()
        trailing += 1
        if line.lower().startswith("comment"):
            comments = line.split(":", 1)[1].strip() or None
    authors = None
    if lines:
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
    return BridgeText(abstract=abstract, authors=authors, comments=comments)


__all__ = ["BridgeText", "clean_title", "split_bridge", "strip_announce_prefix"]
