"""``suggest_feeds``: score the curated ``candidates.toml`` against a persona.

Two signals, both cheap and explainable (no model, no network, no web search):

- liked tags: the persona's per-tag like/dislike scores (:func:`hermes.ranking.preferences.key_stats`)
  matched against a candidate's tags — exactly (weight 1) or when every word of the tag
  appears among the candidate's words (weight 0.5). Disliked tags pull a candidate down.
- interests: the words of the persona's interests text found in the candidate's title,
  tags and description, each worth :data:`INTEREST_WEIGHT` times its rarity among the
  candidates (a word most candidates share, like "learning", says little).

Feeds already subscribed (same URL) are left out, and so are matches much weaker than the
best one (below :data:`RELATIVE_CUT` of its score): a single shared generic word is noise.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path

from hermes.config import PACKAGE_DATA, load_toml
from hermes.errors import HermesError
from hermes.ranking.preferences import key_stats, split_key
from hermes.text.language import INTEREST_STOP_WORDS
from hermes.text.tags import normalize_tag

CANDIDATES = PACKAGE_DATA / "candidates.toml"
INTEREST_WEIGHT = 0.25
PARTIAL_TAG_WEIGHT = 0.5
RELATIVE_CUT = 0.35
_WORD = re.compile(r"[a-z0-9][a-z0-9+#-]*")


def words(text: str) -> set[str]:
    """Lower-case content words, crudely singularised (``models`` → ``model``)."""
    out = set()
    for w in _WORD.findall((text or "").lower().replace("_", " ")):
        w = w.strip("-")
        if len(w) < 3 or w in INTEREST_STOP_WORDS:
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


def norm_tag(tag) -> str:
    """A tag as candidates and clicks are compared: normalised, ``_`` read as a space."""
    return normalize_tag(str(tag).replace("_", " "))


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> tuple[dict, ...]:
    try:
        data = load_toml(Path(path))  # the one TOML reader: its errors name the file
    except HermesError as exc:
        raise HermesError(f"cannot read the feed candidates: {exc}") from exc
    out = []
    for entry in data.get("feed", []):
        if not entry.get("url") or not entry.get("title"):
            continue
        tags = [norm_tag(t) for t in entry.get("tags", [])]
        out.append(
            {
                "title": entry["title"],
                "url": entry["url"],
                "area": entry.get("area", ""),
                "content_type": entry.get("content_type", "article"),
                "description": entry.get("description", ""),
                "tags": tags,
            }
        )
    return tuple(out)


def load_candidates(path: Path = CANDIDATES) -> list[dict]:
    """The curated candidates shipped with hermes (package data, so a wheel finds them)."""
    if not path.exists():
        raise HermesError(f"the feed candidates file is missing from this installation: {path}")
    return [dict(c) for c in _load(str(path), path.stat().st_mtime)]


def liked_tags(db, user_id: int) -> dict[str, float]:
    """``{tag: score}`` from the persona's clicks (positive = liked, negative = disliked)."""
    return {
        norm_tag(split_key(key)[1]): stats["score"]
        for key, stats in key_stats(db, user_id).items()
        if split_key(key)[0] in ("tag", "topic") and stats["score"] != 0
    }


def candidate_words(candidate: dict) -> set[str]:
    return words(" ".join([candidate["title"], candidate["description"], candidate["area"], *candidate["tags"]]))


def rarity(candidates: list[dict]) -> dict[str, float]:
    """Inverse document frequency of each word over the candidates, scaled to (0, 1]."""
    df: dict[str, int] = {}
    for cand in candidates:
        for w in candidate_words(cand):
            df[w] = df.get(w, 0) + 1
    n = len(candidates)
    return {w: math.log((n + 1) / k) / math.log(n + 1) for w, k in df.items()}


def score_candidate(
    candidate: dict, tag_scores: dict[str, float], interest_words: set[str], idf: dict[str, float] | None = None
) -> dict:
    cand_tags = set(candidate["tags"])
    cand_words = candidate_words(candidate)
    tag_part, matched_tags = 0.0, []
    for tag, pref in tag_scores.items():
        if tag in cand_tags:
            weight = 1.0
        elif (tw := words(tag)) and tw <= cand_words:
            weight = PARTIAL_TAG_WEIGHT
        else:
            continue
        tag_part += weight * pref
        matched_tags.append((tag, round(pref, 2)))
    matched_words = sorted(interest_words & cand_words)
    interest_part = INTEREST_WEIGHT * sum((idf or {}).get(w, 1.0) for w in matched_words)
    reasons = []
    liked = [f"{t} ({p:+.2f})" for t, p in sorted(matched_tags, key=lambda tp: -tp[1])]
    if liked:
        reasons.append("tags you rated: " + ", ".join(liked[:5]))
    if matched_words:
        reasons.append("matches your interests: " + ", ".join(matched_words[:6]))
    return {
        "score": round(tag_part + interest_part, 4),
        "tag_score": round(tag_part, 4),
        "interest_score": round(interest_part, 4),
        "reason": "; ".join(reasons),
        "positive": bool(matched_words) or any(p > 0 for _, p in matched_tags),
    }


def suggest(db, persona: dict, *, limit: int = 8, path: Path = CANDIDATES) -> list[dict]:
    """The best-matching unsubscribed candidates, best first (ties by title)."""
    subscribed = {r[0].rstrip("/") for r in db.execute("SELECT url FROM feeds")}
    tag_scores = liked_tags(db, persona["id"])
    interest_words = words(persona.get("interests") or "")
    candidates = load_candidates(path)
    idf = rarity(candidates)
    scored = []
    for cand in candidates:
        if cand["url"].rstrip("/") in subscribed:
            continue
        s = score_candidate(cand, tag_scores, interest_words, idf)
        if s["positive"] and s["score"] > 0:
            scored.append({**cand, **{k: v for k, v in s.items() if k != "positive"}})
    scored.sort(key=lambda c: (-c["score"], c["title"]))
    if scored:
        floor = RELATIVE_CUT * scored[0]["score"]
        scored = [c for c in scored if c["score"] >= floor]
    return scored[:limit]
