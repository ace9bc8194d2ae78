"""The name of a digest topic: the tags that set its items apart from the rest of the window.

A heading is read at a glance, so it names what the topic's items share and the rest of the
window does not: "galaxy" over one topic of an astronomy listing names the listing, and
"big live live" or "news.ycombinator.com" name nothing (:mod:`hermes.topics.window_topics` makes
the topics; this module only names them). Nor does a word the field writes everywhere
("interaction" over a cond-mat topic), however few items carry it alone: a name is carried by
the topic's items many times more often than by the archive's, a tag counted with the
phrases that contain it (:func:`lift`).
"""

from __future__ import annotations

import math
import re
from collections import Counter

from hermes.topics.tag_graph import LABEL_TAGS, TagGraph, is_code

#: a label tag carried by more than this share of the window names the window, not a topic
FIELD_SHARE = 0.3
#: ... and so does one carried by more than this share of the archive ("galaxy" and "star",
#: each on a sixth of an astronomy listing; in a mixed archive "star" names astronomy)
ARCHIVE_SHARE = 0.1
#: ... and one whose share of the topic's items is less than this many times its share of
#: the archive, counting the items of the tags that contain it (:func:`lift`): "interaction",
#: "dynamics", "lattice" over topics of a cond-mat listing. Chosen on half A of
#: benchmarks/topic_label_lift.py (means over its five archives: generic words 1.9% of the
#: label tags before, 1.3% at 4, 0.45% at 8 with the items a label covers 96.1% -> 95.3%,
#: 0.34% at 10 with 94.6% covered)
MIN_LIFT = 8.0


def most_telling(inside: Counter, df: Counter, n_window: int) -> list[str]:
    """The topic's tag keys (``inside``: how many of its items carry each), most telling
    first (:func:`telling`), ties by name."""
    return sorted(inside, key=lambda t: (-telling(t, inside, df, n_window), t))


def field_tags(graph: TagGraph, inside: Counter, df: Counter, n_window: int, n_topic: int) -> set[str]:
    """The topic's tags that name the window or the archive rather than the topic
    (:data:`FIELD_SHARE`, :data:`ARCHIVE_SHARE`, :data:`MIN_LIFT`); each share only counts
    once the window (the archive) has ten items, the lift once the archive has
    :data:`MIN_LIFT` times the topic's ``n_topic`` items (in a smaller one no tag reaches
    it)."""
    lifts = graph.n_items_tagged >= MIN_LIFT * n_topic
    return {
        t
        for t in inside
        if (df[t] > FIELD_SHARE * n_window and n_window >= 10)
        or (graph.count(t) > ARCHIVE_SHARE * graph.n_items_tagged and graph.n_items_tagged >= 10)
        or (lifts and lift(t, inside, n_topic, graph) < MIN_LIFT)
    }


def lift(tag: str, inside: Counter, n_topic: int, graph: TagGraph) -> float:
    """How many times more often the topic's ``n_topic`` items carry ``tag`` than the
    archive's items carry it or a tag containing it (:meth:`TagGraph.within`). What a
    reader learns from a name is what sets the topic apart from the rest of the archive: a
    word the field writes everywhere ("transition", inside "phase transition" on a dozen
    items of a cond-mat listing) tells less, however few items carry it alone, than a
    phrase two of the topic's three items share and three others of the archive carry."""
    carrying = max(graph.within(tag), inside[tag], 1)
    return (inside[tag] / n_topic) / (carrying / max(graph.n_items_tagged, 1))


def rarity(graph: TagGraph, tag: str) -> float:
    """How rare ``tag`` is in the archive, 0..1: its information over the items carrying it
    or a tag containing it (:meth:`TagGraph.within`), over the most an item's tag can have;
    1.0 for a tag no node contains."""
    carrying = graph.within(tag)
    top = math.log(max(graph.n_items_tagged, 2))
    return math.log(graph.n_items_tagged / carrying) / top if carrying else 1.0


