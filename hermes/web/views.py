"""What a feed page shows: the view (window, read or unread, one feed / topic / tag /
author, the page) read from the query string, the candidates it asks the one ranking path
for, unread counts per feed, and which of the shown items are read.

Filters become a :class:`hermes.contract.CandidateQuery`; read state comes through the
``hermes_candidates`` hook (``exclude_read``), answered by the plugin that keeps it (the
corpus). Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np
from starlette.exceptions import HTTPException

from hermes.facekit.faces import n_days
from hermes.ranking.feed_window import chosen_window, wider_than
from hermes.storage.records import feed_item_ids, feeds_by_title
from hermes.text.tags import normalize_tag
from hermes.topics.tag_graph import get_graph

from ..builtins.default_candidates import removed_feed_rows
from ..contract import CandidateQuery
from ..embed import get_embedder
from ..ranking.matrix import get_matrix
from ..ranking.preferences import source_key, tag_key, topic_key
from ..ranking.rank import blend_weight, candidate_rows
from ..storage.clicks import click_labels
from .forms import DEFAULT_DAYS, PAGE_SIZE, read

#: what a feed view's address holds (:class:`hermes.web.forms.WebValues` checks each)
VIEW_KEYS = ("days", "read", "page", "limit", "feed", "tag", "author", "topic", "below")


@dataclass(frozen=True)
class View:
    user: str
    days: float | None = DEFAULT_DAYS
    show_read: bool = False
    page: int = 1
    limit: int = PAGE_SIZE
    feed: int | None = None
    tag: str | None = None
    author: str | None = None
    topic: str | None = None
    #: also list the items below the persona's bar (match weak or none), after the others
    below: bool = False
    #: whether the address gave ``days`` (else the persona's window applies: :func:`in_window`)
    days_given: bool = False
    #: the persona's window: the addresses of this view leave it out (a reload keeps it)
    home_days: float | None = DEFAULT_DAYS

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit

    @property
    def filtered(self) -> bool:
        return any(v is not None for v in (self.feed, self.tag, self.author, self.topic))

    def url(self, **changes) -> str:
        """This view's address with ``changes`` (``page`` back to 1 unless given)."""
        return "/feed?" + urlencode(self._query(replace(self, **{"page": 1, **changes})))

    def explain_url(self, item_id: int) -> str:
        """The details page of ``item_id``, ranked among this view's candidates."""
        query = self._query(replace(self, page=1, below=False, limit=PAGE_SIZE))
        return "/explain?" + urlencode({**query, "days": self.window, "item_id": item_id})

    @property
    def window(self) -> str:
        return "all" if self.days is None else f"{self.days:g}"

    @staticmethod
    def _query(view: View) -> dict:
        query = {"user": view.user}
        if view.days != view.home_days:
            query["days"] = "all" if view.days is None else f"{view.days:g}"
        if view.show_read:
            query["read"] = "1"
        for key in ("feed", "tag", "author", "topic"):
            if getattr(view, key) is not None:
                query[key] = getattr(view, key)
        if view.limit != PAGE_SIZE:
            query["limit"] = view.limit
        if view.below:
            query["below"] = "1"
        if view.page > 1:
            query["page"] = view.page
        return query

    def scope(self) -> str:
        """``unread items of the last 7 days`` — what the ranking ranked, for explanations."""
        what = "items" if self.show_read else "unread items"
        scope = f"{what} of the last {n_days(self.days)}" if self.days else f"{what} in the whole archive"
        return scope + (" (this view)" if self.filtered else "")


def parse_view(params) -> View:
    """The view an address asks for, its values checked by the web's one model (a bad one
    is a 400 page saying what to give instead)."""
    asked = read(params, *VIEW_KEYS)
    return View(
        user=params.get("user") or "",
        days=None if asked.days == "all" else asked.days,
        show_read=asked.read,
        page=asked.page,
        limit=asked.limit,
        feed=asked.feed,
        tag=asked.tag,
        author=asked.author,
        topic=asked.topic,
        below=asked.below,
        days_given=params.get("days") is not None,
    )


def window_days(text) -> float | None:
    """A window as written (``"14"``, ``"all"``): its days, None for the whole archive."""
    days = read({"days": text}, "days").days
    return None if days == "all" else days


def window_cookie(user: dict) -> str:
    """The cookie that keeps the window chosen in this browser for ``user``: a GET never
    writes the database (a link from another site could otherwise change it), and a
    window is how the page looks, as the reading density is."""
    return f"hermes_window_{user['id']}"


def in_window(db, user: dict, view: View, cookies) -> View:
    """``view`` in the persona's window: the one its address gives, else the one chosen
    last in this browser (its cookie), else the one ``hermes feed`` chose last
    (:mod:`hermes.ranking.feed_window`; 7 days until someone chooses)."""
    if view.days_given:
        return replace(view, home_days=view.days)
    kept = cookies.get(window_cookie(user))
    try:
        days = chosen_window(db, user) if kept is None else window_days(kept)
    except HTTPException:  # an edited cookie: not this page's fault
        days = chosen_window(db, user)
    return replace(view, days=days, home_days=days)


def remembers_window(view: View) -> bool:
    """Whether showing ``view`` keeps its window for the next visit: a choice of window,
    not a tag or author link into the whole archive."""
    return view.days_given and not view.filtered


