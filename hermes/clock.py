"""The clock every stored timestamp is written by (:func:`now_iso`) and read back with
(:func:`read_stamp`): a leaf the contract can import without pulling in storage (records.py
re-exports ``now_iso`` for its older callers)."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """The current UTC time as every stored timestamp is written (ISO 8601, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_stamp(value) -> datetime | None:
    """A stored timestamp as an aware datetime: what :func:`now_iso` writes, a trailing ``Z``,
    or no zone at all (read as UTC); ``None`` when it is empty or not a timestamp."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


#: how much of a stored timestamp its source vouches for, by ``date_source`` (an imported
#: library entry's year or month alone is stored as the period's first day, to sort)
PRECISION = {"year only": 4, "month only": 7}


def as_precise(stamp: str | None, date_source: str | None) -> str | None:
    """``stamp`` no more precise than its source gave it: "1998" for a year alone, "1998-03"
    for a month, the stamp itself otherwise."""
    cut = PRECISION.get(date_source or "")
    return stamp[:cut] if stamp and cut else stamp
