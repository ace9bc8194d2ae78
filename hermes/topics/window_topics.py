"""Topics of a window: the items a digest groups, split at the grain of those items.

The archive's tag graph (:mod:`hermes.topics.tag_graph`) is one fixed partition of every tag: in an
archive of one field its largest community is the field ("galaxy · star" over an astronomy
listing), and a digest that assigned its items to those communities put thirty items in one
topic. Here the topics are found among the window's own items, so the split follows what
the window holds: sub-fields for one field, subjects for a mix.

- Two items are as close as their subject tags and their embeddings say
  (:func:`features`): the cosine of their tag vectors, each tag weighing its information
  over the archive (``log(tagged items / items carrying it)``, so a tag the whole field
  carries counts for little), blended with the cosine of their embeddings
  (:data:`TAG_WEIGHT`). Both are taken relative to the window: the window's mean vector
  is taken off each item's first (:data:`CENTER`, in a window of :data:`MIN_CENTRED` items
  or more), since what every item of a window
  shares — the field, in a digest of one field — says nothing about which sub-field an
  item is of. Tags that name an item's feed — on most of its items: link boilerplate, the
  feed's own name — are no subject (:meth:`hermes.topics.tag_graph.TagGraph.subject_tags`).
- Ward's agglomerative clustering merges the closest items and groups; where the tree is
  cut depends on the window (:func:`_ward`): at the finest merge distance, from
  :data:`CUT_MIN` up, that leaves at most :data:`MAX_ALONE` of the items alone, and never
  past :data:`CUT`. A window of one field is cut into its sub-fields, a mix into its
  subjects; groups closer than :data:`CUT_MIN` are never cut apart.
- Each item's embedding is read in its archive's neighbourhood (:func:`in_archive`, called
  by the digest with the ranking's matrix): blended with the mean of its
  :data:`ARCHIVE_NEIGHBOURS` nearest items of the whole archive, since a paper's nearest
  neighbour in a window of 30 is of its own subject two times in three.
- Two feeds with no subject tag in common are never one topic (a topic is cut apart
  between them), and then every item moves to the topic it overlaps most as Ward's
  clustering measures it (:func:`_settle_spread`: what it adds to the topic's spread) —
  so an item always sits in the topic of its strongest overlap. (:data:`SETTLE` "links":
  the previous round's measure, the mean strength of its links on the window's kNN graph.)
- An item without a subject tag, or alone in its group (nothing in the window is close
  to it), is unclustered.
- A topic is named by the tags that set its items apart (:mod:`hermes.topics.topic_labels`):
  tags its items share, weighed by how rare they are in the window, so "galaxy" in a window of astronomy
  names nothing; no word twice, no tag that names no topic, no web address.

Everything is a function of the window's items (taken in id order), their tags and vectors
and the archive's tag counts: deterministic across calls and processes. Parameters were
chosen on one half of the labelled arXiv papers and are reported on the other
(benchmarks/topics_quality.py, docs/digest.md).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from hermes.embed import from_blob
from hermes.text.language import names_no_topic
from hermes.text.tags import normalize_tag
from hermes.topics import topic_labels
from hermes.topics.tag_graph import TagGraph

#: share of closeness that the tags make (the rest: the embeddings' cosine)
TAG_WEIGHT = 0.3
#: share of the window's mean row taken off each item's tag and embedding rows
CENTER = 1.0
#: ... in a window of at least this many items: the mean of a handful of items is those
#: items' own subject, not a field around them, and taking it off leaves their noise
MIN_CENTRED = 15
#: Ward's cut, at most: the merge distance beyond which two groups always stay two topics.
#: Rows are unit vectors, so two items alone merge at their Euclidean distance,
#: sqrt(2 − 2·cosine), 1.41 for unrelated items; groups merge at larger distances as they
#: grow.
CUT = 1.5
#: ... and at least: groups closer than this are one topic whatever the window
CUT_MIN = 1.0
#: the share of the window's items the cut may leave alone in their group (unclustered)
MAX_ALONE = 0.17
#: links per item that count for its overlap with a topic (the rest are cut: the window's
#: kNN graph), so an item is drawn to the topic of its near neighbours, not to one it is
#: loosely like on average
NEIGHBOURS = 3
#: rounds of moving items to their strongest topic (it settles in two or three)
ROUNDS = 10
#: what an item's overlap with a topic is, for :func:`_settle`: "spread" — how little it
#: adds to the topic's spread, as Ward's clustering measures it (the topic's size times
#: the squared distance to its centre, over its size plus one); "links" — the mean
#: strength of its links into the topic on the window's kNN graph (:data:`NEIGHBOURS`),
#: the previous round's rule, which moved an item out of a pair into a larger topic it is
#: loosely like and so dissolved about one topic a window (benchmarks/results/topics.md)
SETTLE = "spread"
#: an item's vector is read in the context of the archive: blended (this share) with the
#: mean of its :data:`ARCHIVE_NEIGHBOURS` nearest items of the whole archive
#: (:func:`in_archive`), so two items are close when their neighbourhoods are, not only
#: their own texts — a paper's nearest neighbour in a window of 30 is of its own arXiv
#: archive two times in three, its archive's neighbourhood more often (0: off)
ARCHIVE_BLEND = 0.5
ARCHIVE_NEIGHBOURS = 5
#: ... in full when the neighbours' mean cosine to the item is at least this, in proportion
#: below it: the neighbours of an item that nothing in the archive is like say nothing of it
ARCHIVE_CLOSE = 0.3
#: ... and only in an archive of this many items or more: in a smaller one an item's five
#: nearest are a good part of it, not its neighbourhood
ARCHIVE_MIN = 100


@dataclass(frozen=True)
class WindowItem:
    id: int
    tags: list[str]
    feed_id: int | None = None
    vector: np.ndarray | None = None


@dataclass(frozen=True)
class Topic:
    label: str
    tags: tuple[str, ...]  # display names its items carry, most telling first
    members: tuple[int, ...]  # item ids, in id order
    matched: dict[int, list[str]] = field(default_factory=dict)  # item id -> its subject tags


@dataclass(frozen=True)
class Grouping:
    topics: list[Topic]  # largest first, then by label
    unclustered: list[int]  # item ids, in id order


def subject_tags(graph: TagGraph, item: WindowItem) -> dict[str, str]:
    """The item's subject tags, key -> display spelling: not naming its feed, not words of
    no topic, each once."""
    out: dict[str, str] = {}
    for tag in graph.subject_tags(item.tags, item.feed_id):
        key = normalize_tag(tag)
        if key and key not in out and not names_no_topic(tag):
            out[key] = " ".join(tag.split())
    return out


def group(graph: TagGraph, items: list[WindowItem]) -> Grouping:
    """The window's topics (see the module docstring)."""
    items = sorted(items, key=lambda i: i.id)
    subjects = [subject_tags(graph, i) for i in items]
    window = [i for i, s in zip(items, subjects, strict=True) if s]
    keys = [s for s in subjects if s]
    unclustered = [i.id for i, s in zip(items, subjects, strict=True) if not s]
    topics = []
    if len(window) >= 2:
        related = _related(window, keys)
        rows = features(graph, window, keys)
        parts = _alone(_apart(_ward(rows), related))
        if SETTLE == "spread":
            parts = _settle_spread(rows, related, parts)
        else:  # the previous round's rule, kept for the benchmark's grid: the kNN link graph
            parts = _settle(_links(rows, related), parts)
        df = Counter(t for s in keys for t in s)
        groups = []
        for members in _members(parts):
            if len(members) < 2 or parts[members[0]] < 0:
                unclustered.extend(window[m].id for m in members)
            else:
                groups.append(([window[m] for m in members], [keys[m] for m in members]))
        topics = [_topic(graph, g, k, df, len(window)) for g, k in groups]
        # two topics of one label ("amplitude", "amplitude"): each says one thing more
        twice = {label for label, n in Counter(t.label for t in topics).items() if n > 1}
        topics = [
            _topic(graph, g, k, df, len(window), distinct=True) if t.label in twice else t
            for t, (g, k) in zip(topics, groups, strict=True)
        ]
    else:
        unclustered.extend(i.id for i in window)
    topics.sort(key=lambda t: (-len(t.members), t.label))
    return Grouping(topics, sorted(unclustered))


