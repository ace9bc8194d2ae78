"""The one signal write path.

Every personal signal — a like/dislike click, reading progress, a highlight, a note, a
favorite — is written through :func:`record_signal`: inside one ``BEGIN IMMEDIATE``
transaction the caller's rows are written, then every ``hermes_signal_written`` observer
runs, then the transaction commits. Either all of it lands or none of it does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

import sqlite_utils

from .db import file_of, write_transaction
from .errors import InvalidInput, NotFound
from .faces import CREATE_PERSONA, FIND_ITEMS

CLICK_SOURCES = ("ui", "agent", "bootstrap")
CLICK_LABELS = ("like", "dislike")


@dataclass(frozen=True)
class Signal:
    kind: str
    user_id: int
    item_id: int
    op: str = "set"  # "add", "delete" or "set"
    data: dict = field(default_factory=dict)
    source: str = "agent"
    at: str = field(default_factory=lambda: now_iso())


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def known_kinds() -> set[str]:
    from .plugins import get_plugin_manager

    kinds: set[str] = set()
    for group in get_plugin_manager().hook.hermes_register_signals():
        kinds.update(group or [])
    return kinds


def record_signal(
    db: sqlite_utils.Database,
    signal: Signal,
    write: Callable[[sqlite_utils.Database], object],
) -> object:
    """Write a signal and notify observers in one transaction; return what ``write`` did.

    ``write`` must use ``db.execute`` only (sqlite-utils table helpers commit early).
    """
    from .plugins import get_plugin_manager

    if signal.kind not in known_kinds():
        raise InvalidInput(f"unknown signal kind {signal.kind!r}; no plugin declares it")
    with write_transaction(db):
        result = write(db)
        get_plugin_manager().hook.hermes_signal_written(db=db, signal=signal)
    return result


def require_user(db: sqlite_utils.Database, name_or_id: str | int) -> dict:
    """The persona row, or :class:`NotFound` naming the personas that exist."""
    if isinstance(name_or_id, bool):
        raise InvalidInput("a persona is named by a string")
    col = "id" if isinstance(name_or_id, int) else "name"
    row = db.execute(
        f"SELECT id, name, interests FROM users WHERE {col} = ?", [name_or_id]
    ).fetchone()
    if row is None:
        names = [r[0] for r in db.execute("SELECT name FROM users ORDER BY name LIMIT 20")]
        hint = f"known personas: {', '.join(names)}" if names else f"no personas exist yet; {CREATE_PERSONA}"
        raise NotFound(f"unknown persona {name_or_id!r} in {file_of(db)}; {hint}")
    return {"id": row[0], "name": row[1], "interests": row[2]}


def require_item(db: sqlite_utils.Database, item_id: int) -> dict:
    if isinstance(item_id, bool) or not isinstance(item_id, int):
        raise InvalidInput(f"item_id must be an integer, got {item_id!r}")
    row = db.execute("SELECT id, title, feed_id FROM items WHERE id = ?", [item_id]).fetchone()
    if row is None:
        raise NotFound(f"unknown item {item_id} in {file_of(db)}; {FIND_ITEMS}")
    return {"id": row[0], "title": row[1], "feed_id": row[2]}


def record_click(
    db: sqlite_utils.Database, user_id: int, item_id: int, liked: bool, source: str
) -> dict:
    """The single click write path. A persona's new click on an item replaces its old one.

    :param source: ``ui`` (web UI), ``agent`` (MCP tools) or ``bootstrap``.
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
        db.execute("DELETE FROM clicks WHERE user_id = ? AND item_id = ?", [user_id, item_id])
        cur = db.execute(
            "INSERT INTO clicks (user_id, item_id, label, source, created) VALUES (?, ?, ?, ?, ?)",
            [user_id, item_id, label, source, signal.at],
        )
        return {"id": cur.lastrowid, "user_id": user_id, "item_id": item_id, "label": label,
                "source": source, "created": signal.at}

    return record_signal(db, signal, write)


from .hookspecs import hookimpl  # noqa: E402  (this module is also the plugin declaring clicks)


@hookimpl
def hermes_register_signals():
    return ["click"]
