"""Warm a new persona from its interests text: like the items the ranking puts first,
dislike the ones it puts last, so preferences and the classifier have something to learn
from before the first real feedback.

The order comes from the one ranking path with zero clicks (the written interests alone),
over the whole archive. Every click is written through :func:`hermes.storage.signals.record_click`
with source ``bootstrap``, all in one transaction: a bootstrap lands whole or not at all.
"""

from __future__ import annotations

import sqlite_utils

from hermes.contract import CandidateQuery
from hermes.errors import InvalidInput
from hermes.faces import INGEST, Say, plural, typed
from hermes.ranking.rank import rank
from hermes.records import item_rows, require_user
from hermes.storage.signals import record_click
from hermes.storage.transactions import write_transaction

BOOTSTRAP_MAX = 50
def set_interests(name: str) -> Say:
    return Say(mcp="set it with update_persona",
               cli=f"set it with `hermes persona update {typed(name)} --interests TEXT`",
               web="set it on the Personas page")


def reset(name: str) -> Say:
    return Say(mcp="reset_feedback", cli=f"`hermes persona reset {typed(name)} --yes`",
               web="resetting its feedback")
def listed() -> Say:
    return Say(mcp="liked and disliked list them", cli="listed below: + liked, - disliked",
               web="listed below")


def see_rated(name: str) -> Say:
    return Say(mcp="list_feed leaves them out; search_feed still finds them, marked 'rated'",
               cli=f"`hermes feed {typed(name)}` leaves them out; `hermes persona search "
                   f"{typed(name)} WORDS` still finds them, marked [liked]/[disliked]",
               web="the feed leaves them out; Search still finds them")


def undo(name: str) -> Say:
    return Say(mcp="reset_feedback with confirm=true takes every bootstrap click back, and "
                   "record_feedback changes one",
               cli=f"`hermes persona reset {typed(name)} --yes` takes every bootstrap click "
                   f"back, `hermes unrate {typed(name)} ITEM` takes one back, and `hermes like "
                   f"{typed(name)} ITEM` / `hermes dislike {typed(name)} ITEM` changes one",
               web="resetting its feedback takes every bootstrap click back")


N_LIKE = Say(mcp="n_like", cli="--likes", web="likes")
N_DISLIKE = Say(mcp="n_dislike", cli="--dislikes", web="dislikes")


def bootstrap_persona(db: sqlite_utils.Database, name, n_like: int = 5, n_dislike: int = 5) -> dict:
    """Like the ``n_like`` closest and dislike the ``n_dislike`` farthest items; return
    ``{"liked": [...], "disliked": [...]}`` (``id`` and ``title`` each).

    :raises NotFound: on an unknown persona name.
    :raises InvalidInput: the persona already has clicks, has no interests text, the
        archive is empty, or both counts are 0 (the tool checks their range).
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
        raise InvalidInput(f"the archive has no embedded items yet; {INGEST}")
    liked = order[:n_like]
    # The farthest first; never an item already liked (a tiny archive yields fewer).
    disliked = [i for i in reversed(order[len(liked):])][:n_dislike]

    with write_transaction(db):
        _require_fresh(db, user)  # re-checked under the write lock
        for item_id in liked:
            record_click(db, user["id"], item_id, True, "bootstrap")
        for item_id in disliked:
            record_click(db, user["id"], item_id, False, "bootstrap")
    rows = item_rows(db, liked + disliked)
    brief = lambda ids: [{"id": i, "title": rows[i]["title"]} for i in ids]  # noqa: E731
    return {"user": user["name"], "liked": brief(liked), "disliked": brief(disliked)}


def _require_fresh(db: sqlite_utils.Database, user: dict) -> None:
    n = db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [user["id"]]).fetchone()[0]
    if n:
        raise InvalidInput(
            f"persona {user['name']!r} already has {plural(n, 'click')}; bootstrap only warms a "
            f"persona without feedback ({reset(user['name'])} clears its clicks first)"
        )
