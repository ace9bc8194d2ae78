"""The objects the persona tools' answers are made of, typed for the output schema (issue 34;
see :mod:`hermes.answers`). A tool still returns plain dicts. An object a refused call
carries empty (``{}``) has a default for every field; a list's rows have none.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hermes.answers import Enclosure, FeedText, FeedTexts, Match, MaybeFeedText
from hermes.contract import Answer

Label = Literal["like", "dislike"]


class UserRow(Answer):
    """A persona and how much feedback it has given (``list_users``)."""

    name: str
    interests: str | None
    created: str | None
    clicks: int
    likes: int
    dislikes: int


class Persona(Answer):
    """The persona a create or update left (``previous_*``: what an update replaced)."""

    name: str = ""
    interests: str = ""
    #: the parts of the interests text the ranking leaves out (they say what not to show)
    not_wanted: list[str] = []
    previous_interests: str | None = None
    previous_name: str | None = None


class TagCount(Answer):
    tag: FeedText
    count: int


class TypeCount(Answer):
    content_type: str | None
    count: int


#: A search ranks its own matches: their scores are standardised among them, so a lone
#: match scores 0 and two score about +1 and -1 however well they fit (the trial read them
#: as verdicts).
SearchScore = Annotated[
    float,
    Field(
        description="Relative: each scorer's z-score over all the items the search matched (not "
        "only those shown), weighted and summed (0: their average; one match: 0, two: about +1 "
        "and -1). Results come by it, best first; match says how well each fits."
    ),
]


class SearchHit(Answer):
    """One search result (``rated``: its earlier feedback). ``match`` is how well it matches
    the persona, as ``list_feed`` judges it (strong and good clear the bar)."""

    id: int
    rank: int
    title: FeedText
    summary: FeedText
    url: str | None
    enclosure: Enclosure | None
    published: str | None
    date_source: str | None
    content_type: str | None
    tags: FeedTexts
    authors: FeedTexts
    source: MaybeFeedText
    score: SearchScore
    match: Match
    rated: Label | None


class Tally(Answer):
    """A tag, topic, content type or source (``key``; a source by its feed's title) and the
    persona's clicks on it; ``score`` > 0 leans liked."""

    key: FeedText
    likes: int
    dislikes: int
    score: float


class AtOdds(Tally):
    """A disliked tag or topic the interests text asks for."""

    kind: Literal["tag", "topic"]


class RecentClick(Answer):
    item_id: int
    title: MaybeFeedText
    rated: Label
    source: str
    at: str | None


class Brief(Answer):
    """An item a bootstrap liked or disliked."""

    id: int
    title: MaybeFeedText


class Loss(Answer):
    """What a delete or a reset removed (or would remove): ``persona`` is null for a reset,
    which keeps it; ``rows`` counts per table, clicks always listed (``items``: the library
    entries an import stored as items that nothing else refers to, which go with its likes)."""

    persona: str | None = None
    clicks: int = 0
    likes: int = 0
    dislikes: int = 0
    rows: dict[str, int] = {}


class RefusedEntry(Answer):
    """A library entry that could not be read, by its line."""

    line: int | None
    key: str | None
    reason: str


class NewEntry(Answer):
    """A library entry not found in the archive, stored as an item of its own."""

    line: int | None
    key: str | None
    title: str | None
    arxiv: str | None
    doi: str | None
    reason: str