def features(graph: TagGraph, items: list[WindowItem], keys: list[dict[str, str]]) -> np.ndarray:
    """A unit row per item whose dot products blend the two closenesses:
    ``TAG_WEIGHT · tag cosine + (1 − TAG_WEIGHT) · embedding cosine``; tags alone when an
    item has no vector."""
    vocab = sorted({t for s in keys for t in s})
    col = {t: j for j, t in enumerate(vocab)}
    n_tagged = max(graph.n_items_tagged, 1)
    # a tag that is no node of the graph is on one item of the archive: the most telling
    weight = np.array([math.log(n_tagged / max(graph.count(t), 1)) + 1e-3 for t in vocab])
    incidence = np.zeros((len(items), len(vocab)))
    for i, s in enumerate(keys):
        cols = [col[t] for t in s]
        incidence[i, cols] = weight[cols]
    tags = _centred(_unit(incidence))
    vectors = [i.vector for i in items]
    if any(v is None for v in vectors) or len({len(v) for v in vectors}) > 1:
        return tags
    return np.hstack(
        [
            math.sqrt(TAG_WEIGHT) * tags,
            math.sqrt(1 - TAG_WEIGHT) * _centred(_unit(np.stack(vectors).astype(np.float64))),
        ]
    )


def _centred(rows: np.ndarray) -> np.ndarray:
    """Unit rows less :data:`CENTER` of the window's mean row, made unit again."""
    if not CENTER or len(rows) < MIN_CENTRED:
        return rows
    return _unit(rows - CENTER * rows.mean(axis=0, keepdims=True))


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def _related(items: list[WindowItem], keys: list[dict[str, str]]) -> np.ndarray:
    """Which items may share a topic: those of one feed, and those of two feeds that share a
    subject tag (two feeds with no subject in common are never one topic). Items with no
    feed (a library import, a page saved by hand) are of no one feed: they relate by a
    subject tag only."""
    n = len(items)
    out = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1, n):
            one_feed = items[i].feed_id is not None and items[i].feed_id == items[j].feed_id
            if one_feed or keys[i].keys() & keys[j].keys():
                out[i, j] = out[j, i] = True
    return out


