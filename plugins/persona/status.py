"""``profile_status``: what a persona's clicks have taught the ranking so far.

It reads the same statistics the scorers use (:func:`hermes.ranking.preferences.key_stats`,
:func:`hermes.ranking.rank.blend_weight`) without running a ranking, so it is cheap and never
loads the embedding model.
"""

from __future__ import annotations

import re

import sqlite_utils

from hermes.builtins.default_keyphrases import candidates
from hermes.embed import get_embedder
from hermes.facekit.faces import plural
from hermes.ranking.interests import wanted_text
from hermes.ranking.preferences import key_stats, split_key
from hermes.ranking.rank import blend_weight
from hermes.storage.clicks import click_counts, clicks_by_source, clicks_with_embedding, recent_clicks
from hermes.storage.records import require_user

from .library_scorer import LIBRARY_MIN

TOP = 10


def _seeded(n: int) -> str:
    """Which of the clicks bootstrap made, said beside the blend: a trial's library import
    read "8% written interests, 92% learned from 54 clicks", 44 of them the library's, and
    the library's own part of the ranking mixes the interests back in (library_scorer)."""
    if not n:
        return ""
    mixed = ", whose part of the ranking mixes your interests back in" if n >= LIBRARY_MIN else ""
    return f" ({n} of them by bootstrap: an imported library or seeded likes{mixed})"


def names_topic(keyphrase: str) -> bool:
    """Whether the built-in tagger's rules still make ``keyphrase`` a topic: one kept
    before they learned that "dataset" or "detection" alone names none is not listed."""
    return keyphrase in candidates(keyphrase)


def _entries(stats: dict, family: str, *, liked: bool, top: int = TOP) -> list[dict]:
    """The keys of one family (``tag``: feed categories, ``topic``: keyphrases a tagger
    added, ``type``, ``source``) the persona liked (or disliked)."""
    picked = [
        (split_key(key)[1], s)
        for key, s in stats.items()
        if split_key(key)[0] == family
        and ((s["score"] > 0) if liked else (s["score"] < 0))
        and (family != "topic" or names_topic(split_key(key)[1]))
    ]
    picked.sort(key=lambda kv: (-abs(kv[1]["score"]), -(kv[1]["likes"] + kv[1]["dislikes"]), kv[0]))
    return [
        {"key": key, "likes": s["likes"], "dislikes": s["dislikes"], "score": round(s["score"], 3)}
        for key, s in picked[:top]
    ]


def at_odds(stats: dict, interests: str | None) -> list[dict]:
    """Disliked tags and topics that the interests text asks for ("cosmology" disliked by a
    persona written "galaxy formation and cosmology"): a trial's clicks contradicted its
    text, and with the clicks weighing 80% the feed followed the clicks without a word."""
    wanted = wanted_text(interests or "").casefold()
    # the phrases the text names: "statistical mechanics and active matter" names
    # "statistical mechanics" and "active matter", not "mechanics" (a trial's false alarm)
    phrases = {p.strip() for p in re.split(r",|;|:|/|\(|\)|\band\b|\bor\b", wanted) if p.strip()}
    out = []
    for key, s in stats.items():
        family, name = split_key(key)
        if not (family in ("tag", "topic") and s["score"] < 0 and name):
            continue
        folded = name.casefold()
        inside = re.search(rf"(?<!\w){re.escape(folded)}(?!\w)", wanted)
        # a keyphrase of one word (the tagger's "mechanics") must be a whole phrase of the
        # text; a feed's tag ("interpretability" in "mechanistic interpretability") is its
        # author's word, and a phrase of several words may sit inside one
        if inside if family == "tag" or " " in folded else folded in phrases:
            out.append(
                {
                    "key": name,
                    "kind": family,
                    "likes": s["likes"],
                    "dislikes": s["dislikes"],
                    "score": round(s["score"], 3),
                }
            )
    return sorted(out, key=lambda e: (e["score"], e["key"]))


def classifier_state(db: sqlite_utils.Database, user_id: int, model: str) -> tuple[bool, str]:
    """Whether the built-in classifier scorer is active for this persona, and why (the same
    rule it applies: both classes among clicked items that have an embedding)."""
    rows = clicks_with_embedding(db, user_id, model)
    total = {label: n for label, (n, _) in rows.items()}
    usable = {label: e for label, (_, e) in rows.items()}
    if not total:
        return False, "no clicks yet: it needs at least one like and one dislike"
    if not total.get("like") or not total.get("dislike"):
        missing = "dislike" if total.get("like") else "like"
        return False, f"only {'likes' if missing == 'dislike' else 'dislikes'} so far: it needs at least one {missing}"
    if not usable.get("like") or not usable.get("dislike"):
        return False, "the clicked items lack embeddings for the current model (run hermes ingest)"
    n = usable["like"] + usable["dislike"]
    return True, (
        f"active: trained on {plural(n, 'clicked item')} ({plural(usable['like'], 'like')}, "
        f"{plural(usable['dislike'], 'dislike')})"
    )


def profile_status(db: sqlite_utils.Database, user: str) -> dict:
    persona = require_user(db, user)
    uid = persona["id"]
    counts = click_counts(db, uid)
    n = counts["clicks"]
    # as the ranking blends (hermes.ranking.rank): with no interests to rank by, the clicks
    # are all of it (a trial's persona, its interests cleared, read "26% written interests")
    written = bool(wanted_text((persona["interests"] or "").strip()))
    weight = blend_weight(n) if written else float(n > 0)
    stats = key_stats(db, uid)
    by_source = clicks_by_source(db, uid)
    feed_titles = dict(db.execute("SELECT id, coalesce(title, url) FROM feeds").fetchall())
    active, why = classifier_state(db, uid, get_embedder().name)
    recent = recent_clicks(db, uid, 5)
    sources = {
        "liked": _entries(stats, "source", liked=True, top=5),
        "disliked": _entries(stats, "source", liked=False, top=5),
    }
    for side in sources.values():
        for entry in side:
            fid = int(entry["key"])
            entry["key"] = feed_titles.get(fid, f"feed {fid} (removed)")
    return {
        "user": persona["name"],
        "interests": persona["interests"],
        "clicks": n,
        "likes": counts["likes"],
        "dislikes": counts["dislikes"],
        "clicks_by_source": by_source,
        "blend_weight": round(weight, 4),
        "blend": (
            f"{round(100 * (1 - weight))}% written interests, {round(100 * weight)}% learned "
            f"from {plural(n, 'click')}{_seeded(by_source['bootstrap'])}; 50/50 at 5 clicks"
            if written
            else f"no written interests to rank by: learned from {plural(n, 'click')} alone"
            if n
            else "no written interests and no clicks yet: nothing to rank by"
        ),
        "liked_tags": _entries(stats, "tag", liked=True),
        "disliked_tags": _entries(stats, "tag", liked=False),
        # Listed apart: the preference scorer leaves keyphrase topics out (every weight given
        # them lowered nDCG), so calling them liked tags claimed a pull they do not have.
        "liked_topics": _entries(stats, "topic", liked=True),
        "disliked_topics": _entries(stats, "topic", liked=False),
        "liked_types": _entries(stats, "type", liked=True, top=5),
        "disliked_types": _entries(stats, "type", liked=False, top=5),
        "liked_sources": sources["liked"],
        "disliked_sources": sources["disliked"],
        "classifier_active": active,
        "classifier_reason": why,
        "recent_clicks": recent,
        "disliked_but_asked_for": at_odds(stats, persona["interests"]),
    }
