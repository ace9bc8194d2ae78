"""``hermes serve`` says which database it uses (stderr at start, the server instructions,
``list_users``), starts a missing one with the starter feeds, and stops on Ctrl-C."""

from __future__ import annotations

import json
import time

import anyio
import mcp
import pytest
from process_support import child_env, hermes_command, sigint_as_on_a_terminal

from hermes.mcp_server import build_server

pexpect = pytest.importorskip("pexpect")


def test_instructions_and_list_users_name_the_database(db, db_path):
    async def go():
        async with mcp.Client(build_server(str(db_path))) as client:
            users = await client.call_tool("list_users", {})
            return client.instructions, users.structured_content["message"]

    instructions, message = anyio.run(go)
    assert f"Database: {db_path}." in instructions
    # answers keep the feed's TeX ("Koll\'ar"), which the CLI and web show as Unicode
    assert "TeX included" in instructions and "render it for a person" in instructions
    assert str(db_path) in message and "create_persona" in message


def test_serve_logs_the_database_on_stderr_and_ctrl_c_stops_it(tmp_path):
    db_path = tmp_path / "served.db"
    cmd = hermes_command()
    child = pexpect.spawn(
        cmd[0],
        [*cmd[1:], "serve", "--db", str(db_path)],
        env=child_env(tmp_path / "home"),
        encoding="utf-8",
        timeout=60,
        preexec_fn=sigint_as_on_a_terminal,
    )
    child.expect("hermes MCP server \\(stdio\\): database ")
    child.expect("Ctrl-C stops it")
    assert str(db_path) in child.before and "from --db" in child.before
    assert db_path.exists()  # created at start (and said so), not at the first tool call
    time.sleep(0.5)
    child.sendintr()
    child.expect("hermes MCP server stopped", timeout=10)
    child.expect(pexpect.EOF, timeout=10)
    child.close()
    assert child.signalstatus is None and child.exitstatus == 130


def test_serve_over_stdio_answers_with_the_database_in_its_instructions(tmp_path):
    """Through a real stdio client: the host's environment decides the database, and the
    agent is told which one it got."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = tmp_path / "home"
    cmd = hermes_command()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "serve"], env=child_env(home))

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                users = await session.call_tool("list_users", {})
                return init.instructions, json.loads(users.content[0].text)["message"]

    instructions, message = anyio.run(go)
    default = home / "hermes.db"
    assert f"Database: {default}." in instructions and str(default) in message


def test_unknown_tool_group_lists_the_known_ones(db_path):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    result = CliRunner().invoke(build_app(), ["serve", "--tools", "feeds,nope", "--db", str(db_path)])
    assert result.exit_code == 1
    assert "unknown tool group(s): nope; known: corpus, digest, feeds, persona" in result.stderr