def _links(rows: np.ndarray, related: np.ndarray) -> np.ndarray:
    """The window's kNN link graph: each pair's similarity, unrelated pairs cut, each item's
    links beyond its :data:`NEIGHBOURS` strongest cut (:func:`_nearest`)."""
    strength = np.clip(rows @ rows.T, 0.0, None)
    strength[~related] = 0.0
    np.fill_diagonal(strength, 0.0)
    return _nearest(strength)


def _nearest(strength: np.ndarray) -> np.ndarray:
    """``strength`` with each item's links beyond its :data:`NEIGHBOURS` strongest cut
    (a link stays when either end keeps it)."""
    if len(strength) <= NEIGHBOURS + 1:
        return strength
    order = np.argsort(-strength, axis=1, kind="stable")[:, :NEIGHBOURS]
    keep = np.zeros_like(strength, dtype=bool)
    np.put_along_axis(keep, order, True, axis=1)
    keep |= keep.T
    return np.where(keep, strength, 0.0)


def _ward(rows: np.ndarray) -> list[int]:
    """A group number per row: Ward's agglomerative clustering cut at the finest merge
    distance from :data:`CUT_MIN` that leaves at most :data:`MAX_ALONE` of the rows alone,
    else at :data:`CUT` (scipy's ``linkage`` is deterministic for a given order of rows).

    The cut follows the window: where its items pair off closely it is cut finely (the
    sub-fields of one field), where they are spread it is cut coarsely; it stops where
    finer topics would leave items with no topic."""
    from scipy.cluster.hierarchy import fcluster, linkage  # here: `hermes serve` lists tools without it

    tree = linkage(rows, method="ward")
    for height in sorted({float(h) for h in tree[:, 2] if CUT_MIN <= h < CUT}):
        parts = [int(c) for c in fcluster(tree, t=height, criterion="distance")]
        size = Counter(parts)
        if sum(size[c] < 2 for c in parts) <= MAX_ALONE * len(parts):
            return parts
    return [int(c) for c in fcluster(tree, t=CUT, criterion="distance")]


