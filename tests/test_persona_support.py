"""Shared fixtures and helpers for the persona tests (imported by the test_persona_* modules;
it holds no tests of its own)."""

from __future__ import annotations

import pytest

from hermes.storage.records import require_user
from hermes.tools import call_tool, collect_tools

ARCHIVE = [
    # 0: old: only a search over the whole archive finds it
    {
        "title": "Graph neural networks for molecules",
        "summary": "Message passing on molecular graphs.",
        "tags": ["cs.LG", "chemistry"],
        "content_type": "paper",
        "days_ago": 400,
    },
    {
        "title": "Protein folding with transformers",
        "summary": "Attention models predict protein structure.",
        "tags": ["q-bio", "cs.LG"],
        "content_type": "paper",
        "days_ago": 2,
    },
    {
        "title": "Sourdough baking at home",
        "summary": "Starter, flour, water and patience.",
        "tags": ["cooking"],
        "content_type": "article",
        "days_ago": 1,
    },
    # 3-5: SQL wildcards and a quote in the text
    {
        "title": "Why 100% reproducible builds matter",
        "summary": "Bit for bit identical artifacts.",
        "tags": ["software"],
        "content_type": "article",
        "days_ago": 3,
    },
    {
        "title": "snake_case naming conventions",
        "summary": "Underscores between words.",
        "tags": ["software"],
        "content_type": "article",
        "days_ago": 4,
    },
    {
        "title": "O'Reilly interview on graph databases",
        "summary": "Property graphs and queries.",
        "tags": ["databases"],
        "content_type": "podcast",
        "days_ago": 5,
    },
    {
        "title": "Reinforcement learning for robots",
        "summary": "Learning policies for robot arms.",
        "tags": ["cs.RO", "cs.LG"],
        "content_type": "video",
        "days_ago": 30,
    },
    {
        "title": "Gardening tips for spring",
        "summary": "Seeds, soil and sunlight.",
        "tags": ["garden"],
        "content_type": "article",
        "days_ago": 6,
    },
]


@pytest.fixture
def archive(add_items):
    """The item ids of :data:`ARCHIVE`, in order."""
    return add_items(ARCHIVE)


def tool(db, tool_name, /, **arguments) -> dict:
    """Call a registered tool the way the MCP server does (through ``call_tool``)."""
    return call_tool(db, collect_tools()[tool_name], arguments)


def snapshot(db) -> dict:
    """Every row of every table: compared before and after a call that must write nothing."""
    tables = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    return {t: sorted(map(repr, db.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}


def make_persona(db, name="alice", interests="graph neural networks for molecules") -> dict:
    result = tool(db, "create_persona", name=name, interests=interests)
    assert result["ok"], result["message"]
    return require_user(db, name)
