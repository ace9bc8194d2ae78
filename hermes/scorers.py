"""The built-in scorers, registered through ``hermes_score`` like any plugin's.

- ``profile``: cosine of each item to the persona's interests text.
- ``preference``: mean per-tag / type / source like–dislike score of the item's keys.
- ``classifier``: logistic regression over the embeddings of clicked items, only once both
  classes exist (never fit on one class).
"""

from __future__ import annotations

import json

import numpy as np

from .features import _key_stats, item_keys
from .hookspecs import hookimpl
from .rank import Component, interests_vector


@hookimpl
def hermes_score(db, user, item_ids, vectors, context):
    comps = [profile(db, user, vectors, context)]
    if context["n_clicks"]:
        comps.append(preference(db, user, item_ids))
        comps.append(classifier(context, vectors))
    return comps


def profile(db, user, vectors, context) -> Component:
    vec = interests_vector(db, user, context["embedder"])
    active = bool((user.get("interests") or "").strip())
    return Component("profile", "profile", vectors @ vec, active=active)


def preference(db, user, item_ids) -> Component:
    stats = _key_stats(db, user["id"])
    scores = np.zeros(len(item_ids))
    ids = [int(i) for i in item_ids]
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT id, tags, content_type, feed_id FROM items WHERE id IN ({marks})", chunk
        )
        pos = {i: start + k for k, i in enumerate(chunk)}
        for item_id, tags, ctype, feed_id in rows:
            vals = [stats[k]["score"] for k in item_keys(json.loads(tags or "[]"), ctype, feed_id) if k in stats]
            scores[pos[item_id]] = float(np.mean(vals)) if vals else 0.0
    return Component("preference", "behaviour", scores, active=bool(stats), detail={"stats": stats})


def classifier(context, vectors) -> Component:
    clicks = context["clicks"]
    labels = [liked for _, liked in clicks]
    matrix = context["matrix"]
    if len(set(labels)) < 2:
        reason = "needs both a like and a dislike" if clicks else "no clicks yet"
        return Component("classifier", "behaviour", np.zeros(len(vectors)), active=False,
                         detail={"active": False, "reason": reason})
    from sklearn.linear_model import LogisticRegression

    known = [(matrix.vector(i), liked) for i, liked in clicks if matrix.vector(i) is not None]
    X = np.stack([v for v, _ in known])
    y = np.array([int(liked) for _, liked in known])
    if len(set(y)) < 2:
        return Component("classifier", "behaviour", np.zeros(len(vectors)), active=False,
                         detail={"active": False, "reason": "clicked items lack embeddings"})
    model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=200).fit(X, y)
    return Component("classifier", "behaviour", model.decision_function(vectors),
                     detail={"active": True, "reason": f"fit on {len(y)} clicks"})
