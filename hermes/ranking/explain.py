"""Why an item ranks where it does for a persona — and the cache the digest reads.

An explanation ranks the item through the one ranking path, inside the persona's normal
pool (the recent, unclicked items ``list_feed`` ranks, plus the item itself): every
component is standardised over the candidates, so a score computed over a pool of one
would mean nothing. It reports each component's raw value, share and contribution, the
matched tags with their preference scores, the blend weight, whether the classifier is
active (and why not), the liked items nearest to it, and a one-line ``reason``. Each
explanation is stored in ``explanations`` (one row per persona and item, replaced on every
call); :func:`cached_explanation` reads that table and never computes anything.
"""

from __future__ import annotations

import json

import numpy as np
import sqlite_utils

from ..authors import author_key, surname
from ..contract import CandidateQuery
from ..embed import get_embedder
from ..errors import InvalidInput
from ..faces import plural
from ..records import item_rows, now_iso, user_clicks
from ..storage.transactions import write_transaction
from ..text import clip
from .interests import interest_clauses, interests_vectors
from .matrix import get_matrix
from .preferences import item_keys, key_stats, split_key
from .rank import blend_weight, rank

#: the pool an explanation ranks in: list_feed's default window …
POOL_DAYS = 7
#: … unless it holds fewer items than this, then the whole archive
MIN_POOL = 50
NEAREST_LIKED = 3


def explain(db: sqlite_utils.Database, user: dict, item_id: int, *, store: bool = True) -> dict:
    """Explain ``item_id`` for ``user`` (a persona row) and store the explanation
    (``store=False``: only compute it, as the web UI's read-only explanation page does)."""
    item_id = int(item_id)
    query = CandidateQuery(since_days=POOL_DAYS, include_ids=(item_id,))
    ranking = rank(db, user, query)
    pool = f"unread items of the last {POOL_DAYS} days"
    if ranking.n_candidates < MIN_POOL:
        ranking = rank(db, user, CandidateQuery(since_days=None, include_ids=(item_id,)))
        pool = "all unread items"
    where = np.flatnonzero(ranking.item_ids == item_id)
    if not len(where):
        raise InvalidInput(f"item {item_id} has no embedding yet, so it cannot be ranked; the "
                           "next `hermes ingest` embeds it")
    payload = _payload(db, user, item_id, ranking, int(where[0]), pool)
    if not store:
        return payload
    with write_transaction(db):
        db.execute(
            """INSERT INTO explanations (user_id, item_id, payload, created) VALUES (?, ?, ?, ?)
               ON CONFLICT (user_id, item_id) DO UPDATE
               SET payload = excluded.payload, created = excluded.created""",
            [user["id"], item_id, json.dumps(payload), payload["created"]],
        )
    return payload


def explain_ranked(db: sqlite_utils.Database, user: dict, ranking, position: int,
                   pool: str) -> dict:
    """The explanation of the item at ``position`` of a ranking the caller already holds:
    no re-ranking and nothing stored (the web UI explains every row of its one ranking;
    ``pool`` says what that ranking ranked, e.g. "unread items of the last 30 days")."""
    return _payload(db, user, int(ranking.item_ids[position]), ranking, int(position), pool)


def cached_explanation(db: sqlite_utils.Database, user_id: int, item_id: int) -> dict | None:
    """The stored explanation, or ``None``. Never generates one (the digest relies on it)."""
    row = db.execute("SELECT payload FROM explanations WHERE user_id = ? AND item_id = ?",
                     [user_id, item_id]).fetchone()
    if row is None:
        return None
    try:
        return json.loads(row[0])
    except ValueError:
        return None


def _payload(db, user, item_id: int, ranking, pos: int, pool: str) -> dict:
    item = item_rows(db, [item_id]).get(item_id) or {"title": "", "tags": []}
    cand = int(ranking.order[pos])  # the item's index among the candidates
    components = {}
    for name, comp in ranking.components.items():
        components[name] = {
            "role": comp.role,
            "active": bool(comp.active),
            "share": round(float(ranking.shares.get(name, 0.0)), 4),
            "raw": round(float(ranking.raw[name][pos]), 4),
            "contribution": round(float(ranking.contributions[name][pos]), 4),
            **_detail(db, name, comp.detail, cand, user, item_id),
        }
    classifier = ranking.components.get("classifier")
    clf_detail = classifier.detail if classifier else {}
    embedder = get_embedder()
    matrix = get_matrix(db, embedder.name, embedder.dimension)
    payload = {
        "user": user["name"],
        "item_id": item_id,
        "title": item["title"],
        "rank": pos + 1,
        "out_of": int(ranking.n_candidates),
        "pool": pool,
        "score": round(float(ranking.scores[pos]), 4),
        "n_clicks": ranking.n_clicks,
        "blend_weight": round(float(ranking.blend_weight), 4),
        "nominal_blend_weight": round(blend_weight(ranking.n_clicks), 4),
        "components": components,
        "classifier_active": bool(clf_detail.get("active", False)),
        "classifier_reason": clf_detail.get("reason", "no classifier registered"),
        "matched_tags": _matched_tags(db, user, item),
        "nearest_liked": _nearest_liked(db, user, matrix, item_id),
        "created": now_iso(),
    }
    payload["reason"] = _reason(payload)
    return payload


