"""The MCP server: built from the collected tools, talked to by the SDK's own clients —
in process, over stdio (a real ``hermes serve`` child) and over streamable HTTP."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from typing import Annotated

import mcp
import numpy as np
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from process_support import child_env, free_port, hermes_command, running_hermes
from pydantic import Field

import hermes
from hermes.contract import Component, Result, ok, tool
from hermes.hookspecs import hookimpl
from hermes.mcp_server import build_server
from hermes.storage.records import create_user

pytestmark = pytest.mark.anyio

FEEDS_TOOLS = {
    "list_feed",
    "record_feedback",
    "remove_feedback",
    "explain_item",
    "add_feed",
    "preview_feed",
    "list_feeds",
    "remove_feed",
    "suggest_feeds",
    "rename_feed",
}


@pytest.fixture
def world(db, add_items):
    ids = add_items(
        [
            {"title": "Quantum error correction", "summary": "surface codes and qubits", "days_ago": 1},
            {"title": "Qubit entanglement", "summary": "quantum entangled qubits", "days_ago": 2},
            {"title": "Sourdough baking", "summary": "flour water salt", "days_ago": 1},
        ]
    )
    create_user(db, "ann", "quantum error correction with qubits")
    return ids


# --- in process ---------------------------------------------------------------------------


async def test_tools_list_has_schemas_descriptions_and_annotations(db_path, world):
    async with mcp.Client(build_server(str(db_path))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert FEEDS_TOOLS <= set(listed)
    lf = listed["list_feed"]
    props = lf.input_schema["properties"]
    assert "db" not in props and lf.input_schema["required"] == ["user"]
    assert props["limit"]["maximum"] == 100 and props["limit"]["default"] == 20
    assert {"type": "null"} in props["since_days"]["anyOf"] and props["since_days"]["default"] == 7
    # every parameter described but the persona (said once, in the instructions) and limit
    assert all(p.get("description") for n, p in props.items() if n not in ("user", "limit"))
    # said once, in the instructions, not in each description (issue 34)
    assert "untrusted" not in lf.description
    # a hint equal to the MCP default is left out (destructive means nothing for a read)
    assert lf.annotations.read_only_hint is True and lf.annotations.destructive_hint is None
    # the fields an agent reads are typed (issue 34), nullables as anyOf (--strict)
    assert lf.output_schema["properties"]["items"] == {"items": {"$ref": "#/$defs/RankedItem"}, "type": "array"}
    ranked = lf.output_schema["$defs"]["RankedItem"]
    assert {"id", "rank", "title", "url", "match", "reason"} <= set(ranked["required"])
    assert ranked["properties"]["url"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert ranked["properties"]["title"]["description"] == "third-party text"
    assert lf.title == "List feed"
    assert lf.output_schema["required"] == ["ok", "message"]
    rf = listed["remove_feed"]
    assert rf.annotations.destructive_hint is True and not rf.annotations.read_only_hint
    # confirm defaults to false: leaving it out gives the preview
    assert rf.input_schema["required"] == ["feed_id"]
    assert rf.input_schema["properties"]["confirm"]["default"] is False
    assert listed["add_feed"].annotations.open_world_hint is True
    assert listed["list_feeds"].annotations.open_world_hint is False


async def test_results_are_the_envelope_as_structured_content_and_text(db_path, world):
    async with mcp.Client(build_server(str(db_path))) as client:
        result = await client.call_tool("list_feed", {"user": "ann", "limit": 2})
    assert result.is_error is False
    body = result.structured_content
    assert body["ok"] is True and body["user"] == "ann" and len(body["items"]) == 2
    assert body["items"][0]["title"] == "Quantum error correction"
    assert json.loads(result.content[0].text) == body


async def test_nothing_to_show_is_a_fine_call_not_an_mcp_error(db_path, db):
    from hermes.storage.records import create_user

    create_user(db, "ann", "quantum error correction")
    async with mcp.Client(build_server(str(db_path))) as client:
        empty = await client.call_tool("digest", {"user": "ann"})
    assert empty.structured_content["nothing_to_show"] is True
    assert empty.structured_content["ok"] is False and empty.is_error is False


async def test_bad_arguments_and_domain_errors_never_crash_or_write(db_path, db, world):
    def clicks():
        return db.execute("SELECT count(*) FROM clicks").fetchone()[0]

    async with mcp.Client(build_server(str(db_path))) as client:
        unknown = await client.call_tool("record_feedback", {"user": "bob", "item_id": world[0], "liked": True})
        # a refusal: MCP's isError for a client that checks only that, the envelope for one
        # that reads it
        assert unknown.is_error is True and unknown.structured_content["ok"] is False
        assert "unknown persona 'bob'" in unknown.structured_content["message"]
        assert unknown.structured_content["click"] == {}
        missing_item = await client.call_tool("record_feedback", {"user": "ann", "item_id": 999, "liked": True})
        assert missing_item.structured_content["ok"] is False
        # argument errors come back in the envelope, naming the parameter and what it takes
        invalid = await client.call_tool("list_feed", {"user": "ann", "limit": 0})
        assert invalid.is_error is True and invalid.structured_content == {
            "ok": False,
            "message": "limit must be a whole number from 1 to 100, got 0.",
            "user": "ann",  # whose call was refused (a trial read "" as "no persona")
            "items": [],
            "above_bar": 0,
            "below_bar": 0,
            "left_out": 0,
            "errors": [{"field": "limit", "problem": "limit must be a whole number from 1 to 100, got 0."}],
        }
        wrong_type = await client.call_tool("record_feedback", {"user": "ann", "item_id": "abc", "liked": True})
        assert wrong_type.structured_content["message"] == (
            "item_id must be a whole number of at least 1 or a list of 1 to 50 (a whole number "
            'of at least 1 each), got "abc".'
        )
        no_confirm = await client.call_tool("remove_feed", {"feed_id": 1})
        assert no_confirm.structured_content["ok"] is False
        assert no_confirm.structured_content["removed"] is False
        refused = await client.call_tool("remove_feed", {"feed_id": 1, "confirm": False})
        assert refused.structured_content["ok"] is False and refused.structured_content["removed"] is False
        private = await client.call_tool("add_feed", {"url": "http://169.254.169.254/latest"})
        assert private.structured_content["ok"] is False
        # still serving after all that
        fine = await client.call_tool("list_feeds", {})
        assert fine.structured_content["ok"] is True and len(fine.structured_content["feeds"]) == 1
    assert clicks() == 0


async def test_an_unopenable_database_is_an_ok_false_result(tmp_path):
    (tmp_path / "dir.db").mkdir()
    async with mcp.Client(build_server(str(tmp_path / "dir.db"))) as client:
        result = await client.call_tool("list_feeds", {})
    assert result.structured_content["ok"] is False
    assert "is a directory" in result.structured_content["message"]
    assert result.structured_content["feeds"] == []


async def test_groups_restrict_the_tools_served(db_path):
    async with mcp.Client(build_server(str(db_path), {"feeds"})) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == FEEDS_TOOLS


# --- a third-party plugin -------------------------------------------------------------------


class Hello(Result):
    user: str = ""


@tool("thirdparty", result=Hello, read_only=True, idempotent=True)
def echo_persona(db, user: Annotated[str, Field(description="Persona name.", max_length=64)]) -> dict:
    """Say hello to a persona."""
    return ok(f"hello {user}", user=user)


class ThirdPartyPlugin:
    """Adds a tool and a scorer that boosts sourdough above everything."""

    @hookimpl
    def hermes_register_tools(self):
        return [echo_persona]

    @hookimpl
    def hermes_score(self, db, user, item_ids, vectors, context):
        titles = dict(db.execute("SELECT id, title FROM items").fetchall())
        scores = np.array([10.0 if "Sourdough" in titles[int(i)] else 0.0 for i in item_ids])
        return Component("bread_boost", "boost", scores, weight=5.0)


async def test_a_third_party_tool_is_served_and_its_scorer_changes_the_order(pm, db_path, world, no_bar):
    async with mcp.Client(build_server(str(db_path))) as client:
        before = (await client.call_tool("list_feed", {"user": "ann"})).structured_content["items"]
    assert before[-1]["title"] == "Sourdough baking"

    pm.register(ThirdPartyPlugin(), name="thirdparty")
    async with mcp.Client(build_server(str(db_path))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "echo_persona" in tools and tools["echo_persona"].annotations.read_only_hint
        hello = await client.call_tool("echo_persona", {"user": "ann"})
        assert hello.structured_content == {"ok": True, "message": "hello ann", "user": "ann"}
        after = (await client.call_tool("list_feed", {"user": "ann"})).structured_content["items"]
    assert after[0]["title"] == "Sourdough baking"
    assert "bread_boost" in after[0]["reason"]
    async with mcp.Client(build_server(str(db_path), {"feeds"})) as client:
        assert "echo_persona" not in {t.name for t in (await client.list_tools()).tools}


# --- no torch before a tool needs the model -------------------------------------------------


def test_importing_the_server_and_listing_tools_does_not_import_torch(tmp_path):
    code = textwrap.dedent("""
        import sys, anyio, mcp
        from hermes.mcp_server import build_server
        from hermes.tools import collect_tools

        tools = collect_tools()
        async def main():
            async with mcp.Client(build_server(sys.argv[1])) as client:
                return len((await client.list_tools()).tools)
        n = anyio.run(main)
        heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers", "sklearn")
                       if m in sys.modules)
        print(n, len(tools), ",".join(heavy) or "-")
    """)
    env = {**os.environ, **child_env(tmp_path / "home", HERMES_EMBEDDER=None)}
    env.pop("HERMES_EMBEDDER", None)
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "h.db")], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    served, collected, heavy = out.stdout.split()
    assert served == collected and int(served) >= len(FEEDS_TOOLS)
    assert heavy == "-"


# --- a real `hermes serve` child over stdio -------------------------------------------------


async def test_hermes_serve_over_stdio_without_an_embedder_set_lists_tools(tmp_path):
    params = StdioServerParameters(
        command=hermes_command()[0],
        args=[*hermes_command()[1:], "serve", "--db", str(tmp_path / "h.db")],
        env=child_env(tmp_path / "home", HERMES_EMBEDDER=None),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        hello = await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
    assert FEEDS_TOOLS <= names
    assert hello.server_info.name == "hermes" and hello.server_info.version == hermes.__version__


async def test_hermes_serve_over_stdio_end_to_end(db_path, db, world, tmp_path):
    params = StdioServerParameters(
        command=hermes_command()[0],
        args=[*hermes_command()[1:], "serve", "--db", str(db_path)],
        env=child_env(tmp_path / "home"),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        assert FEEDS_TOOLS <= names
        feed = await session.call_tool("list_feed", {"user": "ann", "limit": 5})
        items = feed.structured_content["items"]
        assert feed.structured_content["ok"] and items[0]["title"] == "Quantum error correction"
        liked = await session.call_tool("record_feedback", {"user": "ann", "item_id": items[0]["id"], "liked": True})
        assert liked.structured_content["ok"] is True
    rows = db.execute("SELECT item_id, label, source FROM clicks").fetchall()
    assert rows == [(items[0]["id"], "like", "agent")]


async def test_hermes_serve_tools_option_restricts_groups(tmp_path):
    params = StdioServerParameters(
        command=hermes_command()[0],
        args=[*hermes_command()[1:], "serve", "--db", str(tmp_path / "h.db"), "--tools", "feeds"],
        env=child_env(tmp_path / "home"),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
    assert names == FEEDS_TOOLS


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--tools", "feeds,nope"], "unknown tool group(s): nope"),
        (["--tools", ","], "at least one group"),
        (["--transport", "carrier-pigeon"], "unknown transport"),
        (["--transport", "http", "--host", "0.0.0.0"], "--allow-remote"),
    ],
)
def test_serve_refuses_bad_options_with_one_line(args, fragment, db_path):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    result = CliRunner().invoke(build_app(), ["serve", "--db", str(db_path), *args])
    assert result.exit_code == 1 and fragment in result.output
    assert result.output.count("\n") == 1


# --- streamable HTTP with a bearer token ----------------------------------------------------


@pytest.fixture
def http_server(tmp_path, db_path, world):
    port = free_port()
    env = child_env(tmp_path / "home", HERMES_MCP_TOKEN="s3cret-token")
    with running_hermes(["serve", "--transport", "http", "--port", str(port), "--db", str(db_path)], port, env):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_http_transport_requires_the_bearer_token(http_server, db):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as raw:
        missing = await raw.post(http_server, json=init, headers=headers)
        wrong = await raw.post(http_server, json=init, headers={**headers, "Authorization": "Bearer nope"})
        rebound = await raw.post(
            http_server,
            json=init,
            headers={**headers, "Authorization": "Bearer s3cret-token", "Host": "attacker.example"},
        )
    assert missing.status_code == 401 and wrong.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert rebound.status_code == 421  # DNS rebinding: a foreign Host header is refused

    async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as authed:
        async with (
            streamable_http_client(http_server, http_client=authed) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            assert FEEDS_TOOLS <= names
            liked = await session.call_tool("record_feedback", {"user": "ann", "item_id": 1, "liked": False})
            assert liked.structured_content["ok"] is True
    assert db.execute("SELECT label, source FROM clicks").fetchall() == [("dislike", "agent")]


def test_hermes_executable_is_available():
    assert hermes_command()[0] == sys.executable or shutil.which(hermes_command()[0])


@pytest.mark.parametrize(
    "args, env_token, warning, token",
    [
        (["--transport", "http"], None, None, None),
        (["--transport", "http"], "from-env", None, "from-env"),
        (["--transport", "http", "--token", "  t0k  "], None, "HERMES_MCP_TOKEN in the environment", "t0k"),
        (["--transport", "http", "--host", "0.0.0.0", "--allow-remote"], None, "WITHOUT a token", None),
        (
            ["--transport", "http", "--host", "192.0.2.7", "--allow-remote", "--token", "x"],
            None,
            "reachable from the network",
            "x",
        ),
        (["--transport", "http", "--host", "::1"], None, None, None),
    ],
)
def test_serve_http_options_reach_the_server(monkeypatch, db_path, args, env_token, warning, token):
    from typer.testing import CliRunner

    from hermes import mcp_server
    from hermes import net as sockets
    from hermes.cli.app import build_app

    seen = {}
    monkeypatch.setattr(mcp_server, "run_http", lambda server, **kw: seen.update(kw))
    monkeypatch.setattr(sockets, "bind", lambda host, port: {"host": host, "port": port})
    if env_token:
        monkeypatch.setenv("HERMES_MCP_TOKEN", env_token)
    else:
        monkeypatch.delenv("HERMES_MCP_TOKEN", raising=False)
    result = CliRunner().invoke(build_app(), ["serve", "--db", str(db_path), *args])
    assert result.exit_code == 0, result.output
    assert seen["token"] == token and seen["sock"]["port"] == 8766
    if warning:
        assert "warning:" in result.output and warning in result.output
    else:
        assert "warning" not in result.output
    # on loopback without a token the person is told who can call the tools, and how to close it
    no_token_note = "any program on this computer can call the tools" in result.output
    assert no_token_note == (token is None and "--allow-remote" not in args)


@pytest.mark.parametrize(
    "host, expected",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.org", False),
        ("::", False),
    ],
)
def test_is_loopback(host, expected):
    from hermes.net import is_loopback

    assert is_loopback(host) is expected


async def test_hermes_serve_keeps_feeds_fresh_in_the_background(tmp_path):
    import anyio
    from ingest_server import FeedServer, rss

    from hermes.ingest.pipeline import add_feeds
    from hermes.storage.db import get_db

    database = get_db(tmp_path / "h.db")
    with FeedServer() as server:
        add_feeds(database, [(server.add("/f.xml", body=rss([{"title": "Fresh", "link": "https://e.org/1"}])), None)])
        database.conn.close()
        params = StdioServerParameters(
            command=hermes_command()[0],
            args=[*hermes_command()[1:], "serve", "--db", str(tmp_path / "h.db")],
            env=child_env(tmp_path / "home", HERMES_INGEST_EVERY="1h"),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            with anyio.fail_after(90):
                while True:
                    listed = (await session.call_tool("list_feeds", {})).structured_content
                    if listed["feeds"][0]["item_count"]:
                        break
                    await anyio.sleep(0.5)
            assert listed["refresh"]["background"] is True and listed["refresh"]["every"] == 3600
            assert listed["refresh"]["next"] > listed["refresh"]["last_refresh"]
            assert "Next refresh due" in listed["message"]
        assert server.hits("/f.xml") == 1
