"""A short concurrency soak: ``hermes ingest`` in a loop, a ``hermes serve`` stdio client and a
``hermes web`` client writing to one database for ~10 s. Nothing sent and acknowledged is
lost, no "database is locked" reaches a user, the database stays consistent. (The 60 s run
with more clients is benchmarks/hardening/soak.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "hardening"))

import pytest
import soak


@pytest.mark.slow  # some 16 s: three processes for 10 s, then the checks
def test_ingest_serve_and_web_on_one_database_lose_nothing():
    lines: list[str] = []
    result = soak.soak(10, n_mcp=1, n_web=1, out=lines.append)
    report = "\n".join(lines)
    assert result["runs"], report  # at least one ingest ran during the soak
    assert sum(result["ledger"].calls.values()) > 50, report
    assert not result["locks"], report
    assert not result["ledger"].errors, report
    assert soak.ok(result), report
