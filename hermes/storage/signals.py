"""The one signal write path.

Every personal signal — a like/dislike click, reading progress, a highlight, a note, a
favorite — is written through :func:`record_signal`: inside one ``BEGIN IMMEDIATE``
transaction the caller's rows are written, then every ``hermes_signal_written`` observer
runs, then the transaction commits. Either all of it lands or none of it does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import sqlite_utils

from ..contract import Signal
from ..errors import InvalidInput
from ..plugins import get_plugin_manager
from .transactions import write_transaction

CLICK_SOURCES = ("ui", "agent", "bootstrap")


def known_kinds() -> set[str]:
    kinds: set[str] = set()
    for group in get_plugin_manager().hook.hermes_register_signals():
        kinds.update(group or [])
    return kinds


class Recorded(NamedTuple):
    """What a signal write did: ``write``'s return value, and the observers' change records."""

    result: object
    observed: list[dict]


def record_signal(
    db: sqlite_utils.Database,
    signal: Signal,
    write: Callable[[sqlite_utils.Database], object],
) -> Recorded:
    """Write a signal and notify observers in one transaction.

    ``write`` must use ``db.execute`` only (sqlite-utils table helpers commit early).
    """
    if signal.kind not in known_kinds():
        raise InvalidInput(f"unknown signal kind {signal.kind!r}; no plugin declares it")
    with write_transaction(db):
        result = write(db)
        answers = get_plugin_manager().hook.hermes_signal_written(db=db, signal=signal)
    return Recorded(result, [change for answer in answers for change in answer or []])


def record_click(
    db: sqlite_utils.Database, user_id: int, item_id: int, liked: bool, source: str
) -> dict:
    """The single click write path. A persona's new click on an item replaces its old one.

    :param source: ``ui`` (web UI), ``agent`` (MCP tools) or ``bootstrap``.
    :returns: the click as stored, with ``previous``: the label it replaced (``like``,
        ``dislike``; the same label when the answer is repeated), ``None`` for a first click.
    """
    if source not in CLICK_SOURCES:
        raise InvalidInput(
            f"invalid click source {source!r}; expected one of {', '.join(CLICK_SOURCES)}"
        )
    if not isinstance(liked, bool):
        raise InvalidInput(f"liked must be true or false, got {liked!r}")
    label = "like" if liked else "dislike"
    signal = Signal("click", user_id, item_id, op="set", data={"label": label}, source=source)

    def write(db):
        before = db.execute("SELECT label FROM clicks WHERE user_id = ? AND item_id = ?",
                            [user_id, item_id]).fetchone()
        db.execute("DELETE FROM clicks WHERE user_id = ? AND item_id = ?", [user_id, item_id])
        cur = db.execute(
            "INSERT INTO clicks (user_id, item_id, label, source, created) VALUES (?, ?, ?, ?, ?)",
            [user_id, item_id, label, source, signal.at],
        )
        return {"id": cur.lastrowid, "user_id": user_id, "item_id": item_id, "label": label,
                "source": source, "created": signal.at,
                "previous": before[0] if before else None}

    return record_signal(db, signal, write).result


def remove_click(db: sqlite_utils.Database, user_id: int, item_id: int, source: str) -> str | None:
    """Take back a persona's click on an item (an undo): the label taken back (``like`` /
    ``dislike``), None when there was none. The same write path as :func:`record_click`: one
    transaction, observers told (``op="delete"``)."""
    if source not in CLICK_SOURCES:
        raise InvalidInput(
            f"invalid click source {source!r}; expected one of {', '.join(CLICK_SOURCES)}"
        )
    signal = Signal("click", user_id, item_id, op="delete", source=source)

    def write(db):
        row = db.execute("SELECT label FROM clicks WHERE user_id = ? AND item_id = ?",
                         [user_id, item_id]).fetchone()
        db.execute("DELETE FROM clicks WHERE user_id = ? AND item_id = ?", [user_id, item_id])
        return row[0] if row else None

    return record_signal(db, signal, write).result
