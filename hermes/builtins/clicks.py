"""The built-in click plugin: declares the ``click`` signal kind (written by
:func:`hermes.storage.signals.record_click`, the one click write path) and serves the
``record_feedback`` tool, the one way every face records a like or dislike (the web UI's
buttons as source ``ui``, MCP as ``agent``), and ``remove_feedback``, the one way a face takes
one back (the web's undo, ``hermes unrate``). Clicks are core: they work with every tool
group disabled. The tools are listed in the ``feeds`` group, next to ``list_feed``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hermes.facekit.faces import Say, plural
from hermes.storage.records import require_item, require_items, require_user

from ..contract import Answer, Result, ok, tool
from ..hookspecs import hookimpl
from ..storage.clicks import ClickSource, click_count, record_click, remove_click
from ..storage.transactions import write_transaction
from ..tools import ItemId, ItemIds, User, caller

NEXT_RANKING = Say(
    mcp="the next list_feed uses it", cli="the next `hermes feed` uses it", web="the feed is ranked with it from now on"
)


Label = Literal["like", "dislike"]


class Click(Answer):
    """The click as stored; ``previous`` is the answer it replaced (null: none). Every field
    has a default: a refused call carries ``{}``."""

    id: int = 0
    item_id: int = 0
    label: Label | None = None
    source: ClickSource | None = None
    created: str = ""
    previous: Label | None = None


class Feedback(Result):
    #: the click recorded when item_id is one id (empty for a list)
    click: Click = {}
    #: the clicks recorded when item_id is a list, in its order (empty for one id)
    clicks: list[Click] = []
    n_clicks: int = 0


# Not destructive (hermes.contract.Tool.destructive): a flipped answer is flipped back by the
# next call, and the answer names the one it replaced (``previous``).
@tool("feeds", result=Feedback, idempotent=True)
def record_feedback(
    db,
    user: User,
    item_id: ItemIds,
    liked: Annotated[bool, Field(description="true = like, false = dislike.")],
) -> dict:
    """Like or dislike an item (or a list) for a persona; a new answer replaces the old.
    The next list_feed learns from it."""
    persona = require_user(db, user)
    if isinstance(item_id, list):
        return _record_many(db, persona, list(dict.fromkeys(item_id)), liked)
    item = require_item(db, item_id)
    click = record_click(db, persona["id"], item["id"], liked, source=caller())
    n = click_count(db, persona["id"])
    total = f"({plural(n, 'click')} in total)"
    what, before = click["label"], click["previous"]
    if before == what:  # the click is replaced by the same answer: nothing is added
        message = f"Item {item['id']} was already {what}d by {persona['name']}; the {what} stands unchanged {total}."
    else:
        replacing = f", replacing its {before}" if before else ""
        message = f"Recorded a {what} of item {item['id']} for {persona['name']}{replacing} {total}; {NEXT_RANKING}."
    return ok(message, click=click, clicks=[], n_clicks=n)


def _record_many(db, persona: dict, item_ids: list[int], liked: bool) -> dict:
    """Several items rated alike in one transaction: all of them, or none when one id is
    unknown (the refusal names every such id)."""
    require_items(db, item_ids, "nothing was recorded")
    with write_transaction(db):
        clicks = [record_click(db, persona["id"], i, liked, source=caller()) for i in item_ids]
    n = click_count(db, persona["id"])
    what = clicks[0]["label"]
    new = [c for c in clicks if c["previous"] != what]
    flipped = sum(1 for c in new if c["previous"])
    same = len(clicks) - len(new)
    message = (
        f"Recorded {plural(len(new), what)} for {persona['name']}"
        + (f", {flipped} replacing the opposite answer" if flipped else "")
        + (f"; {plural(same, 'item')} already had it" if same else "")
        + f" ({plural(n, 'click')} in total); {NEXT_RANKING}."
    )
    return ok(message, click={}, clicks=clicks, n_clicks=n)


class Removed(Result):
    item_id: int | None = None
    removed: Label | None = None  # what was taken back; None: nothing was
    n_clicks: int = 0


# Not destructive: record_feedback gives the answer taken back (``removed``) again.
@tool("feeds", result=Removed, idempotent=True)
def remove_feedback(db, user: User, item_id: ItemId) -> dict:
    """Take back a persona's like or dislike on an item."""
    persona = require_user(db, user)
    item = require_item(db, item_id)
    removed = remove_click(db, persona["id"], item["id"], source=caller())
    n = click_count(db, persona["id"])
    if removed:
        message = (
            f"Took back {persona['name']}'s {removed} of item {item['id']} ({plural(n, 'click')} left); {NEXT_RANKING}."
        )
    else:
        message = f"Item {item['id']} had no like or dislike from {persona['name']}; nothing changed."
    return ok(message, item_id=item["id"], removed=removed, n_clicks=n)


@hookimpl
def hermes_register_signals():
    return ["click"]


@hookimpl
def hermes_register_tools():
    return [record_feedback, remove_feedback]
