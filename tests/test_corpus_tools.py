"""The corpus tool group: registration, truthful annotations, the envelope, and MCP."""

from __future__ import annotations

import pytest

from hermes.tools import call_tool, collect_tools

READS = {"corpus", "corpus_items", "corpus_changes", "corpus_ranked", "corpus_entities", "recall", "export_corpus"}
WRITES = {
    "record_progress",
    "add_highlight",
    "delete_highlight",
    "add_note",
    "delete_note",
    "favorite",
    "save_item",
    "mark_read",
    "mark_unread",
}


@pytest.fixture
def setup(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items(
        [{"title": "Stellar streams", "tags": ["galaxies"], "arxiv_id": "2401.00001"}],
        feed_url="https://rss.arxiv.org/rss/astro-ph",
    )  # arXiv's own: stored
    return db, item


def test_the_group_and_its_annotations():
    tools = collect_tools({"corpus"})
    assert set(tools) == READS | WRITES
    for name, tool in tools.items():
        assert tool.group == "corpus" and tool.plugin == "corpus"
        assert tool.read_only is (name in READS), name
        assert tool.destructive is (name in {"delete_highlight", "delete_note"}), name
        assert tool.description and tool.fn.__doc__
    assert tools["favorite"].idempotent and not tools["record_progress"].idempotent
    assert tools["save_item"].open_world and tools["save_item"].idempotent
    assert not tools["add_highlight"].idempotent
    assert all(tools[n].idempotent for n in READS)


def test_success_and_failure_share_their_keys(setup):
    """Every tool's failure keeps the success-path keys (the ``empty=`` payload)."""
    db, item = setup
    tools = collect_tools({"corpus"})
    good = {
        "record_progress": {"user": "alice", "item_id": item, "fraction": 0.5},
        "add_highlight": {"user": "alice", "item_id": item, "text": "streams", "note": "n"},
        "add_note": {"user": "alice", "item_id": item, "text": "a note"},
        "favorite": {"user": "alice", "item_id": item},
        "mark_unread": {"user": "alice", "item_id": item},
        "delete_highlight": {"user": "alice", "highlight_id": 1, "confirm": True},
        "delete_note": {"user": "alice", "note_id": 1, "confirm": True},
        "corpus": {"user": "alice"},
        "corpus_items": {"user": "alice", "facet": "experienced"},
        "corpus_changes": {"user": "alice", "since": 0},
        "corpus_ranked": {"user": "alice"},
        "corpus_entities": {"user": "alice"},
        "recall": {"user": "alice", "query": "streams"},
        "export_corpus": {"user": "alice", "format": "ris"},
        "save_item": {"user": "alice", "ref": "arXiv:2401.00001v3"},  # stored: no fetch
    }
    for name in [
        "record_progress",
        "add_highlight",
        "add_note",
        "favorite",
        "mark_unread",
        "corpus",
        "corpus_items",
        "corpus_changes",
        "corpus_ranked",
        "corpus_entities",
        "recall",
        "export_corpus",
        "save_item",
        "delete_highlight",
        "delete_note",
    ]:
        ok = call_tool(db, tools[name], good[name])
        assert ok["ok"] is True, (name, ok)
        bad = call_tool(db, tools[name], {**good[name], "user": "nobody"})
        assert bad["ok"] is False and "unknown persona" in bad["message"], name
        assert set(bad) == set(ok), name
        assert set(tools[name].empty) == set(ok) - {"ok", "message"}, name


@pytest.mark.anyio
async def test_tools_over_mcp(setup, db_path):
    from mcp import Client

    from hermes.mcp_server import build_server

    db, item = setup
    async with Client(build_server(str(db_path), {"corpus"})) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == READS | WRITES
        schema = listed["record_progress"].input_schema
        assert set(schema["properties"]) == {"user", "item_id", "fraction", "new_session"}
        assert schema["properties"]["fraction"]["minimum"] == 0
        assert schema["properties"]["fraction"]["maximum"] == 1
        assert listed["delete_highlight"].annotations.destructive_hint is True
        assert listed["corpus"].annotations.read_only_hint is True

        r = await client.call_tool("record_progress", {"user": "alice", "item_id": item, "fraction": 0.7})
        assert r.structured_content["ok"] is True and r.structured_content["facet"] == "experienced"
        summary = (await client.call_tool("corpus", {"user": "alice"})).structured_content
        assert summary["revision"] == 1 and summary["experienced_count"] == 1
        refused = await client.call_tool("record_progress", {"user": "alice", "item_id": item, "fraction": 2})
        # refused at the tool boundary, before the tool runs, in the envelope
        assert refused.structured_content["ok"] is False
        assert refused.structured_content["message"] == "fraction must be a number from 0 to 1, got 2."
    assert db.execute("SELECT max_fraction FROM corpus_progress").fetchone()[0] == 0.7


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_mark_unread_takes_back_read_but_not_a_capture(setup):
    """The web UI's undo of "read": progress back to 0, a tombstone logged; an item with a
    note stays experienced; the persona's other signals are kept."""
    db, item = setup
    tools = collect_tools({"corpus"})
    call_tool(db, tools["record_progress"], {"user": "alice", "item_id": item, "fraction": 1.0})
    undone = call_tool(db, tools["mark_unread"], {"user": "alice", "item_id": item})
    assert undone["ok"] and undone["changed"] and undone["facet"] is None
    assert [c["kind"] for c in undone["changes"]] == ["removed"]
    assert db.execute("SELECT max_fraction, opens FROM corpus_progress").fetchone() == (0, 1)
    again = call_tool(db, tools["mark_unread"], {"user": "alice", "item_id": item})
    assert again["ok"] and again["changed"] is False and again["changes"] == []
    call_tool(db, tools["add_note"], {"user": "alice", "item_id": item, "text": "kept"})
    call_tool(db, tools["record_progress"], {"user": "alice", "item_id": item, "fraction": 1.0})
    kept = call_tool(db, tools["mark_unread"], {"user": "alice", "item_id": item})
    assert kept["facet"] == "experienced"  # the note still makes it experienced


def test_exclude_read_leaves_read_items_out_of_a_ranking(setup):
    from hermes.contract import CandidateQuery
    from hermes.ranking.rank import rank
    from hermes.storage.records import require_user

    db, item = setup
    user = require_user(db, "alice")
    query = CandidateQuery(since_days=None, exclude_read=True)
    assert list(rank(db, user, query).item_ids) == [item]
    call_tool(db, collect_tools()["record_progress"], {"user": "alice", "item_id": item, "fraction": 1.0})
    assert list(rank(db, user, query).item_ids) == []
    assert list(rank(db, user, CandidateQuery(since_days=None)).item_ids) == [item]
