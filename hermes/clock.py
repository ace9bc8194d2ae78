"""The clock every stored timestamp is read from: a leaf the contract can import without
pulling in storage (records.py re-exports it for its older callers)."""

from __future__ import annotations

from datetime import datetime, timezone


def now_iso() -> str:
    """The current UTC time as every stored timestamp is written (ISO 8601, seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
