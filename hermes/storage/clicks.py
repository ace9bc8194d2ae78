"""The clicks table: the one module that writes it and reads it (issue 35).

A click is a persona's like or dislike of an item; a persona has at most one per item. The
write path (:func:`record_click`, :func:`remove_click`, :func:`remove_all_clicks`) goes through
the one signal path (:func:`hermes.storage.signals.record_signal`: one transaction, the
``hermes_signal_written`` observers told). The readers are named for what they answer;
every other module — faces, plugins, the engine — calls them rather than writing
``FROM clicks`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from ..contract import Signal
from ..errors import InvalidInput
from .ids import next_id, taken
from .signals import record_signal
from .transactions import write_transaction

if TYPE_CHECKING:  # annotations only: registering the click plugin loads no sqlite-utils (issue 36)
    import sqlite_utils

#: who recorded a click: the web UI and CLI (``ui``), an agent over MCP, a bootstrap or a library
#: import (``bootstrap``)
ClickSource = Literal["ui", "agent", "bootstrap"]
CLICK_SOURCES: tuple[str, ...] = get_args(ClickSource)


def _check_source(source: str) -> None:
    if source not in CLICK_SOURCES:
        raise InvalidInput(f"invalid click source {source!r}; expected one of {', '.join(CLICK_SOURCES)}")


# --- writing ----------------------------------------------------------------------------------


def _next_click_id(db: sqlite_utils.Database) -> int:
    """A click id never handed out before: an agent that was told "click 42" and undid it
    was told "click 42" again for another item (:mod:`hermes.storage.ids`)."""
    click_id = next_id(db, "clicks")
    taken(db, "clicks", click_id)  # the insert that follows is not one that may be ignored
    return click_id


def record_click(db: sqlite_utils.Database, user_id: int, item_id: int, liked: bool, source: str) -> dict:
    """The single click write path. A persona's new click on an item replaces its old one;
    the same answer from the same source again changes nothing (the click keeps its id and
    time, no observer is told: a trial's repeated like answered "unchanged" while its row
    was replaced under a new id and timestamp).

    :param source: ``ui`` (web UI), ``agent`` (MCP tools) or ``bootstrap``.
    :returns: the click as stored, with ``previous``: the label it replaced (``like``,
        ``dislike``; the same label when the answer is repeated), ``None`` for a first click.
    """
    _check_source(source)
    if not isinstance(liked, bool):
        raise InvalidInput(f"liked must be true or false, got {liked!r}")
    label = "like" if liked else "dislike"
    signal = Signal("click", user_id, item_id, op="set", data={"label": label}, source=source)
    with write_transaction(db):  # the check and the write see the same row
        same = db.execute(
            "SELECT id, created FROM clicks WHERE user_id = ? AND item_id = ? AND label = ? AND source = ?",
            [user_id, item_id, label, source],
        ).fetchone()
        if same is not None:
            return _click(same[0], signal, label, created=same[1], previous=label)
        return record_signal(db, signal, lambda db: _replace(db, signal, label)).result


def _replace(db, signal: Signal, label: str) -> dict:
    """Write the click over the persona's old one on the item (inside the signal's transaction)."""
    user_id, item_id = signal.user_id, signal.item_id
    before = label_of(db, user_id, item_id)
    db.execute("DELETE FROM clicks WHERE user_id = ? AND item_id = ?", [user_id, item_id])
    click_id = _next_click_id(db)
    db.execute(
        "INSERT INTO clicks (id, user_id, item_id, label, source, created) VALUES (?, ?, ?, ?, ?, ?)",
        [click_id, user_id, item_id, label, signal.source, signal.at],
    )
    return _click(click_id, signal, label, created=signal.at, previous=before)


def _click(click_id: int, signal: Signal, label: str, *, created: str, previous: str | None) -> dict:
    """A click as :func:`record_click` returns it."""
    return {
        "id": click_id,
        "user_id": signal.user_id,
        "item_id": signal.item_id,
        "label": label,
        "source": signal.source,
        "created": created,
        "previous": previous,
    }


def remove_click(db: sqlite_utils.Database, user_id: int, item_id: int, source: str) -> str | None:
    """Take back a persona's click on an item (an undo): the label taken back (``like`` /
    ``dislike``), None when there was none. The same write path as :func:`record_click`: one
    transaction, observers told (``op="delete"``)."""
    _check_source(source)
    signal = Signal("click", user_id, item_id, op="delete", source=source)

    def write(db):
        before = label_of(db, user_id, item_id)
        db.execute("DELETE FROM clicks WHERE user_id = ? AND item_id = ?", [user_id, item_id])
        return before

    return record_signal(db, signal, write).result


def remove_all_clicks(db: sqlite_utils.Database, user_id: int, source: str, *, of_source: str | None = None) -> int:
    """Delete every click of the persona (a reset or a deletion), or with ``of_source`` only
    the clicks that source recorded (``bootstrap``: a library import's and a bootstrap's),
    each through the signal path so observers see each removal; inside the caller's
    transaction when there is one. ``source`` is who removes them. Returns how many were
    removed."""
    where, args = _of_source(user_id, of_source)
    clicks = db.execute(f"SELECT id, item_id, label FROM clicks WHERE {where} ORDER BY id", args).fetchall()
    for click_id, item_id, label in clicks:
        signal = Signal("click", user_id, item_id, op="delete", data={"label": label}, source=source)
        record_signal(db, signal, lambda db, cid=click_id: db.execute("DELETE FROM clicks WHERE id = ?", [cid]))
    return len(clicks)


def _of_source(user_id: int, of_source: str | None) -> tuple[str, list]:
    """The WHERE clause (and its arguments) of a persona's clicks, of one source or all."""
    if of_source is None:
        return "user_id = ?", [user_id]
    _check_source(of_source)
    return "user_id = ? AND source = ?", [user_id, of_source]


