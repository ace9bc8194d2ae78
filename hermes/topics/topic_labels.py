"""The name of a digest topic: the tags that set its items apart from the rest of the window.

A heading is read at a glance, so it names what the topic's items share and the rest of the
window does not: "galaxy" over one topic of an astronomy listing names the listing, and
"big live live" or "news.ycombinator.com" name nothing (:mod:`hermes.topics.window_topics` makes
the topics; this module only names them).
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


def most_telling(inside: Counter, df: Counter, n_window: int) -> list[str]:
    """The topic's tag keys (``inside``: how many of its items carry each), most telling
    first (:func:`telling`), ties by name."""
    return sorted(inside, key=lambda t: (-telling(t, inside, df, n_window), t))


def field_tags(graph: TagGraph, inside: Counter, df: Counter, n_window: int) -> set[str]:
    """The topic's tags that name the window or the archive rather than the topic
    (:data:`FIELD_SHARE`, :data:`ARCHIVE_SHARE`); the window's share only counts once it
    has ten items."""
    return {t for t in inside if (df[t] > FIELD_SHARE * n_window and n_window >= 10)
            or graph.count(t) > ARCHIVE_SHARE * graph.n_items_tagged}


def telling(tag: str, inside: Counter, df: Counter, n_window: int) -> float:
    """How much ``tag`` sets a topic's items apart from the rest of the window: the items
    of the topic carrying it times its rarity in the window (c-TF-IDF)."""
    return inside[tag] * math.log(1 + n_window / df[tag])


_WORDS = re.compile(r"[\w-]+")
_ADDRESS = re.compile(r"^(?:https?|www)\b|\w\.(?:com|org|net|io|co|uk|fm|tv)\b|https?://")


def label(ranked: list[str], keys: list[dict[str, str]], field: set[str]) -> list[str]:
    """Up to :data:`LABEL_TAGS` tag keys naming a topic, from ``ranked`` (most telling
    first): tags its items share before tags of one item, each covering items the chosen
    ones do not yet cover where it can; no ``field`` tag (one that names the window or the
    archive: :data:`FIELD_SHARE`, :data:`ARCHIVE_SHARE`) while others are left; no category
    code while there are phrases; no word twice across the label ("galaxy · galaxy
    cluster" keeps the longer); no web address."""
    inside = Counter(t for s in keys for t in s)
    pool = ([t for t in ranked if t not in field and not is_code(t)]
            + [t for t in ranked if t not in field and is_code(t)]
            + [t for t in ranked if t in field])
    # a tag of one item names that item, not the topic, unless the topic is that small
    shared = [t for t in pool if inside[t] > 1 or len(keys) <= LABEL_TAGS] or pool
    chosen: list[str] = []
    uncovered = [set(s) for s in keys]
    for _ in range(LABEL_TAGS):
        fresh = [t for t in shared if t not in chosen and _new_words(t, chosen)]
        if not fresh:
            break
        covering = [t for t in fresh if any(t in u for u in uncovered)]
        best = (covering or fresh)[0]
        chosen = [c for c in chosen if not _inside(c, best)] + [best]
        uncovered = [u for u in uncovered if best not in u]
    return chosen


def _inside(short: str, long: str) -> bool:
    return f" {short} " in f" {long} "


def _new_words(tag: str, chosen: list[str]) -> bool:
    """``tag`` repeats no word, of its own ("big live live", a fragment of a title) or of a
    chosen tag unless it contains that whole tag (then it replaces it: "galaxy cluster" for
    "galaxy"), and is no web address ("news.ycombinator.com")."""
    found = _WORDS.findall(tag)
    words = set(found)
    if len(words) < len(found) or _ADDRESS.search(tag):
        return False
    for c in chosen:
        if _inside(c, tag):
            continue
        if words & set(_WORDS.findall(c)):
            return False
    return True
