"""A ranked page: the one way every feed face turns a persona's ranking into the items it
shows (issue 35: web/access.py, the list_feed tool and the digest each wrote it).

Rank once, bar first (the items that clear the persona's bar before the others); take the
page's positions; read their items; drop the ones deleted meanwhile; explain every shown
item from the same ranking (no re-ranking per item, nothing written). The caller shapes
each :class:`Shown` into its own answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from hermes.storage.records import item_rows

from ..contract import CandidateQuery
from .explain import explain_ranked
from .rank import Ranking, rank


@dataclass(frozen=True)
class Shown:
    """One item of a page: its ``position`` in the ranking (0-based), its
    :func:`~hermes.storage.records.item_rows` row and its explanation (match, reason, evidence …)."""

    position: int
    row: dict
    why: dict


def ranked_page(
    db: sqlite_utils.Database,
    user: dict,
    query: CandidateQuery,
    *,
    limit: int,
    offset: int = 0,
    below_bar: bool = False,
    pool: str | None = None,
) -> tuple[Ranking, list[Shown]]:
    """Items ``offset`` … ``offset + limit`` of the persona's ranking for ``query``, the ones
    below its bar left out unless ``below_bar``, with the ranking itself (its counts, its bar,
    its components). ``pool`` says what was ranked when it is more than the window (e.g.
    "unread items of the last 7 days in feed 3")."""
    ranking = rank(db, user, query, limit=offset + limit, bar_first=True)
    positions = [
        p for p in range(offset, min(offset + limit, len(ranking.item_ids))) if below_bar or ranking.above_bar(p)
    ]
    rows = item_rows(db, [int(ranking.item_ids[p]) for p in positions])
    positions = [p for p in positions if int(ranking.item_ids[p]) in rows]  # deleted meanwhile
    whys = explain_ranked(db, user, ranking, positions, query.since_days, pool=pool, rows=rows)
    return ranking, [Shown(p, rows[int(ranking.item_ids[p])], why) for p, why in zip(positions, whys, strict=True)]