def feed_view(path: str) -> View | None:
    """The feed view a page address shows; None when it is no feed page (or one whose
    query the feed would refuse)."""
    parts = urlsplit(path)
    if parts.path != "/feed":
        return None
    try:
        return parse_view(dict(parse_qsl(parts.query)))
    except HTTPException:
        return None


def header_figures(ranking) -> dict:
    """What the feed page's header says of the ranking (the ``feed_stats`` macro renders
    it): the page and the answer to a rating read it here, so they cannot disagree. An
    empty window has no blend: the weight is then the persona's own (what `hermes persona
    show` says), not a 0 % that only says the window is empty."""
    weight = ranking.blend_weight if ranking.n_candidates else blend_weight(ranking.n_clicks)
    return {"n_clicks": ranking.n_clicks, "behaviour_weight": weight}


def _matrix(db):
    embedder = get_embedder()  # cheap: the model loads only when something is embedded
    return get_matrix(db, embedder.name, embedder.dimension)


def restricted_ids(db, view: View) -> tuple[int, ...] | None:
    """The item ids a feed / topic view is limited to (None: not limited). An author view
    is a candidate filter (``CandidateQuery.author``: one person however spelled)."""
    keep = None

    def narrow(ids):
        nonlocal keep
        ids = set(int(i) for i in ids)
        keep = ids if keep is None else keep & ids

    if view.feed is not None:
        narrow(feed_item_ids(db, view.feed))
    if view.topic:
        narrow(topic_item_ids(db, view.topic))
    return None if keep is None else tuple(sorted(keep))


def topic_tags(db, label: str) -> list[str]:
    """The tags of the topic community called ``label`` (the digest's topics)."""
    wanted = normalize_tag(label)
    for community in get_graph(db).communities:
        if normalize_tag(community.label) == wanted:
            return list(community.names)
    return []


def topic_item_ids(db, label: str) -> list[int]:
    matrix = _matrix(db)
    mask = np.zeros(len(matrix), dtype=bool)
    for name in topic_tags(db, label):
        # a community's tags are feed categories or keyphrases (topic keys)
        mask |= matrix.has_key(tag_key(name)) | matrix.has_key(topic_key(name))
    # ids bypass the candidates' removed-feed filter (asked for by id): a topic is no such ask
    mask &= ~removed_feed_rows(db, matrix)
    return matrix.ids[mask].tolist()


def candidate_query(db, view: View) -> CandidateQuery:
    return CandidateQuery(
        since_days=view.days,
        exclude_clicked=True,
        exclude_read=not view.show_read,
        tag=view.tag,
        author=view.author,
        item_ids=restricted_ids(db, view),
    )


def unread_by_feed(db, user: dict, days: float | None, feed_ids: list[int] | None = None) -> dict[int, int]:
    """Unread (unrated, not read) items per feed (of ``feed_ids``, else of every feed) in the
    window of ``days`` (``None``: the whole archive)."""
    matrix = _matrix(db)
    rows = candidate_rows(db, user, CandidateQuery(since_days=days, exclude_read=True), matrix)
    in_view = np.zeros(len(matrix), dtype=bool)
    in_view[rows] = True
    counts = {}
    for feed_id in feed_ids if feed_ids is not None else (f["id"] for f in feeds_by_title(db)):
        n = int(np.count_nonzero(matrix.has_key(source_key(feed_id)) & in_view))
        if n:
            counts[feed_id] = n
    return counts


def read_among(db, user: dict, item_ids: list[int]) -> set[int]:
    """Which of ``item_ids`` the persona has read (asked through the candidates hook)."""
    if not item_ids:
        return set()
    matrix = _matrix(db)
    query = CandidateQuery(since_days=None, exclude_clicked=False, exclude_read=True, item_ids=tuple(item_ids))
    unread = set(matrix.ids[candidate_rows(db, user, query, matrix)].tolist())
    return set(item_ids) - unread


def rated_among(db, user: dict, item_ids: list[int]) -> set[int]:
    """Which of ``item_ids`` the persona has rated (✓ or ✗)."""
    return set(click_labels(db, user["id"], item_ids))


def feeds_with_unread(db, user: dict, view: View) -> list[dict]:
    """Every feed with its unread count in the view's window (the row of views)."""
    counts = unread_by_feed(db, user, view.days)
    return [{**f, "unread": counts.get(f["id"], 0)} for f in feeds_by_title(db)]


def with_wider(db, user: dict, view: View, feeds: list[dict]) -> list[dict]:
    """``feeds`` (:func:`feeds_with_unread`), each with none unread in the view's window but
    some outside it given ``wider``: the narrowest wider window that has its unread items and
    how many — what an empty window offers (:func:`hermes.ranking.feed_window.wider_window`),
    per feed: the sample feeds of 2007 said "0" in the last 7 days and nothing else."""
    empty = {f["id"]: f for f in feeds if not f["unread"]}
    for f in feeds:
        f.setdefault("wider", None)
    for days in wider_than(view.days):
        if not empty:
            break
        for feed_id, n in unread_by_feed(db, user, days, list(empty)).items():
            empty.pop(feed_id)["wider"] = (days, n)
    return feeds