def telling(tag: str, inside: Counter, df: Counter, n_window: int) -> float:
    """How much ``tag`` sets a topic's items apart from the rest of the window: the items
    of the topic carrying it times its rarity in the window (c-TF-IDF)."""
    return inside[tag] * math.log(1 + n_window / df[tag])


_WORDS = re.compile(r"[\w-]+")
_PARTS = re.compile(r"[^\W_]+")  # words and the pieces of hyphenated ones
_ADDRESS = re.compile(r"^(?:https?|www)\b|\w\.(?:com|org|net|io|co|uk|fm|tv)\b|https?://")
#: endings of a lone word that qualifies rather than names ("ferromagnetic", "conjectured",
#: "mimicking", "arbitrariness", "hadronic"), and of a phrase's last word that leaves it
#: a fragment of a sentence ("dwarf located", "recently")
_QUALIFIER = re.compile(r"(?:ed|ing|ly|ous|ive|ic|ical|al|ful|less|able|ible|ness|ary)$")
_DANGLING = re.compile(r"(?:ed|ly)$")
#: a lone word this short or shorter names nothing at a glance ("ds", "mu")
_SHORT = 2
#: a phrase of several words weighs this much more than one word as a name: "gauge
#: theory" tells a reader more than "singularity" carried by as many items
PHRASE_BONUS = 1.5


def weigh(ranked: list[str], inside: Counter, df: Counter, n_window: int, rarity=None) -> list[str]:
    """``ranked`` re-ordered for naming: :func:`telling` times :data:`PHRASE_BONUS` for a
    phrase of several words, times ``0.5 + rarity(tag) / 2`` (``rarity``: how rare it is in
    the archive, 0..1, :func:`rarity`) when given, ties keeping ``ranked``'s order."""

    def score(t: str) -> float:
        phrase = PHRASE_BONUS if len(_PARTS.findall(t)) > 1 else 1.0
        return telling(t, inside, df, n_window) * phrase * (0.5 + 0.5 * rarity(t) if rarity else 1.0)

    order = {t: k for k, t in enumerate(ranked)}
    return sorted(ranked, key=lambda t: (-score(t), order[t]))


def kind(tag: str) -> int:
    """How well ``tag`` can name a topic: 0 a keyphrase; 1 a lone qualifying word
    ("ferromagnetic", "having"), a fragment ("dwarf located") or a lone word of two
    letters; 2 a category code ("hep-th"); 3 no name at all (a web address, a tag that
    repeats a word of its own: "big live live")."""
    found = _WORDS.findall(tag)
    parts = _PARTS.findall(tag)
    if not parts or _ADDRESS.search(tag) or len(set(found)) < len(found) or _self_repeat(parts):
        return 3
    if is_code(tag):
        return 2
    if len(found) == 1 and (_QUALIFIER.search(found[0]) or len(found[0]) <= _SHORT):
        return 1
    if len(found) > 1 and _DANGLING.search(found[-1]):
        return 1
    return 0


