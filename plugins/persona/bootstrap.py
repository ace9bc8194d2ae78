"""Warm a new persona from its interests text: like the items the ranking puts first,
dislike the ones it puts last, so preferences and the classifier have something to learn
from before the first real feedback.

The order comes from the one ranking path with zero clicks (the written interests alone),
over the whole archive. Only an item whose match clears the bar (strong or good) is liked and
only one with no match is disliked: a bootstrap click is shown later as "you liked it", so
in an archive with nothing on the persona's topics it must not make likes up. Nor does it
dislike a text in another language when the model reads English only: there "no match"
means the model cannot read it, not that it is off the persona's topics. Every click is
written through :func:`hermes.storage.signals.record_click` with source ``bootstrap``, all
in one transaction: a bootstrap lands whole or not at all.
"""

from __future__ import annotations

import numpy as np
import sqlite_utils

from hermes.contract import CandidateQuery
from hermes.embed import english_only, get_embedder
from hermes.errors import InvalidInput
from hermes.facekit.faces import Say, plural, typed
from hermes.ingest.refresher import new_items
from hermes.ranking.match import BAR, LEVELS
from hermes.ranking.rank import rank
from hermes.storage.clicks import click_count, clicks_by_source, record_click
from hermes.storage.records import item_rows, require_user
from hermes.storage.transactions import write_transaction
from hermes.text.language import english

BOOTSTRAP_MAX = 50


def set_interests(name: str) -> Say:
    return Say(
        mcp="set it with update_persona",
        cli=f"set it with `hermes persona update {typed(name)} --interests TEXT`",
        web="set it on the Personas page",
    )


def reset(name: str) -> Say:
    return Say(mcp="reset_feedback", cli=f"`hermes persona reset {typed(name)} --yes`", web="resetting its feedback")


def listed() -> Say:
    return Say(mcp="liked and disliked list them", cli="listed below: + liked, - disliked", web="listed below")


def see_rated(name: str) -> Say:
    return Say(
        mcp="list_feed leaves them out; search_feed still finds them, marked 'rated'",
        cli=f"`hermes feed {typed(name)}` leaves them out; `hermes persona search "
        f"{typed(name)} WORDS` still finds them, marked [liked]/[disliked]",
        web="the feed leaves them out; Search still finds them",
    )


def undo(name: str) -> Say:
    return Say(
        mcp="reset_feedback with confirm=true and source='bootstrap' takes every bootstrap click "
        "back (a library import's and bootstrap_persona's) and keeps the others, and record_feedback changes one",
        cli=f"`hermes persona reset {typed(name)} --source bootstrap --yes` takes every bootstrap "
        f"click back and keeps the others, `hermes unrate {typed(name)} ITEM` takes one back, and "
        f"`hermes like {typed(name)} ITEM` / `hermes dislike {typed(name)} ITEM` changes one",
        web="resetting its feedback takes every click back, bootstrap clicks included",
    )


N_LIKE = Say(mcp="n_like", cli="--likes", web="likes")
N_DISLIKE = Say(mcp="n_dislike", cli="--dislikes", web="dislikes")


def no_close_match(name: str) -> Say:
    return Say(
        mcp="add feeds on its topics (add_feed) and ingest, or word its interests the "
        "way those items are written (update_persona); n_like=0 only dislikes",
        cli=f"add feeds on its topics (`hermes feeds add URL`, then `hermes ingest`), or "
        f"word its interests the way those items are written (`hermes persona "
        f"update {typed(name)} --interests TEXT`); --likes 0 only dislikes",
        web="add feeds on its topics, or word its interests the way those items are written",
    )


