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

from typing import Annotated, Literal

import pydantic_core
from pydantic import Field

from hermes.contract import Answer
from hermes.facekit.faces import face

#: How an output schema marks a field that carries text third parties wrote (a feed's
#: titles, summaries, tags, its own name): the server's instructions say once what that
#: means (data to report, never instructions to follow); the schema says where it is.
THIRD_PARTY = "third-party text"
FeedText = Annotated[str, Field(description=THIRD_PARTY)]
MaybeFeedText = Annotated[str | None, Field(description=THIRD_PARTY)]
FeedTexts = Annotated[list[str], Field(description=THIRD_PARTY)]

#: how well an item matches a persona; strong and good clear its bar
Match = Literal["strong", "good", "weak", "none"]
#: What an item's score is where a persona's feed ranks it (list_feed, digest, explain_item):
#: a relative figure an agent read as absolute, or as the order (the trial: a weak item at
#: 2.65 listed after a good one at 1.23). hermes.ranking.rank: blend and top_order's ``first``.
FeedScore = Annotated[
    float,
    Field(
        description="Relative: each scorer's z-score over all the items ranked (not only those "
        "shown), weighted and summed (0: their average); compare within one answer only. Items that clear the bar (match "
        "strong or good) rank first, then the rest, each by score, so a weak item can outscore "
        "a good one; match says how well it fits."
    ),
]


class Rated(Answer):
    """A tag, author, source or topic the persona rated through its clicks."""

    key: FeedText
    kind: str
    label: FeedText
    score: Annotated[
        float,
        Field(description="(likes - dislikes) / (likes + dislikes + 2): from -1 to 1, one click ±1/3"),
    ]
    likes: int
    dislikes: int


class InterestEvidence(Answer):
    """The clause of the interests text the item is closest to."""

    clause: str
    similarity: float
    level: str


class LikedEvidence(Answer):
    """The liked item this item is closest to (``itself``: it is that item)."""

    id: int | None
    title: FeedText
    similarity: float
    level: str
    itself: bool
    source: MaybeFeedText


class ClassifierEvidence(Answer):
    """The click classifier's probability of a like."""

    probability: float
    level: str
    counts: bool


class Evidence(Answer):
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


class Enclosure(Answer):
    """A media file attached to the item (a podcast's episode)."""

    url: str | None = None
    type: str | None = None


class RankedItem(Answer):
    """One item of a persona's ranked feed; ``rank`` is its place in the whole feed."""

    id: int
    rank: int
    title: FeedText
    url: str | None
    source: MaybeFeedText
    #: list_feed's compact page gives the day only
    published: str | None
    content_type: str | None
    score: FeedScore
    match: Match
    #: quotes the feed text it was judged on (a liked title, a tag)
    reason: FeedText
    # list_feed's compact page leaves out the usual date source ("feed"), a missing
    # enclosure and the rest (detail=true gives them; explain_item too, for one item)
    date_source: str | None = "feed"
    enclosure: Enclosure | None = None
    tags: FeedTexts = []
    summary: FeedText = ""
    evidence: Evidence | None = None
    components: dict[str, float] = {}


class ComponentPart(Answer):
    """One scorer's part in an item's score."""

    role: str
    active: bool
    share: float
    contribution: float


class TopPart(Answer):
    """A component that pushed the item up; what it was judged on is the explanation's
    ``evidence`` of its kind (profile: interest, affinity: liked, classifier: classifier,
    preference: tags, authors, sources)."""

    component: str
    contribution: float
    share: float


class ItemExplanation(Answer):
    """Why one item ranks where it does for a persona (``explain_item``). Every field has a
    default: a refused call carries ``{}``, and an explanation cached by an older hermes may
    lack a newer key."""

    item_id: int = 0
    title: FeedText = ""
    match: Match = "none"
    above_bar: bool = False
    #: its place among the ``out_of`` candidates of ``pool``
    rank: int = 0
    out_of: int = 0
    pool: str = ""
    window_days: float | None = None
    #: false when the feed itself leaves the item out (``not_in_pool`` says why)
    in_pool: bool = True
    score: FeedScore = 0.0
    n_clicks: int = 0
    blend_weight: float = 0.0
    evidence: Evidence | None = None
    components: dict[str, ComponentPart] = {}
    classifier_active: bool = False
    reason: FeedText = ""
    phrases: FeedTexts = []
    top: list[TopPart] = []


# --- budgets ----------------------------------------------------------------------------------

#: the most characters one copy of an answer that can grow may take: a client receives it
#: twice (the text block and the structured content) and a host may put both in the model's
#: context (a digest at its maximums was 308 kB a copy)
ANSWER_BUDGET = 40_000
#: list_feed's default page (20 compact items): at most this, whatever the clicks
FEED_BUDGET = 10_000


def size_of(value) -> int:
    """The characters of ``value`` as the answer's text block carries it (compact JSON)."""
    return len(pydantic_core.to_json(value, fallback=str))


def budgeted() -> bool:
    """Whether answers are cut to a budget where this call entered hermes: over MCP only.
    An agent's context holds every character of an answer (twice); a person who asked the
    CLI or the web for 100 items reads what they asked for."""
    return face() == "mcp"


def fitting(rows: list, budget: int, rest: int) -> int:
    """How many of ``rows``, from the first, fit in ``budget`` characters beside ``rest``
    characters of the rest of the answer (its message, counts, other keys) — all of them
    where answers are not :func:`budgeted`."""
    if not budgeted():
        return len(rows)
    used = rest
    for n, row in enumerate(rows):
        used += size_of(row) + 1  # its comma
        if used > budget:
            return n
    return len(rows)


def over(value, budget: int) -> bool:
    """Whether ``value`` is :func:`budgeted` and longer than ``budget`` characters."""
    return budgeted() and size_of(value) > budget


#: what a compact item leaves out: ``explain_item`` (or ``detail=true``) gives it
BULKY = ("summary", "evidence", "components", "tags", "matched_tags", "explanation")


def compact(item: dict) -> None:
    """A ranked item as ``list_feed``'s default page and ``digest``'s compact answer list it:
    what choosing needs (id, rank, title, url, source, content type, score, match, reason)
    and no summary, evidence, components, tags or explanation; the day it was published
    (its date_source only when not the feed's own date) and an enclosure only where there
    is one. Twenty such items fit in :data:`FEED_BUDGET`."""
    for bulky in BULKY:
        item.pop(bulky, None)
    item["published"] = (item.get("published") or "")[:10] or None
    for key, usual in (("date_source", "feed"), ("enclosure", None)):
        if key in item and item[key] == usual:
            del item[key]


def left_out_words(n: int, budget: int) -> str:
    """The sentence that says an answer was cut to its budget."""
    return f"{n} more {'was' if n == 1 else 'were'} left out to keep this answer under {budget:,} characters"