# --- reading ----------------------------------------------------------------------------------


def label_of(db: sqlite_utils.Database, user_id: int, item_id: int) -> str | None:
    """The persona's label on the item (``like`` / ``dislike``), None when it has none."""
    row = db.execute("SELECT label FROM clicks WHERE user_id = ? AND item_id = ?", [user_id, item_id]).fetchone()
    return row[0] if row else None


def click_on(db: sqlite_utils.Database, user_id: int, item_id: int) -> dict | None:
    """The persona's click on the item, ``{"label", "source"}``, None when it has none."""
    row = db.execute(
        "SELECT label, source FROM clicks WHERE user_id = ? AND item_id = ?", [user_id, item_id]
    ).fetchone()
    return {"label": row[0], "source": row[1]} if row else None


def click_labels(db: sqlite_utils.Database, user_id: int, item_ids: list[int] | None = None) -> dict[int, str]:
    """``item_id -> label`` of the persona's clicks (of ``item_ids`` only, when given)."""
    if item_ids is None:
        return dict(db.execute("SELECT item_id, label FROM clicks WHERE user_id = ?", [user_id]))
    if not item_ids:
        return {}
    marks = ",".join("?" * len(item_ids))
    return dict(
        db.execute(
            f"SELECT item_id, label FROM clicks WHERE user_id = ? AND item_id IN ({marks})", [user_id, *item_ids]
        ).fetchall()
    )


def clicked_items(db: sqlite_utils.Database, user_id: int, *, of_source: str | None = None) -> list[int]:
    """The ids of every item the persona rated (with ``of_source``: rated by that source)."""
    where, args = _of_source(user_id, of_source)
    return [r[0] for r in db.execute(f"SELECT item_id FROM clicks WHERE {where}", args)]


def feedless_clicked_only_by(db: sqlite_utils.Database, source: str) -> list[int]:
    """The items no feed brought (``feed_id`` NULL) whose every click, of every persona, is
    ``source``'s (``bootstrap``: a library import's stored entries while its likes stand)."""
    _check_source(source)
    return [
        r[0]
        for r in db.execute(
            "SELECT item_id FROM clicks WHERE item_id IN (SELECT id FROM items WHERE feed_id IS NULL) "
            "GROUP BY item_id HAVING min(source = ?) = 1",
            [source],
        )
    ]


def feedless_unclicked(db: sqlite_utils.Database) -> list[int]:
    """The items no feed brought that no persona has a click on: a library entry whose like
    was taken back (``hermes unrate``, the web's undo, a reset of the ``ui`` click that had
    replaced the import's), or a saved page."""
    return [
        r[0]
        for r in db.execute("SELECT id FROM items WHERE feed_id IS NULL AND id NOT IN (SELECT item_id FROM clicks)")
    ]


def click_history(db: sqlite_utils.Database, user_id: int) -> list[tuple[int, bool, str]]:
    """The persona's clicks as ``(item_id, liked, source)``, oldest first."""
    return [
        (r[0], r[1] == "like", r[2])
        for r in db.execute("SELECT item_id, label, source FROM clicks WHERE user_id = ? ORDER BY id", [user_id])
    ]


