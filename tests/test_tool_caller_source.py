"""Signals written through a tool carry who called it: the web UI says 'ui', MCP 'agent'."""

from __future__ import annotations

import anyio
import pytest
from web_support import client, seed, token

from hermes.hookspecs import hookimpl


class SourceSpy:
    def __init__(self):
        self.seen = []

    @hookimpl
    def hermes_signal_written(self, db, signal):
        self.seen.append((signal.kind, signal.source))


@pytest.fixture
def spy(pm):
    observer = SourceSpy()
    pm.register(observer, name="source_spy")
    return observer


def test_web_actions_write_signals_with_source_ui(db, db_path, add_items, spy):
    ids = seed(db, add_items)
    web = client(db_path)
    csrf = token(web, "/feed?user=ada")
    for path, data in (
        ("/read", {"item_id": ids[0]}),
        ("/favorite", {"item_id": ids[1], "on": "1"}),
        ("/click", {"item_id": ids[2], "liked": "1"}),
    ):
        r = web.post(
            path,
            data={"user": "ada", "csrf_token": csrf, **data},
            headers={"origin": "http://testserver"},
            follow_redirects=False,
        )
        assert r.status_code == 303, r.text
    assert {("progress", "ui"), ("favorite", "ui"), ("click", "ui")} <= set(spy.seen)
    assert all(source == "ui" for _, source in spy.seen)


def test_mcp_tool_calls_write_signals_with_source_agent(db, db_path, add_items, spy):
    import mcp

    from hermes.mcp_server import build_server

    ids = seed(db, add_items)

    async def go():
        async with mcp.Client(build_server(str(db_path))) as c:
            r = await c.call_tool("record_progress", {"user": "ada", "item_id": ids[0], "fraction": 1.0})
            assert r.structured_content["ok"], r.structured_content

    anyio.run(go)
    assert spy.seen == [("progress", "agent")]


def test_record_feedback_records_who_called_it(db, add_items, spy):
    from hermes.tools import call_tool, collect_tools

    ids = seed(db, add_items)
    tool = collect_tools()["record_feedback"]
    assert call_tool(db, tool, {"user": "ada", "item_id": ids[0], "liked": True}, face="web")["ok"]
    assert call_tool(db, tool, {"user": "ada", "item_id": ids[1], "liked": False})["ok"]
    assert spy.seen == [("click", "ui"), ("click", "agent")]
    sources = dict(db.execute("SELECT item_id, source FROM clicks").fetchall())
    assert sources == {ids[0]: "ui", ids[1]: "agent"}
    remove = collect_tools()["remove_feedback"]
    assert call_tool(db, remove, {"user": "ada", "item_id": ids[1]})["removed"] == "dislike"
    assert spy.seen[-1] == ("click", "agent")


def test_cli_commands_call_tools_as_a_person(pm):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app
    from hermes.tools import caller

    class Command:
        @hookimpl
        def hermes_register_commands(self, app):
            @app.command("whoami")
            def whoami():
                print(caller())

    pm.register(Command(), name="whoami")
    assert CliRunner().invoke(build_app(), ["whoami"]).output.strip() == "ui"
    assert caller() == "agent"  # reset when the command ends
