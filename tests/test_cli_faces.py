"""Messages speak the face they are shown in: the same tool call names tools and parameters
over MCP, commands and options at the CLI, buttons and pages on the web. One mechanism
(:mod:`hermes.facekit.faces`), which also sets the signal source."""

from __future__ import annotations

import re

import pytest

from hermes.facekit import faces
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools


def tool_names() -> set[str]:
    return set(collect_tools())


def call(db, face, tool_name, /, **arguments):
    return call_tool(db, collect_tools()[tool_name], arguments, face=face)


@pytest.fixture
def world(db, add_items):
    ids = add_items([{"title": "A paper", "tags": ["x"], "days_ago": 30}])
    create_user(db, "ann", "x")
    return ids


CASES = [
    # (tool, arguments, MCP words, CLI words, web words)
    ("list_feed", {"user": "ann"}, "since_days", "--since-days", "longer period"),
    (
        "record_feedback",
        {"user": "ann", "item_id": 999, "liked": True},
        "list_feed or search_feed",
        "`hermes feed USER`",
        "go back to the feed",
    ),
    ("remove_feed", {"feed_id": 1, "confirm": False}, "confirm=true", "--yes", "Remove feed"),
    ("list_users", {}, "", "", ""),
    ("create_persona", {"name": "bob", "interests": "y"}, "bootstrap_persona", "hermes persona bootstrap", "✓ and ✗"),
    ("delete_persona", {"name": "ann", "confirm": False}, "confirm=true", "--yes", "button again"),
    ("digest", {"user": "ann"}, "larger days value", "--since-days N", "longer period"),
    ("search_feed", {"user": "ann", "query": ""}, "content_type", "--type", "words to search"),
    ("bootstrap_persona", {"name": "ann", "n_like": 0, "n_dislike": 0}, "n_like", "--likes", "likes"),
]


@pytest.mark.parametrize("tool, arguments, mcp, cli, web", CASES, ids=[c[0] for c in CASES])
def test_each_face_reads_its_own_words(db, world, tool, arguments, mcp, cli, web):
    said = {}
    for face in faces.FACES:
        args = {**arguments, "name": f"{arguments['name']}-{face}"} if tool == "create_persona" else arguments
        said[face] = call(db, face, tool, **args)["message"]
    assert mcp in said["mcp"] and cli in said["cli"] and web in said["web"], said
    names = tool_names()
    for face in ("cli", "web"):
        # A person never reads a tool name or a tool parameter spelled like one.
        words = set(re.findall(r"[a-z]+(?:_[a-z]+)+", said[face]))
        assert not (words & names), (face, said[face])
        assert not re.search(r"\w+=(true|false|null)", said[face]), said[face]
    assert "`hermes " not in said["web"]  # the browser has buttons, not commands


def test_cli_messages_never_name_tools_across_the_cli(db, db_path, world):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    names = tool_names()
    runs = [
        ["feed", "ann"],
        ["feed", "ann", "--all"],
        ["like", "ann", "999"],
        ["persona", "list"],
        ["persona", "reset", "ann"],
        ["feeds", "list"],
        ["feeds", "remove", "1"],
        ["persona", "search", "ann"],
        ["digest", "ann"],
        ["persona", "update", "ann", "--interests", "z"],
        ["persona", "bootstrap", "ann", "--likes", "0", "--dislikes", "0"],
        ["persona", "tags"],
    ]
    for args in runs:
        result = CliRunner().invoke(build_app(), [*args, "--db", str(db_path)])
        words = set(re.findall(r"[a-z]+(?:_[a-z]+)+", result.output))
        assert not (words & names), (args, result.output)
        assert "previous_interests" not in result.output and "confirm=" not in result.output


def test_the_face_sets_the_signal_source(db, world):
    [item] = world
    assert call(db, "mcp", "record_feedback", user="ann", item_id=item, liked=True)["click"]["source"] == "agent"
    assert call(db, "cli", "record_feedback", user="ann", item_id=item, liked=True)["click"]["source"] == "ui"
    assert call(db, "web", "record_feedback", user="ann", item_id=item, liked=False)["click"]["source"] == "ui"


def test_the_face_is_restored_after_a_call(db, world):
    call(db, "web", "list_users")
    assert faces.face() == "mcp"
    with faces.speaking("cli"):
        call(db, None, "list_users")  # None keeps the current face
        assert faces.face() == "cli"
    assert faces.face() == "mcp"


def test_say_formats_in_the_current_face():
    advice = faces.Say(mcp="call x", cli="run `hermes x`", web="press X")
    assert f"{advice}" == "call x"
    with faces.speaking("web"):
        assert f"then {advice}." == "then press X."
    with pytest.raises(ValueError):
        faces.enter("fax")


def test_mcp_server_speaks_mcp(db_path, db, world):
    import anyio
    import mcp

    from hermes.mcp_server import build_server

    async def go():
        async with mcp.Client(build_server(str(db_path))) as client:
            r = await client.call_tool("list_feed", {"user": "ann"})
            return r.structured_content["message"]

    message = anyio.run(go)
    assert "since_days" in message and "--since-days" not in message