def label(ranked: list[str], keys: list[dict[str, str]], field: set[str], distinct: bool = False) -> list[str]:
    """Up to :data:`LABEL_TAGS` tag keys naming a topic, from ``ranked`` (best names
    first): keyphrases its items share, each covering items the chosen ones do not yet
    cover where it can; no ``field`` tag (one that names the window or the archive:
    :data:`FIELD_SHARE`, :data:`ARCHIVE_SHARE`, :data:`MIN_LIFT`) while there is another; no word twice
    across the label, nor two forms of one word ("critical behavior · criticality"); of a
    tag and a longer one containing it ("galaxy · galaxy cluster") the longer; no web
    address. Where the items share no keyphrase, the best keyphrases of single items name
    it (two at most) before a lone qualifying word ("ferromagnetic") or a fragment, and a
    category code ("hep-th") names it only when it has no keyphrase at all. ``distinct``
    (another topic of the window has the same label): one tag more, from any of its
    items, so the two can be told apart."""
    inside = Counter(t for s in keys for t in s)
    small = len(keys) <= LABEL_TAGS
    tiers = [
        [t for t in ranked if kind(t) == 0 and t not in field],
        [t for t in ranked if kind(t) == 1 and t not in field],
        [t for t in ranked if kind(t) == 2 and t not in field],
        [t for t in ranked if kind(t) < 3 and t in field],
    ]
    for pool in tiers:
        shared = [t for t in pool if inside[t] > 1 or small]
        chosen = _cover(shared, keys, LABEL_TAGS) or _cover(pool, keys, 2)
        if chosen and not any(_phrase(t) for t in chosen):
            # lone words only ("decay", "exponent · formalism"): the first of them and the
            # best keyphrases of the topic's items say more
            phrases = [t for t in pool if _phrase(t)]
            if phrases:
                chosen = _cover(phrases, keys, LABEL_TAGS, chosen[:1])
        if chosen and distinct and len(chosen) < LABEL_TAGS:
            chosen = _cover([t for tier in tiers[:2] for t in tier] or pool, keys, len(chosen) + 1, chosen)
        if chosen:
            return chosen
    return []


def _phrase(tag: str) -> bool:
    return len(_WORDS.findall(tag)) > 1


def _cover(pool: list[str], keys: list[dict[str, str]], most: int, start: list[str] | None = None) -> list[str]:
    """Up to ``most`` of ``pool`` (best first) after ``start``, each covering items the
    chosen ones do not yet cover where one can, none repeating a word of another
    (:func:`_new_words`)."""
    chosen: list[str] = list(start or [])
    uncovered = [u for u in (set(s) for s in keys) if not u & set(chosen)]
    while len(chosen) < most:
        fresh = [t for t in pool if t not in chosen and _new_words(t, chosen)]
        if not fresh:
            break
        covering = [t for t in fresh if any(t in u for u in uncovered)]
        best = (covering or fresh)[0]
        chosen = [
            c for c in chosen if not _inside(c, best) and not _initials(_PARTS.findall(c), _PARTS.findall(best))
        ] + [best]
        uncovered = [u for u in uncovered if best not in u]
    return chosen


def _inside(short: str, long: str) -> bool:
    return f" {short} " in f" {long} "


def _same_word(a: str, b: str) -> bool:
    """Two forms of one word: equal, or sharing a beginning of four letters or more that
    is all of the shorter but its last letter, the longer adding at most four
    ("critical" / "criticality", "star" / "stars", "chromosphere" / "chromospheric"; not
    "neutron" / "neutrino")."""
    if a == b:
        return True
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k >= 4 and k >= min(len(a), len(b)) - 1 and max(len(a), len(b)) - k <= 4


def _self_repeat(parts: list[str]) -> bool:
    return any(_same_word(a, b) for i, a in enumerate(parts) for b in parts[i + 1 :])


def _new_words(tag: str, chosen: list[str]) -> bool:
    """``tag`` repeats no word, of its own ("big live live", a fragment of a title) or of a
    chosen tag unless it contains that whole tag (then it replaces it: "galaxy cluster" for
    "galaxy"), nor a form of one ("criticality" after "critical behavior", "spin-dependent"
    after "spin"), nor the initials of a chosen phrase ("lhc" beside "large hadron
    collider"; the phrase replaces its initials), and is no web address
    ("news.ycombinator.com")."""
    if kind(tag) == 3:
        return False
    parts = _PARTS.findall(tag)
    for c in chosen:
        if _inside(c, tag):
            continue
        other = _PARTS.findall(c)
        if any(_same_word(a, b) for a in parts for b in other):
            return False
        if _initials(parts, other):  # the phrase replaces its initials, not the reverse
            return False
    return True


def _initials(short: list[str], long: list[str]) -> bool:
    """``short`` is one word made of the initials of ``long``'s words ("lhc", "large
    hadron collider"): the same name twice."""
    return len(short) == 1 and len(long) > 1 and short[0] == "".join(w[0] for w in long)
