"""The one signal write path.

Every personal signal — a like/dislike click, reading progress, a highlight, a note, a
favorite — is written through :func:`record_signal`: inside one ``BEGIN IMMEDIATE``
transaction the caller's rows are written, then every ``hermes_signal_written`` observer
runs, then the transaction commits. Either all of it lands or none of it does. Clicks are
written (and read) by :mod:`hermes.storage.clicks`, through this path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ..contract import Signal
from ..errors import InvalidInput
from ..plugins import get_plugin_manager
from .transactions import write_transaction

if TYPE_CHECKING:  # annotations only: registering the click plugin loads no sqlite-utils (issue 36)
    import sqlite_utils


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
