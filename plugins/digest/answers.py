"""The objects the digest tools' answers are made of, typed for the output schema (issue 34;
see :mod:`hermes.answers`). A tool still returns plain dicts.
"""

from __future__ import annotations

from hermes.answers import Enclosure, Evidence, FeedScore, FeedText, FeedTexts, Match, MaybeFeedText, TopPart
from hermes.contract import Answer


class Explanation(Answer):
    """Why the item is where it is, read off the digest's own ranking (the fields of
    ``explain_item`` an agent needs to say why). An answer past its budget keeps only
    ``match`` and ``reason`` of its lowest-ranked items."""

    match: Match
    reason: FeedText
    evidence: Evidence | None = None
    top: list[TopPart] = []
    phrases: FeedTexts = []


class DigestItem(Answer):
    """An item of a topic, of ``unclustered`` or below the bar; ``rank`` is its place in the
    window's ranking, ``matched_tags`` the tags that tie it to its topic."""

    id: int
    rank: int
    title: FeedText
    url: str | None
    #: the compact answer (an agent's default) gives the day only
    published: str | None
    source: MaybeFeedText
    content_type: str | None
    score: FeedScore
    match: Match
    reason: FeedText
    # the compact answer leaves out the usual date source ("feed"), a missing enclosure and
    # the rest, as list_feed's compact page does (detail=true gives them)
    date_source: str | None = "feed"
    enclosure: Enclosure | None = None
    tags: FeedTexts = []
    matched_tags: FeedTexts = []
    summary: FeedText = ""
    explanation: Explanation | None = None


class Topic(Answer):
    """A topic of the window: ``label`` names the tags its items carry, ``community`` the
    archive's community it says most about (as ``kg_communities`` labels it); ``items`` shows
    all of them when the digest groups every item that clears the bar, else at most
    ``per_topic``; ``n_total`` counts all."""

    label: FeedText
    community: FeedText
    tags: FeedTexts
    items: list[DigestItem]
    n_total: int


class SavedItem(Answer):
    """An item saved for later and not read (``saved_at``: when it was saved)."""

    id: int
    title: FeedText
    url: str | None
    published: str | None
    source: MaybeFeedText
    tags: FeedTexts
    saved_at: str | None


class Community(Answer):
    """A community of the archive's tag graph: ``size`` tags over ``n_items`` items."""

    label: FeedText
    size: int
    n_items: int
    top_tags: FeedTexts
