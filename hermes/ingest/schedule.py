"""When each feed is next due for a fetch, for the background refresh and ``hermes ingest
--due`` / ``--watch``.

A feed is due ``every`` (``[ingest] every``, an hour by default) after its last fetch, or
later when it asks for less: its own ``<ttl>`` / ``sy:updatePeriod`` (at most a day, so a
feed that declares a week is still seen daily), a server's ``Retry-After`` and the failure
backoff (both kept in ``feeds.retry_after`` by the pipeline). A feed never fetched is due now.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlite_utils

from ..clock import read_stamp

#: a feed's own ttl is honoured up to this long
MAX_TTL = timedelta(days=1)
#: how soon after the previous one a scheduler looks again, at the earliest (a feed due in
#: two seconds is fetched a little late rather than in a tight loop)
MIN_WAIT = 1.0

_COLUMNS = ("id", "url", "last_fetched", "retry_after", "ttl")


def next_due(feed: dict, every: float) -> datetime:
    """When ``feed`` (a row with ``last_fetched``, ``retry_after``, ``ttl`` seconds) is due."""
    last = read_stamp(feed.get("last_fetched"))
    due = datetime.min.replace(tzinfo=UTC)
    if last is not None:
        ttl = timedelta(seconds=feed.get("ttl") or 0)
        due = last + max(timedelta(seconds=every), min(ttl, MAX_TTL))
    retry = read_stamp(feed.get("retry_after"))
    return max(due, retry) if retry else due


def feed_schedule(db: sqlite_utils.Database) -> list[dict]:
    have = set(db["feeds"].columns_dict)
    cols = [c for c in _COLUMNS if c in have]
    rows = [dict(zip(cols, r, strict=True)) for r in db.execute(f"SELECT {', '.join(cols)} FROM feeds ORDER BY id")]
    for row in rows:
        row.setdefault("ttl", None)
    return rows


def due_ids(db: sqlite_utils.Database, every: float, now: datetime | None = None) -> list[int]:
    """The feeds due by ``now``."""
    now = now or datetime.now(UTC)
    return [f["id"] for f in feed_schedule(db) if next_due(f, every) <= now]


def next_refresh(db: sqlite_utils.Database, every: float) -> datetime | None:
    """The earliest time any feed is due (in the past when one is overdue); None without feeds."""
    feeds = feed_schedule(db)
    return min((next_due(f, every) for f in feeds), default=None)


def seconds_until(when: datetime | None, every: float, now: datetime | None = None) -> float:
    """How long a scheduler sleeps before looking again: until ``when``, at least
    :data:`MIN_WAIT`, at most ``every`` (feeds added meanwhile are picked up)."""
    if when is None:
        return max(every, MIN_WAIT)
    now = now or datetime.now(UTC)
    return min(max((when - now).total_seconds(), MIN_WAIT), max(every, MIN_WAIT))


def iso(when: datetime | None) -> str | None:
    if when is None or when.year < 2:
        return None
    return when.astimezone(UTC).isoformat(timespec="seconds")


__all__ = ["MAX_TTL", "due_ids", "feed_schedule", "iso", "next_due", "next_refresh", "seconds_until"]