def _apart(parts: list[int], related: np.ndarray) -> list[int]:
    """``parts`` with each group cut where its items are not related (:func:`_related`)."""
    out = list(parts)
    next_id = max(parts, default=0) + 1
    for members in _members(parts):
        for component in _components(related[np.ix_(members, members)])[1:]:
            for m in component:
                out[members[m]] = next_id
            next_id += 1
    return out


def _components(adjacent: np.ndarray) -> list[list[int]]:
    """Connected components of a boolean adjacency matrix, each sorted, by first node."""
    seen, out = set(), []
    for start in range(len(adjacent)):
        if start in seen:
            continue
        stack, part = [start], []
        seen.add(start)
        while stack:
            node = stack.pop()
            part.append(node)
            for nxt in np.flatnonzero(adjacent[node]).tolist():
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        out.append(sorted(part))
    return out


def _alone(parts: list[int]) -> list[int]:
    """``parts`` with the items alone in their group marked -1 (no topic)."""
    size = Counter(parts)
    return [-1 if size[c] < 2 else c for c in parts]


def _settle(strength: np.ndarray, parts: list[int]) -> list[int]:
    """Move each item (not one marked -1) to the topic whose items it links to most
    strongly on average, in item order, until nothing moves: the seed's rule that an item
    sits where its overlap is strongest. The mean, not the sum, so a large topic has no
    pull of its own. Ties keep the item where it is, else go to the lower number."""
    parts = list(parts)
    for _ in range(ROUNDS):
        moved = False
        for i in range(len(parts)):
            if parts[i] < 0:
                continue
            size = Counter(parts[j] for j in range(len(parts)) if j != i)
            into: dict[int, float] = {}
            for j in np.flatnonzero(strength[i] > 0).tolist():
                if parts[j] >= 0:
                    into[parts[j]] = into.get(parts[j], 0.0) + float(strength[i, j])
            if not into:
                continue
            into = {c: w / size[c] for c, w in into.items()}
            best = min(into, key=lambda c: (-into[c], c != parts[i], c))
            if into[best] > into.get(parts[i], 0.0) + 1e-12:
                parts[i] = best
                moved = True
        if not moved:
            break
    return _alone(parts)


def _settle_spread(rows: np.ndarray, related: np.ndarray, parts: list[int]) -> list[int]:
    """Move each item (not one marked -1) to the topic it lies closest to as Ward's
    clustering measures closeness, in item order, until nothing moves: the seed's rule that
    an item sits where its overlap is strongest. An item's cost in a topic of ``n`` other
    items is ``n / (n + 1)`` times its squared distance to their centre (what it adds to
    the topic's spread); it moves when another topic whose items are all related to it
    (:func:`_related`) costs less than its own. The size factor keeps a close pair a pair:
    an item leaves its one partner only for a topic it lies closer to than to that
    partner. Ties keep the item where it is, else go to the lower number."""
    parts = list(parts)
    for _ in range(ROUNDS):
        moved = False
        for i in range(len(parts)):
            if parts[i] < 0:
                continue
            groups: dict[int, list[int]] = {}
            for j, c in enumerate(parts):
                if c >= 0 and j != i:
                    groups.setdefault(c, []).append(j)
            if parts[i] not in groups:
                continue
            cost = {
                c: len(js) / (len(js) + 1) * float(np.sum((rows[i] - rows[js].mean(axis=0)) ** 2))
                for c, js in groups.items()
                if c == parts[i] or related[i, js].all()
            }
            best = min(cost, key=lambda c: (cost[c], c != parts[i], c))
            if cost[best] < cost[parts[i]] - 1e-12:
                parts[i] = best
                moved = True
        if not moved:
            break
    return _alone(parts)


