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
