"""The objects tool answers are made of, typed for the output schema: a ranked item and its
explanation (built by :mod:`hermes.ranking.explain`, listed by ``list_feed``, ``digest`` and
``explain_item``).

A tool's :class:`~hermes.contract.Result` names these as its payload's field types, so an
agent reading ``tools/list`` sees the fields it will read (``id``, ``rank``, ``title``,
``match``, ``reason`` …) instead of ``{"type": "object"}``. They describe answers and are
never used to build one: a tool still returns a plain dict. Keys an answer always carries
have no default (required in the schema); keys some answers leave out (``list_feed``'s
``brief``) have one, as has every key of an object a refused call carries empty (``{}``). Extra keys are allowed, so a plugin adding one breaks no client.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

#: how well an item matches a persona; strong and good clear its bar
Match = Literal["strong", "good", "weak", "none"]


class Rated(BaseModel):
    """A tag, author, source or topic the persona rated through its clicks."""

    key: str
    kind: str
    label: str
    score: float
    likes: int
    dislikes: int


class InterestEvidence(BaseModel):
    """The clause of the interests text the item is closest to."""

    clause: str
    similarity: float
    level: str


class LikedEvidence(BaseModel):
    """The liked item this item is closest to (``itself``: it is that item)."""

    id: int | None
    title: str
    similarity: float
    level: str
    itself: bool
    source: str | None


class ClassifierEvidence(BaseModel):
    """The click classifier's probability of a like."""

    probability: float
    level: str
    counts: bool


class Evidence(BaseModel):
    """What the item's match was judged on (null: that figure is not active yet)."""

    interest: InterestEvidence | None
    liked: LikedEvidence | None
    classifier: ClassifierEvidence | None
    tags: list[Rated]
    authors: list[Rated]
    sources: list[Rated]
    topics: list[Rated]
    #: null when not judged (the model reads other languages too)
    english: bool | None = None


class Enclosure(BaseModel):
    """A media file attached to the item (a podcast's episode)."""

    url: str | None = None
    type: str | None = None


class RankedItem(BaseModel):
    """One item of a persona's ranked feed; ``rank`` is its place in the whole feed."""

    id: int
    rank: int
    title: str
    url: str | None
    source: str | None
    published: str | None
    date_source: str | None
    content_type: str | None
    enclosure: Enclosure | None
    tags: list[str]
    score: float
    match: Match
    reason: str
    # left out of a brief list (explain_item gives them for one item)
    summary: str = ""
    evidence: Evidence | None = None
    components: dict[str, float] = {}


class ComponentPart(BaseModel):
    """One scorer's part in an item's score."""

    role: str
    active: bool
    share: float
    contribution: float


class TopPart(BaseModel):
    """A component that pushed the item up, with what it was judged on."""

    component: str
    contribution: float
    share: float


class ItemExplanation(BaseModel):
    """Why one item ranks where it does for a persona (``explain_item``). Every field has a
    default: a refused call carries ``{}``, and an explanation cached by an older hermes may
    lack a newer key."""

    item_id: int = 0
    title: str = ""
    match: Match = "none"
    above_bar: bool = False
    #: its place among the ``out_of`` candidates of ``pool``
    rank: int = 0
    out_of: int = 0
    pool: str = ""
    window_days: float | None = None
    #: false when the feed itself leaves the item out (``not_in_pool`` says why)
    in_pool: bool = True
    score: float = 0.0
    n_clicks: int = 0
    blend_weight: float = 0.0
    evidence: Evidence | None = None
    components: dict[str, ComponentPart] = {}
    classifier_active: bool = False
    reason: str = ""
    phrases: list[str] = []
    top: list[TopPart] = []
