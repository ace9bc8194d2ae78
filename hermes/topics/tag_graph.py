"""The tag graph: tags as nodes, co-occurrence on items as edge weights, Louvain topics.

- A tag on a single item says nothing about how topics relate, so it never becomes a node;
  the number left out is reported (``left_out``).
- A tag on most of one feed's items names that feed, not a subject (link boilerplate such as
  "url" and "comments", the feed's own name, a category every item carries): it is left out
  of that feed's items (``feed_tags``), so it neither links their topics nor names one.
- Communities are found per connected component, each component relabelled to local
  integers in sorted-tag order and run through networkx's Louvain with a fixed seed. The
  result therefore depends only on that component's tags and weights: it is identical
  across calls and processes (no string hashing is involved), and adding items whose tags
  do not touch a component leaves that component's communities exactly as they were.
- A community's key is its most central tag (weighted degree inside the community), ties
  broken by name; its label names it the way a person would: its three most central
  readable tags ("jwst spectroscopy · metallicity · reionization"), skipping category codes
  such as ``astro-ph.ga`` while there are phrases to show, a tag another label tag
  already contains, and a tag of words that cannot name a topic ("just", "respect", "notes":
  :func:`hermes.text.language.names_no_topic`) unless nothing else names the community.
- An item joins the community its tags say the most about (:meth:`TagGraph.assign`): each
  matched tag weighs its information content over the archive, so one distinctive tag
  outweighs generic ones ("language model", "dataset") that hubs of the graph carry.
- The graph is cached in memory and persisted in ``kg_cache`` (the core's migration
  ``core:m007_tag_graph_cache``), keyed by a fingerprint of the items table, so it is
  rebuilt only when items changed.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sqlite3
import threading
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

import numpy as np
import sqlite_utils

from hermes.ranking.matrix import db_file
from hermes.storage.records import now_iso
from hermes.storage.transactions import write_transaction
from hermes.text.language import names_no_topic
from hermes.text.tags import normalize_tag

log = logging.getLogger(__name__)

#: Bump when the graph construction changes: old persisted graphs are then ignored.
# 6: communities carry each tag's item count (``counts``), read by ``assign``
# 7: a label leaves out tags of words that name no topic ("qcd · chiral · just")
# 8: a tag on most of a feed's items names the feed and is left out of its items
VERSION = 8
#: tags named in a community's label
LABEL_TAGS = 3
_CODE = re.compile(r"[a-z]{1,8}(?:-[a-z]{1,5})?\.[a-z-]{1,10}")  # cond-mat.stat-mech
_ARCHIVES = {
    "astro-ph",
    "cond-mat",
    "gr-qc",
    "hep-ex",
    "hep-lat",
    "hep-ph",
    "hep-th",
    "math-ph",
    "nucl-ex",
    "nucl-th",
    "quant-ph",
    "q-bio",
    "q-fin",
    "nlin",
    "chao-dyn",
    "adap-org",
}
SEED = 42
RESOLUTION = 1.0
MIN_ITEMS = 2  # a tag must occur on this many items to become a node
#: a tag on more than this share of one feed's items names the feed ...
FEED_SHARE = 0.5
#: ... once the feed has this many tagged items (in a smaller one, a shared tag is as likely
#: a subject its few items share)
FEED_MIN_ITEMS = 10
#: a feed's tag kept on this share of its items is looked for in their text ...
FEED_CANDIDATE_SHARE = 0.1
#: ... in the text of this many of them
FEED_SAMPLE = 50
CACHE_TABLE = "kg_cache"


def is_code(tag: str) -> bool:
    """A category code ("astro-ph.ga", "cs.lg", "hep-th") rather than a phrase."""
    return tag in _ARCHIVES or bool(_CODE.fullmatch(tag))


def _repeats(name: str, chosen: str) -> bool:
    """``name`` shares half or more of its words (or ``chosen``'s, the fewer) with a
    ``chosen`` label tag it does not contain, both being phrases of two words or more."""
    words, other = (set(re.findall(r"[\w-]+", n.casefold())) for n in (name, chosen))
    fewer = min(len(words), len(other))
    return fewer > 1 and chosen.casefold() not in name.casefold() and 2 * len(words & other) >= fewer


def label_of(names: list[str], most: int = LABEL_TAGS) -> str:
    """A readable name from a community's display names (most central first): up to
    ``most`` of them joined by " · ", phrases before codes; of two names where one contains
    the other ("quantum key", "quantum key distribution") the longer one, in the place of
    the more central; a name that repeats half or more of a chosen one's words ("active
    acoustic emission" after "acoustic emission source") is skipped: it names nothing new.
    A name made of words that cannot name a topic ("just", "respect", "notes" — a keyphrase
    of an archive tagged before the tagger knew them, or a feed's category) is shown only
    when the community has no other name."""
    empty = {n for n in names if names_no_topic(n)}
    readable = [n for n in names if n not in empty and not is_code(n.casefold())]
    codes = [n for n in names if n not in empty and is_code(n.casefold())]
    chosen: list[str] = []
    for name in readable + codes if readable or codes else [n for n in names if n in empty]:
        if len(chosen) == most:
            break
        low = name.casefold()
        if any(low in c.casefold() for c in chosen):
            continue
        if any(_repeats(name, c) for c in chosen):
            continue
        inside = [k for k, c in enumerate(chosen) if c.casefold() in low]
        if inside:
            chosen[inside[0]] = name
            chosen = [c for k, c in enumerate(chosen) if k not in inside[1:]]
        else:
            chosen.append(name)
    return " · ".join(chosen)


@dataclass(frozen=True)
class Community:
    label: str  # a readable name: its most central tags (see :func:`label_of`)
    tags: tuple[str, ...]  # tag keys, most central first (ties by name)
    names: tuple[str, ...]  # display spellings, aligned with ``tags``
    centrality: tuple[float, ...]  # weighted degree inside the community, aligned
    counts: tuple[int, ...]  # items carrying each tag (its document frequency), aligned
    n_items: int  # items carrying at least one of the community's tags

    @property
    def key(self) -> str:
        return self.tags[0]

    @property
    def size(self) -> int:
        return len(self.tags)


@dataclass
class TagGraph:
    fingerprint: str
    communities: list[Community]  # largest first, then by label
    n_items: int  # items in the table
    n_items_tagged: int  # items with at least one tag
    n_tags: int  # distinct tag keys
    n_nodes: int  # tags on >= MIN_ITEMS items
    n_edges: int
    left_out: int  # tags that occur on one item only (not nodes)
    #: feed id (as text: JSON keys) -> the tag keys that name that feed (see FEED_SHARE)
    feed_tags: dict[str, list[str]] = field(default_factory=dict)
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _count: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _within: dict[str, int] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self._index = {t: k for k, c in enumerate(self.communities) for t in c.tags}
        self._count = {t: n for c in self.communities for t, n in zip(c.tags, c.counts, strict=True)}
        self._feed = {f: frozenset(tags) for f, tags in self.feed_tags.items()}

    def names_feed(self, tag: str, feed_id) -> bool:
        """Whether ``tag`` is on most of feed ``feed_id``'s items: it names the feed there."""
        return normalize_tag(tag) in self._feed.get(str(feed_id), ())

    def subject_tags(self, tags, feed_id=None) -> list[str]:
        """``tags`` without those that name the item's feed (see :meth:`names_feed`), nor
        the pieces of one ("orbital hosting" of the sponsor line "orbital hosting
        service", kept on a few items only)."""
        named = self._feed.get(str(feed_id), ())
        padded = [f" {n} " for n in named]
        return [t for t in tags or [] if isinstance(t, str) and not any(f" {normalize_tag(t)} " in n for n in padded)]

    def count(self, tag: str) -> int:
        """Items of the archive carrying ``tag`` (its document frequency); 0 when it is not
        a node."""
        return self._count.get(normalize_tag(tag), 0)

    def within(self, tag: str) -> int:
        """Items of the archive carrying ``tag`` or a tag that contains it word for word
        ("transition" in "phase transition", "quantum phase transition"), summed over those
        tags (an item carrying two is counted twice), at most :attr:`n_items_tagged`; 0 when
        no node contains it. How common a word is in the archive: the tagger proposes
        "transition" alone on a few items and inside a phrase on many more, so its
        :meth:`count` makes a word that a quarter of a cond-mat listing writes look rare."""
        if self._within is None:  # built at the first call: only a topic's name reads it
            within: Counter = Counter()
            for tag_key, n in self._count.items():
                words = tag_key.split(" ")
                runs = {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}
                for run in runs:
                    within[run] += n
            self._within = dict(within)
        return min(self._within.get(normalize_tag(tag), 0), self.n_items_tagged)

    def community_of(self, tag: str) -> Community | None:
        k = self._index.get(normalize_tag(tag))
        return None if k is None else self.communities[k]

    def information(self, tag: str) -> float:
        """How much carrying ``tag`` says about an item: ``log(n_items_tagged / items
        carrying it)`` (its inverse document frequency), 0.0 for a tag that is not a node.

        Why this weight: it is the tag's self-information, the surprise of finding it on an
        item of this archive. Evidence from independent tags adds up in these units, so a
        community's score (the sum over the tags it shares with the item) measures how much
        the item's tags point at it. A hub such as "language model", on a third of the
        items, is worth about 1.1; "sparse autoencoder", on 1 in 50, about 3.9 and so
        outweighs two hubs together. The archive, not the window, is counted: the
        communities are the archive's, and an item must not change topic from one week to
        the next because the window's mix changed."""
        count = self._count.get(normalize_tag(tag))
        return math.log(self.n_items_tagged / count) if count else 0.0

    def assign(self, tags, feed_id=None) -> tuple[Community | None, list[str]]:
        """The community the item's ``tags`` say the most about, and the tags it matched;
        ``(None, [])`` when no tag is a node. Tags naming the item's feed ``feed_id`` do not
        count (:meth:`names_feed`).

        A community's score is the summed :meth:`information` of the tags it shares with
        the item, so an item goes where its distinctive tags are rather than where most of
        its tags (often generic ones) are. Ties: more shared tags, then the smaller key;
        any shared tag keeps a community in the running (a tag on every item weighs 0), so
        an item with a node tag always lands somewhere."""
        shared: dict[int, list[str]] = defaultdict(list)
        seen: set[str] = set()
        for t in self.subject_tags(tags, feed_id):
            key = normalize_tag(t)
            k = self._index.get(key)
            if k is not None and key not in seen:
                seen.add(key)
                shared[k].append(t)
        if not shared:
            return None, []
        score = {k: self._evidence(found) for k, found in shared.items()}
        best = min(shared, key=lambda k: (-score[k], -len(shared[k]), self.communities[k].key))
        return self.communities[best], shared[best]

    def _evidence(self, tags: list[str]) -> float:
        """The summed :meth:`information` of ``tags`` (one community's share of an item),
        leaving out a tag whose words another of them contains: "long gamma-ray" beside
        "long gamma-ray burst" is implied by it (the keyphrase tagger proposes both from the
        same words), so it tells nothing more and must not count the phrase twice."""
        keys = [normalize_tag(t) for t in tags]
        kept = [k for k in keys if not any(o != k and f" {k} " in f" {o} " for o in keys)]
        # fsum: the exact sum whatever order the item lists its tags in, so equal evidence
        # ties exactly and the tie-break decides
        return math.fsum(self.information(k) for k in kept)

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("_index", None)
        data.pop("_count", None)
        data.pop("_within", None)
        data.pop("_feed", None)
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> TagGraph:
        data = json.loads(text)
        data["communities"] = [
            Community(
                label=c["label"],
                tags=tuple(c["tags"]),
                names=tuple(c["names"]),
                centrality=tuple(c["centrality"]),
                counts=tuple(c["counts"]),
                n_items=c["n_items"],
            )
            for c in data["communities"]
        ]
        return cls(**data)


# --- fingerprint and caches -----------------------------------------------------------------


def fingerprint(db: sqlite_utils.Database) -> str:
    """Changes whenever items are added, deleted or (re-)embedded: (max id, count, max
    embed_seq). Two indexed aggregates and one count: cheap enough to check on every call."""
    # Separate statements: each aggregate alone is answered from the rowid or an index.
    max_id = db.execute("SELECT max(id) FROM items").fetchone()[0]
    count = db.execute("SELECT count(*) FROM items").fetchone()[0]
    seq = db.execute("SELECT max(embed_seq) FROM items").fetchone()[0]
    return f"v{VERSION}:{max_id or 0}:{count}:{seq or 0}"


_MEMORY: dict[str, TagGraph] = {}
_LOCK = threading.Lock()


def clear_cache() -> None:
    with _LOCK:
        _MEMORY.clear()


def _load_persisted(db: sqlite_utils.Database, fp: str) -> TagGraph | None:
    row = db.execute(f"SELECT payload FROM {CACHE_TABLE} WHERE fingerprint = ?", [fp]).fetchone()
    if row is None:
        return None
    try:
        return TagGraph.from_json(row[0])
    except (ValueError, KeyError, TypeError):
        log.warning("ignoring an unreadable persisted tag graph")
        return None


def _persist(db: sqlite_utils.Database, graph: TagGraph) -> None:
    try:
        with write_transaction(db):
            # One row: only the graph of the current items is worth keeping.
            db.execute(f"DELETE FROM {CACHE_TABLE}")
            db.execute(
                f"INSERT INTO {CACHE_TABLE} (fingerprint, payload, built) VALUES (?, ?, ?)",
                [graph.fingerprint, graph.to_json(), now_iso()],
            )
    except sqlite3.OperationalError as exc:
        # A read-only file or a long lock: the graph is still correct, only not shared with
        # the next process.
        log.info("tag graph not persisted: %s", exc)


def get_graph(db: sqlite_utils.Database) -> TagGraph:
    """The tag graph of the current items: from memory, else the persisted copy, else built
    (and persisted)."""
    fp = fingerprint(db)
    key = db_file(db)
    with _LOCK:
        graph = _MEMORY.get(key)
        if graph is not None and graph.fingerprint == fp:
            return graph
    graph = _load_persisted(db, fp)
    if graph is None:
        graph = build_graph(db, fp)
        _persist(db, graph)
    with _LOCK:
        _MEMORY[key] = graph
    return graph


# --- construction ---------------------------------------------------------------------------


def build_graph(db: sqlite_utils.Database, fp: str | None = None) -> TagGraph:
    """Build the graph and its communities from the items table (no cache involved)."""
    fp = fp or fingerprint(db)
    n_items = db.execute("SELECT count(*) FROM items").fetchone()[0]
    item_keys: list[list[str]] = []
    key_of: dict[str, str] = {}  # raw spelling -> key, normalised once per distinct string
    spelled: Counter[str] = Counter()  # how often each raw spelling names a tag of an item
    rows = []
    for feed_id, raw in db.execute("SELECT feed_id, tags FROM items WHERE tags IS NOT NULL AND tags != '[]'"):
        try:
            tags = json.loads(raw)
        except ValueError:
            continue
        if isinstance(tags, list):
            rows.append((feed_id, tags))
    counted = _feed_counts(rows)
    feed_tags = _feed_tags(*counted)
    for feed, tags in _text_feed_tags(db, *counted).items():
        feed_tags.setdefault(feed, set()).update(tags)
    for feed_id, tags in rows:
        named = feed_tags.get(str(feed_id), ())
        keys: dict[str, str] = {}
        for t in tags:
            if not isinstance(t, str):
                continue
            k = key_of.get(t)
            if k is None:
                k = key_of[t] = normalize_tag(t)
            if k and k not in keys and k not in named:
                keys[k] = t
        if keys:
            item_keys.append(list(keys))
            spelled.update(keys.values())
    freq: Counter[str] = Counter(k for keys in item_keys for k in keys)
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for t, count in spelled.items():
        spellings[key_of[t]][" ".join(t.split())] += count

    nodes = sorted(k for k, f in freq.items() if f >= MIN_ITEMS)
    node_id = {k: i for i, k in enumerate(nodes)}
    per_item = [sorted(node_id[k] for k in keys if k in node_id) for keys in item_keys]
    a, b, w = _cooccurrence(per_item, len(nodes))
    membership = _communities(len(nodes), a, b, w)  # node -> community number

    # Weighted degree of each node inside its own community (its centrality there).
    inside = membership[a] == membership[b] if len(a) else np.zeros(0, dtype=bool)
    central = np.zeros(len(nodes), dtype=np.float64)
    np.add.at(central, a[inside], w[inside])
    np.add.at(central, b[inside], w[inside])

    members: dict[int, list[int]] = defaultdict(list)
    for node, c in enumerate(membership.tolist()):
        members[c].append(node)
    n_items_of: Counter[int] = Counter()
    for ids in per_item:
        n_items_of.update({int(membership[i]) for i in ids})

    def display(key: str) -> str:
        counts = spellings[key]
        return min(counts, key=lambda s: (-counts[s], s))

    communities = []
    for c, node_list in members.items():
        ordered = sorted(node_list, key=lambda i: (-central[i], nodes[i]))
        names = [display(nodes[i]) for i in ordered]
        communities.append(
            Community(
                label=label_of(names),
                tags=tuple(nodes[i] for i in ordered),
                names=tuple(names),
                centrality=tuple(float(central[i]) for i in ordered),
                counts=tuple(freq[nodes[i]] for i in ordered),
                n_items=n_items_of[c],
            )
        )
    communities.sort(key=lambda c: (-c.size, c.key))
    return TagGraph(
        fingerprint=fp,
        communities=communities,
        n_items=n_items,
        n_items_tagged=len(item_keys),
        n_tags=len(freq),
        n_nodes=len(nodes),
        n_edges=int(len(a)),
        left_out=sum(1 for f in freq.values() if f < MIN_ITEMS),
        feed_tags={f: sorted(tags) for f, tags in feed_tags.items()},
    )


def _feed_counts(rows) -> tuple[Counter, dict[str, Counter]]:
    """Per feed (its id as text): its tagged items, and how many of them carry each tag key.

    Items with no feed (a library import, a page saved by hand) are left out: they are not
    one feed, so no tag wraps them all, and a tag they share is a subject."""
    items: Counter[str] = Counter()
    carrying: dict[str, Counter[str]] = defaultdict(Counter)
    key_of: dict[str, str] = {}
    for feed_id, tags in rows:
        if feed_id is None:
            continue
        feed = str(feed_id)
        items[feed] += 1
        keys = set()
        for t in tags:
            if isinstance(t, str):
                k = key_of.get(t)
                if k is None:
                    k = key_of[t] = normalize_tag(t)
                keys.add(k)
        keys.discard("")
        carrying[feed].update(keys)
    return items, carrying


def _text_feed_tags(db: sqlite_utils.Database, items: Counter, carrying: dict[str, Counter]) -> dict[str, set[str]]:
    """Per feed, the tags whose words are in the text of more than :data:`FEED_SHARE` of
    its items (read on the first :data:`FEED_SAMPLE` of them): a sponsor line, a byline, a
    "Comments URL" line. The tagger keeps only an item's best few phrases, so such a line
    is kept as a tag on some items and not others and stays under the share when kept tags
    are counted (:func:`_feed_tags`); its text is on every item. Only tags kept on at least
    :data:`FEED_CANDIDATE_SHARE` of a feed's items are looked for."""
    out: dict[str, set[str]] = {}
    for feed, n in items.items():
        if n < FEED_MIN_ITEMS:
            continue
        least = max(MIN_ITEMS, FEED_CANDIDATE_SHARE * n)
        wanted = [t for t, c in carrying[feed].items() if c >= least]
        if not wanted:
            continue
        texts = [
            " ".join(f"{title or ''} {summary or ''}".split()).casefold()
            for title, summary in db.execute(
                "SELECT title, summary FROM items WHERE feed_id = ? ORDER BY id LIMIT ?", [int(feed), FEED_SAMPLE]
            )
        ]
        found = {
            t
            for t in wanted
            if sum(1 for text in texts if re.search(rf"(?<!\w){re.escape(t)}", text)) > FEED_SHARE * len(texts)
        }
        if found:
            out[feed] = found
    return out


def _feed_tags(items: Counter, carrying: dict[str, Counter]) -> dict[str, set[str]]:
    """Per feed (its id as text), the tag keys on more than :data:`FEED_SHARE` of its tagged
    items, for feeds with at least :data:`FEED_MIN_ITEMS` of them. Such a tag is what the
    feed wraps around every item ("Article URL … Comments URL … Points") or what the feed
    is (its name, its one category): it tells the feed's items apart from nothing."""
    return {
        feed: found
        for feed, n in items.items()
        if n >= FEED_MIN_ITEMS
        if (found := {t for t, c in carrying[feed].items() if c > FEED_SHARE * n})
    }


def _cooccurrence(per_item: list[list[int]], n_nodes: int):
    """Edges ``(a, b, weight)`` with ``a < b``, sorted, weight = items carrying both tags.

    Vectorised per tag count: items with ``k`` node tags form a ``(n, k)`` array whose
    upper-triangle column pairs are that group's edges."""
    by_len: dict[int, list[list[int]]] = defaultdict(list)
    for ids in per_item:
        if len(ids) >= 2:
            by_len[len(ids)].append(ids)
    codes = []
    for k, group in by_len.items():
        arr = np.asarray(group, dtype=np.int64)
        i, j = np.triu_indices(k, 1)
        codes.append((arr[:, i] * n_nodes + arr[:, j]).ravel())
    if not codes:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    pairs, weights = np.unique(np.concatenate(codes), return_counts=True)
    return pairs // n_nodes, pairs % n_nodes, weights.astype(np.int64)


def _communities(n_nodes: int, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Community number per node: Louvain run separately on each connected component."""
    import networkx as nx  # here, not at module level: `hermes serve` lists tools without it

    membership = np.full(n_nodes, -1, dtype=np.int64)
    if n_nodes == 0:
        return membership
    components = _components(n_nodes, a, b)
    comp_of = np.empty(n_nodes, dtype=np.int64)
    for ci, comp in enumerate(components):
        comp_of[comp] = ci
    # Edges grouped by component; np.unique sorted them, and a stable sort keeps that order.
    edge_comp = comp_of[a] if len(a) else np.zeros(0, dtype=np.int64)
    order = np.argsort(edge_comp, kind="stable")
    bounds = np.searchsorted(edge_comp[order], np.arange(len(components) + 1))
    next_id = 0
    for ci, comp in enumerate(components):
        if len(comp) <= 2:  # one node, or two joined by an edge: one community
            membership[comp] = next_id
            next_id += 1
            continue
        sel = order[bounds[ci] : bounds[ci + 1]]
        local = {node: i for i, node in enumerate(comp)}
        sub = nx.Graph()
        sub.add_nodes_from(range(len(comp)))
        sub.add_weighted_edges_from(
            (local[x], local[y], wt) for x, y, wt in zip(a[sel].tolist(), b[sel].tolist(), w[sel].tolist(), strict=True)
        )
        parts = nx.community.louvain_communities(sub, weight="weight", resolution=RESOLUTION, seed=SEED)
        for part in sorted((sorted(p) for p in parts), key=lambda p: p[0]):
            membership[[comp[i] for i in part]] = next_id
            next_id += 1
    return membership


def _components(n_nodes: int, a: np.ndarray, b: np.ndarray) -> list[list[int]]:
    """Connected components as sorted node lists, ordered by their smallest node
    (union-find: cheaper than building a whole networkx graph only to split it)."""
    parent = list(range(n_nodes))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        rx, ry = root(x), root(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)
    groups: dict[int, list[int]] = defaultdict(list)
    for node in range(n_nodes):  # ascending: every list comes out sorted
        groups[root(node)].append(node)
    return sorted(groups.values(), key=lambda c: c[0])
