"""The built-in click plugin: declares the ``click`` signal kind (written by
:func:`hermes.storage.signals.record_click`, the one click write path) and serves the
``record_feedback`` tool, the one way every face records a like or dislike (the web UI's
buttons as source ``ui``, MCP as ``agent``), and ``remove_feedback``, the one way a face takes
one back (the web's undo, ``hermes unrate``). Clicks are core: they work with every tool
group disabled. The tools are listed in the ``feeds`` group, next to ``list_feed``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ..contract import Result, ok, tool
from ..faces import Say, plural
from ..hookspecs import hookimpl
from ..records import require_item, require_user
from ..storage.signals import record_click, remove_click
from ..tools import ItemId, User, caller

NEXT_RANKING = Say(mcp="the next list_feed uses it", cli="the next `hermes feed` uses it",
                   web="the feed is ranked with it from now on")


Label = Literal["like", "dislike"]


class Click(BaseModel):
    """The click as stored; ``previous`` is the answer it replaced (null: none). Every field
    has a default: a refused call carries ``{}``."""

    id: int = 0
    item_id: int = 0
    label: Label | None = None
    source: Literal["ui", "agent", "bootstrap"] | None = None
    created: str = ""
    previous: Label | None = None


class Feedback(Result):
    click: Click = {}
    n_clicks: int = 0


# Destructive: a like on an item the persona disliked overwrites the dislike.
@tool("feeds", result=Feedback, destructive=True, idempotent=True)
def record_feedback(
    db,
    user: User,
    item_id: ItemId,
    liked: Annotated[bool, Field(description="true = liked, false = disliked.")],
) -> dict:
    """Record that the persona liked or disliked an item; a new answer replaces its earlier
    one on that item. The next list_feed learns from it."""
    persona = require_user(db, user)
    item = require_item(db, item_id)
    click = record_click(db, persona["id"], item["id"], liked, source=caller())
    n = db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [persona["id"]]).fetchone()[0]
    total = f"({plural(n, 'click')} in total)"
    what, before = click["label"], click["previous"]
    if before == what:  # the click is replaced by the same answer: nothing is added
        message = (f"Item {item['id']} was already {what}d by {persona['name']}; the {what} "
                   f"stands unchanged {total}.")
    else:
        replacing = f", replacing its {before}" if before else ""
        message = (f"Recorded a {what} of item {item['id']} for {persona['name']}{replacing} "
                   f"{total}; {NEXT_RANKING}.")
    return ok(message, click=click, n_clicks=n)


class Removed(Result):
    item_id: int | None = None
    removed: Label | None = None  # what was taken back; None: nothing was
    n_clicks: int = 0


@tool("feeds", result=Removed, destructive=True, idempotent=True)
def remove_feedback(db, user: User, item_id: ItemId) -> dict:
    """Take back the persona's like or dislike on an item: it stops teaching the ranking and
    returns to the unread feed. Nothing to take back is not an error (removed is null)."""
    persona = require_user(db, user)
    item = require_item(db, item_id)
    removed = remove_click(db, persona["id"], item["id"], source=caller())
    n = db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [persona["id"]]).fetchone()[0]
    if removed:
        message = (f"Took back {persona['name']}'s {removed} of item {item['id']} "
                   f"({plural(n, 'click')} left); {NEXT_RANKING}.")
    else:
        message = (f"Item {item['id']} had no like or dislike from {persona['name']}; "
                   "nothing changed.")
    return ok(message, item_id=item["id"], removed=removed, n_clicks=n)


@hookimpl
def hermes_register_signals():
    return ["click"]


@hookimpl
def hermes_register_tools():
    return [record_feedback, remove_feedback]
