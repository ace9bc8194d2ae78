"""Built-in candidate filters: recency window, already-clicked, keyword / tag / type, ids.

Recency, ids, tag and type are answered from the in-memory matrix; only the keyword match
reads SQLite (a LIKE over titles and summaries, so "graph" also finds "graphene").
"""

from __future__ import annotations

import time

import numpy as np

from ..hookspecs import hookimpl
from ..ranking.preferences import tag_key, type_key


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` literally (``%``, ``_`` and ``\\`` escaped)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@hookimpl
def hermes_candidates(db, user, query, matrix):
    keep = np.ones(len(matrix), dtype=bool)
    if query.since_days is not None:
        keep &= matrix.published >= time.time() - float(query.since_days) * 86400
    if query.exclude_clicked:
        clicked = [r[0] for r in db.execute("SELECT item_id FROM clicks WHERE user_id = ?", [user["id"]])]
        if clicked:
            keep &= ~np.isin(matrix.ids, np.array(clicked, dtype=np.int64))
    if query.item_ids is not None:
        keep &= np.isin(matrix.ids, np.array(query.item_ids, dtype=np.int64))
    if query.tag:
        keep &= matrix.has_key(tag_key(query.tag))
    if query.content_type:
        keep &= matrix.has_key(type_key(query.content_type))
    if query.text and query.text.split():
        # Every word must appear in the title or summary (LIKE, SQL wildcards escaped).
        where, params = [], []
        for word in query.text.split():
            where.append("(title LIKE ? ESCAPE '\\' OR summary LIKE ? ESCAPE '\\')")
            params += [like_pattern(word)] * 2
        ids = [r[0] for r in db.execute(f"SELECT id FROM items WHERE {' AND '.join(where)}", params)]
        keep &= np.isin(matrix.ids, np.array(ids, dtype=np.int64))
    return keep

