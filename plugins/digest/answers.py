"""The objects the digest tools' answers are made of, typed for the output schema (issue 34;
see :mod:`hermes.answers`). A tool still returns plain dicts.
"""

from __future__ import annotations

from pydantic import BaseModel

from hermes.answers import Enclosure, Evidence, Match, TopPart


class Explanation(BaseModel):
    """Why the item is where it is, read off the digest's own ranking (the fields of
    ``explain_item`` an agent needs to say why)."""

    match: Match
    evidence: Evidence | None
    top: list[TopPart]
    phrases: list[str]
    reason: str


class DigestItem(BaseModel):
    """An item of a topic, of ``unclustered`` or below the bar; ``rank`` is its place in the
    window's ranking, ``matched_tags`` the tags that tie it to its topic."""

    id: int
    rank: int
    title: str
    url: str | None
    enclosure: Enclosure | None
    published: str | None
    date_source: str | None
    source: str | None
    content_type: str | None
    tags: list[str]
    matched_tags: list[str]
    summary: str
    score: float
    match: Match
    reason: str
    explanation: Explanation


class Topic(BaseModel):
    """A topic of the window: ``label`` names the tags its items carry, ``community`` the
    archive's community it says most about (as ``kg_communities`` labels it); ``items`` shows
    at most ``per_topic``, ``n_total`` counts all."""

    label: str
    community: str
    tags: list[str]
    items: list[DigestItem]
    n_total: int


class SavedItem(BaseModel):
    """An item saved for later and not read (``saved_at``: when it was saved)."""

    id: int
    title: str
    url: str | None
    published: str | None
    source: str | None
    tags: list[str]
    saved_at: str | None


class Community(BaseModel):
    """A community of the archive's tag graph: ``size`` tags over ``n_items`` items."""

    label: str
    size: int
    n_items: int
    top_tags: list[str]