def clicked_by_anyone(db: sqlite_utils.Database, item_id: int) -> bool:
    """Whether any persona's click is on ``item_id``."""
    return db.execute("SELECT 1 FROM clicks WHERE item_id = ? LIMIT 1", [item_id]).fetchone() is not None


def user_clicks(db: sqlite_utils.Database, user_id: int) -> list[tuple[int, bool]]:
    """The persona's clicks as ``(item_id, liked)`` pairs, oldest first (what ranking learns
    from)."""
    return [
        (r[0], r[1] == "like")
        for r in db.execute("SELECT item_id, label FROM clicks WHERE user_id = ? ORDER BY id", [user_id])
    ]


def liked_by(db: sqlite_utils.Database, user_id: int) -> dict[int, str]:
    """``item_id -> source`` of the persona's likes: who liked each (the person, an agent,
    bootstrap)."""
    return dict(
        db.execute("SELECT item_id, source FROM clicks WHERE user_id = ? AND label = 'like'", [user_id]).fetchall()
    )


def click_count(db: sqlite_utils.Database, user_id: int) -> int:
    """How many clicks the persona has."""
    return db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [user_id]).fetchone()[0]


def click_counts(db: sqlite_utils.Database, user_id: int, *, of_source: str | None = None) -> dict[str, int]:
    """``{"clicks", "likes", "dislikes"}`` of the persona (with ``of_source``: of that source's
    clicks only)."""
    where, args = _of_source(user_id, of_source)
    likes, dislikes = db.execute(
        f"SELECT coalesce(sum(label = 'like'), 0), coalesce(sum(label = 'dislike'), 0) FROM clicks WHERE {where}",
        args,
    ).fetchone()
    return {"clicks": likes + dislikes, "likes": likes, "dislikes": dislikes}


def click_counts_by_persona(db: sqlite_utils.Database) -> dict[int, dict[str, int]]:
    """:func:`click_counts` of every persona that has clicks, by user id (one query)."""
    return {
        user_id: {"clicks": likes + dislikes, "likes": likes, "dislikes": dislikes}
        for user_id, likes, dislikes in db.execute(
            "SELECT user_id, coalesce(sum(label = 'like'), 0), "
            "coalesce(sum(label = 'dislike'), 0) FROM clicks GROUP BY user_id"
        )
    }


def clicks_by_source(db: sqlite_utils.Database, user_id: int) -> dict[str, int]:
    """How many of the persona's clicks each source recorded (every source, 0 included)."""
    by_source = dict.fromkeys(CLICK_SOURCES, 0)
    for source, n in db.execute("SELECT source, count(*) FROM clicks WHERE user_id = ? GROUP BY source", [user_id]):
        by_source[source] = n
    return by_source


def clicks_with_embedding(db: sqlite_utils.Database, user_id: int, model: str) -> dict[str, tuple[int, int]]:
    """``label -> (clicks, clicked items embedded by model)`` of the persona."""
    return {
        label: (n, embedded or 0)
        for label, n, embedded in db.execute(
            """SELECT c.label, count(*), sum(i.embedding IS NOT NULL AND i.embedding_model = ?)
           FROM clicks c LEFT JOIN items i ON i.id = c.item_id
           WHERE c.user_id = ? GROUP BY c.label""",
            [model, user_id],
        ).fetchall()
    }


def recent_clicks(db: sqlite_utils.Database, user_id: int, limit: int) -> list[dict]:
    """The persona's last ``limit`` clicks, newest first, with the item's title."""
    return [
        {"item_id": item_id, "title": title, "rated": label, "source": source, "at": at}
        for item_id, title, label, source, at in db.execute(
            """SELECT c.item_id, i.title, c.label, c.source, c.created
                   FROM clicks c LEFT JOIN items i ON i.id = c.item_id
                   WHERE c.user_id = ? ORDER BY c.id DESC LIMIT ?""",
            [user_id, limit],
        )
    ]


def clicks_on_feed(db: sqlite_utils.Database, feed_id: int) -> int:
    """How many clicks (of every persona) are on the feed's items."""
    return db.execute(
        "SELECT count(*) FROM clicks WHERE item_id IN (SELECT id FROM items WHERE feed_id = ?)", [feed_id]
    ).fetchone()[0]
