"""The persona tools through a real MCP client session, in process."""

from __future__ import annotations

import mcp
import pytest
from test_persona_support import archive  # noqa: F401

from hermes.mcp_server import build_server

pytestmark = pytest.mark.anyio


async def call(client, tool_name, /, **arguments) -> dict:
    result = await client.call_tool(tool_name, arguments)
    body = result.structured_content  # the envelope, refusals included (with isError)
    assert result.is_error == (body["ok"] is False and not body.get("nothing_to_show")), body
    return body


async def test_persona_tools_are_listed_with_schemas_and_annotations(db_path, archive):
    async with mcp.Client(build_server(str(db_path), {"persona"})) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {
        "list_users",
        "create_persona",
        "propose_interests",
        "update_persona",
        "rename_persona",
        "profile_status",
        "search_feed",
        "delete_persona",
        "reset_feedback",
        "bootstrap_persona",
        "import_library",
    }
    delete = tools["delete_persona"]
    assert delete.annotations.destructive_hint is True and not delete.annotations.read_only_hint
    assert delete.input_schema["required"] == ["name"]  # confirm defaults to false
    assert "db" not in delete.input_schema["properties"]
    assert tools["search_feed"].annotations.read_only_hint is True
    limit = tools["search_feed"].input_schema["properties"]["limit"]
    assert limit["minimum"] == 1 and limit["maximum"] == 50
    assert tools["create_persona"].input_schema["properties"]["interests"]["maxLength"] == 4000


async def test_an_agent_creates_searches_gives_feedback_and_sees_the_profile_change(db_path, archive):
    async with mcp.Client(build_server(str(db_path))) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        if "record_feedback" not in names:
            pytest.skip("record_feedback (feeds tool group) is not registered yet")

        created = await call(client, "create_persona", name="alice", interests="protein structure")
        assert created["ok"], created["message"]
        before = await call(client, "profile_status", user="alice")
        assert before["clicks"] == 0 and before["classifier_active"] is False

        found = await call(client, "search_feed", user="alice", query="graph")
        assert found["ok"] and found["count"] == 2
        old_paper = next(r for r in found["results"] if r["id"] == archive[0])  # 400 days old
        assert old_paper["rated"] is None

        feedback = await call(client, "record_feedback", user="alice", item_id=old_paper["id"], liked=True)
        assert feedback["ok"], feedback["message"]

        after = await call(client, "profile_status", user="alice")
        assert after["clicks"] == 1 and after["likes"] == 1
        assert after["clicks_by_source"] == {"ui": 0, "agent": 1, "bootstrap": 0}
        assert after["blend_weight"] > before["blend_weight"]
        assert {e["key"] for e in after["liked_tags"]} == {"cs.lg", "chemistry"}

        again = await call(client, "search_feed", user="alice", query="graph")
        assert {r["id"]: r["rated"] for r in again["results"]}[archive[0]] == "like"

    from hermes.storage.db import get_db

    db = get_db(db_path)
    try:
        assert db.execute("SELECT source FROM clicks").fetchall() == [("agent",)]
    finally:
        db.conn.close()


async def test_bootstrap_through_mcp_writes_bootstrap_clicks(db_path, archive, split_bar):
    async with mcp.Client(build_server(str(db_path), {"persona"})) as client:
        await call(client, "create_persona", name="alice", interests="graph neural networks")
        done = await call(client, "bootstrap_persona", name="alice", n_like=2, n_dislike=2)
        assert done["ok"] and len(done["liked"]) == 2
        status = await call(client, "profile_status", user="alice")
        assert status["clicks_by_source"] == {"ui": 0, "agent": 0, "bootstrap": 4}


async def test_bad_arguments_come_back_as_errors_and_write_nothing(db_path, archive):
    async with mcp.Client(build_server(str(db_path), {"persona"})) as client:
        huge = await client.call_tool("create_persona", {"name": "alice", "interests": "x" * 100_000})
        assert huge.is_error or huge.structured_content["ok"] is False
        limit = await client.call_tool("search_feed", {"user": "alice", "query": "graph", "limit": -1})
        assert limit.is_error or limit.structured_content["ok"] is False
        unknown = await call(client, "profile_status", user="nobody")
        assert unknown["ok"] is False and "unknown persona" in unknown["message"]
        refused = await call(client, "create_persona", name="-rf", interests="graphs")
        assert refused["ok"] is False
        users = await call(client, "list_users")
        assert users["users"] == []
        await call(client, "create_persona", name="alice", interests="graphs")
        kept = await call(client, "delete_persona", name="alice", confirm=False)
        assert kept["ok"] is False and "persona 'alice'" in kept["message"]
        assert [u["name"] for u in (await call(client, "list_users"))["users"]] == ["alice"]
