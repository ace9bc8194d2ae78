"""Strength: how firmly an experienced item sits in a persona's corpus, in [0, 1].

``w_h·heard_fraction + w_c·min(captures, C)/C + w_f·favorited + w_r·min(reopens, R)/R``
with captures = highlights + notes and reopens = opens − 1. Every term is non-decreasing in
its signal and the weights are non-negative, so the score is monotonic in each signal; the
sum is clamped to [0, 1] whatever the configured weights add up to. Comparable within a
persona, not across personas. No learning, no recency decay (v1).
"""

from __future__ import annotations

import sqlite_utils

from .settings import CorpusSettings, corpus_settings


def strength(
    max_fraction: float, captures: int, favorited: bool, opens: int, cfg: CorpusSettings | None = None
) -> tuple[float, dict]:
    """Return ``(strength, parts)``; ``parts`` holds each weighted term for explanations."""
    cfg = cfg or corpus_settings()
    heard = min(max(float(max_fraction), 0.0), 1.0)
    reopens = max(0, int(opens) - 1)
    parts = {
        "heard": cfg.w_heard * heard,
        "captures": cfg.w_captures * min(max(int(captures), 0), cfg.capture_cap) / cfg.capture_cap,
        "favorite": cfg.w_favorite * (1.0 if favorited else 0.0),
        "reopens": cfg.w_reopens * min(reopens, cfg.reopen_cap) / cfg.reopen_cap,
    }
    total = min(max(sum(parts.values()), 0.0), 1.0)
    return total, {k: round(v, 4) for k, v in parts.items()}


def ranked(db: sqlite_utils.Database, user_id: int, limit: int | None = None) -> list[dict]:
    """The persona's experienced items, strongest first (ties: most recently seen first)."""
    cfg = corpus_settings()
    rows = db.execute(
        """SELECT m.item_id, i.title, i.url,
                  coalesce(p.max_fraction, 0), coalesce(p.opens, 0),
                  (SELECT count(*) FROM corpus_highlights h WHERE h.user_id = m.user_id AND h.item_id = m.item_id),
                  (SELECT count(*) FROM corpus_notes n WHERE n.user_id = m.user_id AND n.item_id = m.item_id),
                  EXISTS (SELECT 1 FROM corpus_favorites f WHERE f.user_id = m.user_id AND f.item_id = m.item_id),
                  max(coalesce(p.last_seen, ''), m.added)
           FROM corpus_membership m
           LEFT JOIN items i ON i.id = m.item_id
           LEFT JOIN corpus_progress p ON p.user_id = m.user_id AND p.item_id = m.item_id
           WHERE m.user_id = ? AND m.facet = 'experienced'""",
        [user_id],
    ).fetchall()
    out = []
    for item_id, title, url, frac, opens, highlights, notes, fav, last in rows:
        score, parts = strength(frac, highlights + notes, bool(fav), opens, cfg)
        out.append(
            {
                "item_id": item_id,
                "title": title or "",
                "url": url,
                "strength": round(score, 4),
                "parts": parts,
                "max_fraction": frac,
                "highlights": highlights,
                "notes": notes,
                "favorited": bool(fav),
                "reopens": max(0, opens - 1),
                "last_seen": last,
            }
        )
    # Stable sorts, last key first: strength desc, then most recently seen, then id.
    out.sort(key=lambda r: r["item_id"])
    out.sort(key=lambda r: r["last_seen"] or "", reverse=True)
    out.sort(key=lambda r: r["strength"], reverse=True)
    return out[:limit] if limit is not None else out
