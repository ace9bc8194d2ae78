"""hermes's own handlers on the SDK's low-level server (issue 35): what the high-level
MCPServer used to answer for hermes, now answered by :class:`hermes.mcp_server.Handlers` —
a prompt refused with the protocol's invalid-params error naming what there is, a prompt's
arguments described from its ``render``, a tool the listing names but no plugin provides, a
failure around a tool, the (empty) resources, and ``hermes serve``'s log on stderr."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated

import mcp
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from process_support import child_env
from pydantic import Field

from hermes import mcp_server
from hermes.contract import Prompt
from hermes.hookspecs import hookimpl
from hermes.mcp_server import build_server, listing
from hermes.storage.records import create_user
from hermes.tools import collect_tools

pytestmark = pytest.mark.anyio


@pytest.fixture
def ann(db):
    return create_user(db, "ann", "quantum error correction")


async def _refusal(client, name, arguments) -> tuple[int, str]:
    with pytest.raises(MCPError) as refused:
        await client.get_prompt(name, arguments)
    return refused.value.error.code, refused.value.error.message


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_prompt_s_wrong_name_or_arguments_are_invalid_params_naming_what_there_is(db_path, ann, mode):
    """The SDK's MCPServer answered these with code 0 ("Missing required arguments: {'user'}",
    "Error rendering prompt triage") or, in the 2026-07-28 era, -32603 "Internal server error"."""
    async with mcp.Client(build_server(str(db_path)), mode=mode) as client:
        unknown = await _refusal(client, "triag", {"user": "ann"})
        missing = await _refusal(client, "triage", {"count": "3"})
        extra = await _refusal(client, "triage", {"user": "ann", "colour": "red"})
        fine = await client.get_prompt("triage", {"user": "ann", "count": "3"})
    assert unknown == (INVALID_PARAMS, "Unknown prompt: 'triag'. The prompts are: triage, worth_reading.")
    assert missing == (INVALID_PARAMS, "prompt triage needs user; its arguments are: user, count.")
    assert extra == (INVALID_PARAMS, "prompt triage has no argument 'colour'; its arguments are: user, count.")
    assert "limit=3" in fine.messages[0].content.text and fine.messages[0].role == "user"


async def test_a_prompt_s_arguments_come_from_its_render(pm, db_path):
    def render(word: Annotated[str, Field(description="the word to shout")], times: str = "1", *rest) -> str:
        return f"Shout {word} {times} times."

    def broken(word: str) -> str:
        raise RuntimeError("a bug with a secret in it")

    class Prompts:
        @hookimpl
        def hermes_register_prompts(self):
            return [Prompt("shout_it", "Shout it", "Shout a word.", render, ()), Prompt("oops", "", "", broken, ())]

    pm.register(Prompts(), name="shout-prompts")
    async with mcp.Client(build_server(str(db_path))) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        said = (await client.get_prompt("shout_it", {"word": "hi"})).messages[0].content.text
        failed = await _refusal(client, "oops", {"word": "hi"})
    arguments = [(a.name, a.description, a.required) for a in listed["shout_it"].arguments]
    assert arguments == [("word", "the word to shout", True), ("times", None, False)]
    assert listed["shout_it"].title == "Shout it" and listed["shout_it"].description == "Shout a word."
    assert said == "Shout hi 1 times."
    assert failed == (-32603, "Error rendering prompt oops") and "secret" not in failed[1]


async def test_a_listed_tool_no_plugin_provides_is_a_tool_error_saying_restart(db_path):
    """A listing kept between starts names a tool whose plugin changed since: the call says
    so (the SDK answered a bare "Error executing tool …")."""
    gone = {**listing(collect_tools()["list_users"]), "name": "gone_tool"}
    async with mcp.Client(build_server(str(db_path), listed=[gone])) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["gone_tool"]
        result = await client.call_tool("gone_tool", {})
    assert result.is_error is True
    assert result.content[0].text == "the tool gone_tool is no longer provided by any plugin; restart the server"


async def test_a_failure_around_a_tool_is_a_tool_error_that_keeps_its_details_in_the_log(db_path, monkeypatch, caplog):
    def fails(self):
        raise RuntimeError("/secret/path is unreadable")

    monkeypatch.setattr(mcp_server._Database, "open", fails)
    async with mcp.Client(build_server(str(db_path))) as client:
        result = await client.call_tool("list_users", {})
    assert result.is_error is True
    assert result.content[0].text == "Error executing tool list_users; the details are in the server's log"
    assert "/secret/path" in caplog.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_resources_are_listed_empty_and_nothing_else_is_served(db_path, mode):
    """As the SDK's MCPServer answered (a host may ask whatever the capabilities say); hermes
    serves tools and prompts, whose lists never change while it runs."""
    async with mcp.Client(build_server(str(db_path)), mode=mode) as client:
        capabilities = client.server_capabilities
        assert (await client.list_resources()).resources == []
        assert (await client.list_resource_templates()).resource_templates == []
    assert capabilities.tools is not None and capabilities.prompts is not None
    assert not capabilities.tools.list_changed and not capabilities.prompts.list_changed
    assert capabilities.completions is None and capabilities.logging is None


SERVE = {
    "stdio": "run_stdio(build_server(sys.argv[1]))",
    # uvicorn left out: run_http's own part, up to handing the app over
    "http": "net.serve_asgi = lambda app, sock: None\n"
    "run_http(build_server(sys.argv[1]), sock=net.bind('127.0.0.1', 0), host='127.0.0.1')",
}


@pytest.mark.parametrize("transport", sorted(SERVE))
def test_serving_logs_at_info_on_stderr(tmp_path, transport):
    """MCPServer set logging up (INFO, on stderr) as a side effect of its construction; the
    low-level server does not, so run_stdio and run_http do (stdout is the protocol's)."""
    code = "\n".join(
        [
            "import logging, sys",
            "from hermes import net",
            "from hermes.mcp_server import build_server, run_http, run_stdio",
            SERVE[transport],
            "logging.getLogger('hermes.probe').info('still told at INFO')",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "h.db")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(tmp_path / "home"),
    )
    assert done.returncode == 0, done.stderr
    assert "INFO hermes.probe: still told at INFO" in done.stderr and done.stdout == ""