def _members(parts: list[int]) -> list[list[int]]:
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(parts):
        groups.setdefault(c, []).append(i)
    return list(groups.values())


def _topic(
    graph: TagGraph,
    items: list[WindowItem],
    keys: list[dict[str, str]],
    df: Counter,
    n_window: int,
    distinct: bool = False,
) -> Topic:
    inside = Counter(t for s in keys for t in s)
    names = {t: n for s in keys for t, n in s.items()}
    matched = {item.id: list(s.values()) for item, s in zip(items, keys, strict=True)}
    ranked = topic_labels.most_telling(inside, df, n_window)
    naming = topic_labels.weigh(ranked, inside, df, n_window, lambda t: topic_labels.rarity(graph, t))
    field = topic_labels.field_tags(graph, inside, df, n_window, len(keys))
    chosen = topic_labels.label(naming, keys, field, distinct)
    shown = [names[t] for t in ranked if inside[t] > 1][:5] or [names[t] for t in chosen]
    return Topic(" · ".join(names[t] for t in chosen), tuple(shown), tuple(i.id for i in items), matched)


def in_archive(vectors: dict[int, np.ndarray], archive_ids: np.ndarray, product, rows) -> dict[int, np.ndarray]:
    """``vectors`` (item id -> vector) each blended with the mean of its
    :data:`ARCHIVE_NEIGHBOURS` nearest items of the archive other than itself
    (:data:`ARCHIVE_BLEND`; less when their mean cosine to it is under
    :data:`ARCHIVE_CLOSE`, none at 0), so an item that nothing in the archive is like
    keeps its own vector: ``archive_ids`` gives the item id of each archive row,
    ``product(w)`` the ``(len(w), rows)`` dot products of unit rows ``w`` with every
    archive row, ``rows(indices)`` those rows' vectors. Ties go to the lower item id, so
    the result does not depend on the archive's row order."""
    keys = sorted(vectors)
    archive_ids = np.asarray(archive_ids, dtype=np.int64)
    k = ARCHIVE_NEIGHBOURS
    if not ARCHIVE_BLEND or not keys or len(archive_ids) < max(ARCHIVE_MIN, k + 2):
        return vectors
    if len({len(vectors[i]) for i in keys}) > 1:
        return vectors
    own = _unit(np.stack([vectors[i] for i in keys]).astype(np.float64))
    sims = product(own)  # (items, archive rows), as the matrix gives it (float32)
    take = min(len(archive_ids) - 1, 4 * k)
    out = dict(vectors)
    for r, item in enumerate(keys):
        row = np.array(sims[r], dtype=np.float64)  # one row at a time: a large archive's
        row[archive_ids == item] = -np.inf  # (items × rows) is never float64 whole
        near = np.argpartition(-row, take)[:take]
        near = sorted(near.tolist(), key=lambda j: (-row[j], archive_ids[j]))[:k]
        around = _unit(_unit(np.asarray(rows(np.array(near)), dtype=np.float64)).mean(axis=0, keepdims=True))[0]
        share = ARCHIVE_BLEND * min(1.0, max(0.0, float(np.mean(row[near]))) / ARCHIVE_CLOSE)
        out[item] = (1 - share) * own[r] + share * around
    return out


def vectors_of(db, item_ids) -> dict[int, np.ndarray]:
    """The stored embedding of each of ``item_ids`` that has one (all of one model: the
    ranking's, since the digest's items are the ranking's)."""
    ids = [int(i) for i in item_ids]
    out: dict[int, np.ndarray] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for item_id, blob in db.execute(
            f"SELECT id, embedding FROM items WHERE id IN ({marks}) AND embedding IS NOT NULL", chunk
        ):
            out[item_id] = from_blob(blob)
    return out