def _closest_interest(db, user: dict, item_id: int) -> str:
    """The clause of the interests text the item matches best (what the profile used)."""
    text = (user.get("interests") or "").strip()
    embedder = get_embedder()
    vec = get_matrix(db, embedder.name, embedder.dimension).vector(item_id)
    if not text or vec is None:
        return ""
    clauses = interest_clauses(text)
    vectors = interests_vectors(db, user, embedder)
    if len(vectors) < 2 or len(clauses) != len(vectors) - 1:
        return text
    return clauses[int(np.argmax(vectors[1:] @ vec))]


def _detail(db, name: str, detail: dict, cand: int, user: dict, item_id: int) -> dict:
    """The JSON-safe part of a component's detail that concerns this item."""
    out = {}
    if name == "profile":
        if "reason" in detail:
            out["reason"] = detail["reason"]
        if "semantic" in detail:
            out["similarity"] = round(float(detail["semantic"][cand]), 4)
        closest = _closest_interest(db, user, item_id)
        if closest:
            out["closest_interest"] = closest
        if "lexical" in detail:
            out["word_match_bm25"] = round(float(detail["lexical"][cand]), 4)
            out["word_match_share"] = detail.get("lexical_share")
    elif name != "preference":
        for key, value in detail.items():
            if isinstance(value, (str, bool, int, float)) or value is None:
                out[key] = value
    return out


def _matched_tags(db, user, item) -> list[dict]:
    """The item's keys the persona has clicked before, strongest first. ``kind`` is
    ``tag`` (a feed category), ``topic`` (a keyphrase), ``type``, ``source`` or ``author``."""
    stats = key_stats(db, user["id"])
    people = {f"author:{author_key(n)}": n for n in item.get("authors") or []}
    out = []
    for key in item_keys(item.get("tags") or [], item.get("content_type"), item.get("feed_id"),
                         item.get("authors") or [], item.get("keyphrases") or []):
        if key in stats:
            kind, value = split_key(key)
            label = value
            if kind == "source":
                label = item.get("source") or value
            elif kind == "author":
                label = surname(people.get(key, value))
            s = stats[key]
            out.append({"key": key, "kind": kind, "label": label, "score": round(s["score"], 3),
                        "likes": s["likes"], "dislikes": s["dislikes"]})
    return sorted(out, key=lambda t: (-abs(t["score"]), t["key"]))


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _preference_reason(matched: list[dict]) -> str:
    """What the persona liked before that this item shares and the ``preference`` component
    counted: people first, then the feed's tags ("is by Furtak, whom you liked twice; has
    tags you like (astro-ph.ga)"). Keyphrase topics are listed in ``matched_tags`` but
    never given as a reason: the ranking does not use them."""
    liked = [t for t in matched if t["score"] > 0]
    parts = []
    people = [t for t in liked if t["kind"] == "author"][:2]
    if people:
        parts.append("is by " + " and ".join(
            f"{t['label']}, whom you liked {_times(t['likes'])}" for t in people))
    tags = [t["label"] for t in liked if t["kind"] == "tag"][:3]
    if tags:
        parts.append(f"has tags you like ({', '.join(tags)})")
    return "; ".join(parts) or "fits your tag/source history"


def _nearest_liked(db, user, matrix, item_id: int) -> list[dict]:
    vec = matrix.vector(item_id)
    liked = [i for i, like in user_clicks(db, user["id"]) if like and i != item_id]
    liked = [i for i in dict.fromkeys(liked) if matrix.vector(i) is not None]
    if vec is None or not liked:
        return []
    sims = np.stack([matrix.vector(i) for i in liked]) @ vec
    best = np.lexsort((np.array(liked), -sims))[:NEAREST_LIKED]
    rows = item_rows(db, [liked[k] for k in best])
    return [{"id": liked[k], "title": rows.get(liked[k], {}).get("title", ""),
             "similarity": round(float(sims[k]), 4)} for k in best]


def _reason(p: dict) -> str:
    """One line a person can read: where it ranks, and the two strongest reasons."""
    comps = p["components"]
    parts = []
    pushes = sorted(((c["contribution"], n) for n, c in comps.items() if c["contribution"] > 0),
                    reverse=True)
    for _, name in pushes[:2]:
        c = comps[name]
        if name == "profile":
            parts.append(f"matches your interest \"{_clip(c.get('closest_interest', ''))}\" "
                         f"(similarity {c.get('similarity', 0):.2f})")
        elif name == "affinity" and p["nearest_liked"]:
            near = p["nearest_liked"][0]
            parts.append(f"is close to \"{_clip(near['title'])}\", which you liked")
        elif name == "preference":
            parts.append(_preference_reason(p["matched_tags"]))
        elif name == "classifier":
            parts.append("resembles what you liked more than what you disliked")
        else:
            parts.append(f"{name} favours it")
    why = "; ".join(parts) if parts else "nothing in particular favours it"
    learned = (f"behaviour weighs {p['blend_weight']:.0%} after {plural(p['n_clicks'], 'click')}"
               if p["n_clicks"] else "no clicks yet, so only your written interests count")
    return f"Ranks {p['rank']} of {p['out_of']}: it {why}. ({learned})"


def _clip(text: str) -> str:
    return clip(" ".join((text or "").split()), 60)
