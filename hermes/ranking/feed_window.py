"""The window of a persona's feed: the one ``hermes feed`` was last given, remembered per
persona (the web feed starts from it too, and keeps its own choice in a cookie: a GET never
writes the database), and — when the window holds nothing unread but the archive does —
the narrowest wider window that has items, to offer instead of an empty page.

A window is a number of days, or ``None`` for the whole archive.
"""

from __future__ import annotations

from hermes.contract import CandidateQuery
from hermes.embed import get_embedder
from hermes.ranking.matrix import get_matrix
from hermes.ranking.rank import candidate_rows
from hermes.storage.transactions import write_transaction

DEFAULT_DAYS = 7
#: the windows offered when the chosen one is empty, narrowest first (None: all)
WIDER = (30, 365, None)


def chosen_window(db, user: dict) -> float | None:
    """The window ``user`` (a persona row) last chose; 7 days until they choose one."""
    row = db.execute("SELECT feed_window FROM users WHERE id = ?", [user["id"]]).fetchone()
    if row is None or row[0] is None:
        return DEFAULT_DAYS
    if row[0] == "all":
        return None
    days = float(row[0])
    # a whole number of days as one: every face writes it ("the last 7 days", not "7.0 days")
    return int(days) if days.is_integer() else days


def remember_window(db, user: dict, days: float | None) -> None:
    """Keep ``days`` as the window ``user`` sees next time (a no-op when it already is)."""
    value = "all" if days is None else f"{days:g}"
    with write_transaction(db):
        db.execute("UPDATE users SET feed_window = ? WHERE id = ? AND feed_window IS NOT ?", [value, user["id"], value])


def wider_than(days: float | None) -> list[float | None]:
    """The windows of :data:`WIDER` wider than ``days``, narrowest first (none wider than the
    whole archive)."""
    if days is None:
        return []
    return [wider for wider in WIDER if wider is None or wider > days]


def wider_window(db, user: dict, days: float | None, more_than: int = 0) -> tuple[float | None, int] | None:
    """The narrowest window wider than ``days`` with more than ``more_than`` unread items
    (the ones ``days`` holds: a wider window holding the same items is nothing to offer — a
    trial was sent from 7 to 30 to 365 days over the same 147), and how many it holds;
    ``None`` when there is none (``days`` is already the whole archive, or none holds more)."""
    embedder = get_embedder()
    matrix = get_matrix(db, embedder.name, embedder.dimension)
    for wider in wider_than(days):
        n = len(candidate_rows(db, user, CandidateQuery(since_days=wider, exclude_read=True), matrix))
        if n > more_than:
            return wider, n
    return None