def bootstrap_persona(db: sqlite_utils.Database, name, n_like: int = 5, n_dislike: int = 5) -> dict:
    """Like up to ``n_like`` of the closest items that clear the bar and dislike up to
    ``n_dislike`` of the farthest with no match; return ``{"liked": [...], "disliked":
    [...]}`` (``id`` and ``title`` each).

    :raises NotFound: on an unknown persona name.
    :raises InvalidInput: the persona already has clicks, has no interests text, the
        archive is empty, likes were asked and no item is a strong or good match, or both
        counts are 0 (the tool checks their range).
    """
    if n_like + n_dislike == 0:
        raise InvalidInput(f"{N_LIKE} and {N_DISLIKE} are both 0: nothing to do")
    user = require_user(db, name)
    _require_fresh(db, user)
    if not (user["interests"] or "").strip():
        raise InvalidInput(
            f"persona {user['name']!r} has no interests text to start from; {set_interests(user['name'])} first"
        )
    ranking = rank(db, user, CandidateQuery(since_days=None, exclude_clicked=False), limit=None)
    order = [int(i) for i in ranking.item_ids]
    if not order:
        raise InvalidInput(f"the archive has no embedded items yet; {new_items(db)}")
    liked = [order[p] for p in np.flatnonzero(ranking.levels >= BAR)[:n_like]]
    if n_like and not liked:
        weak = ranking.level_counts.get("weak", 0)
        closest = (
            f"{weak} of {plural(len(order), 'item')} match them weakly"
            if weak
            else f"none of {plural(len(order), 'item')} matches them at all"
        )
        raise InvalidInput(
            f"no item in the archive is a strong or good match for the interests of "
            f"{user['name']!r} ({closest}), so there is nothing to like on its behalf; "
            f"{no_close_match(user['name'])}"
        )
    disliked = _farthest(db, order, ranking.levels, n_dislike)
    if not liked and not disliked:
        raise InvalidInput(
            f"every item in the archive matches the interests of "
            f"{user['name']!r} at least weakly, so there is nothing to dislike "
            "on its behalf"
        )

    with write_transaction(db):
        _require_fresh(db, user)  # re-checked under the write lock
        for item_id in liked:
            record_click(db, user["id"], item_id, True, "bootstrap")
        for item_id in disliked:
            record_click(db, user["id"], item_id, False, "bootstrap")
    rows = item_rows(db, liked + disliked)
    brief = lambda ids: [{"id": i, "title": rows[i]["title"]} for i in ids]  # noqa: E731
    return {"user": user["name"], "liked": brief(liked), "disliked": brief(disliked)}


def _farthest(db: sqlite_utils.Database, order: list[int], levels: np.ndarray, n: int) -> list[int]:
    """Up to ``n`` items with no match, the farthest first (a tiny archive yields fewer),
    leaving out texts the model cannot read (see the module's docstring)."""
    nothing = [order[p] for p in np.flatnonzero(levels == LEVELS.index("none"))[::-1]]
    if not n or not english_only(get_embedder()):
        return nothing[:n]
    out: list[int] = []
    for start in range(0, len(nothing), 4 * n):  # rows read a few at a time, not all
        chunk = nothing[start : start + 4 * n]
        rows = item_rows(db, chunk)
        out += [i for i in chunk if i in rows and english(f"{rows[i]['title']}. {rows[i]['summary'] or ''}")]
        if len(out) >= n:
            break
    return out[:n]


def warmed(db: sqlite_utils.Database, name) -> int:
    """How many clicks the persona has when every one is from bootstrap (a second call finds
    its work done); 0 when it has none or any other, and the bootstrap decides."""
    user = require_user(db, name)
    by_source = clicks_by_source(db, user["id"])
    n, ours = sum(by_source.values()), by_source["bootstrap"]
    return n if n and n == ours else 0


def _require_fresh(db: sqlite_utils.Database, user: dict) -> None:
    n = click_count(db, user["id"])
    if n:
        raise InvalidInput(
            f"persona {user['name']!r} already has {plural(n, 'click')}; bootstrap only warms a "
            f"persona without feedback ({reset(user['name'])} clears its clicks first)"
        )
