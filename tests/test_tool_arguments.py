"""One way to define a tool, arguments checked strictly at the tool boundary (issues 12 and 13).

A bool is not a number, a string is not a bool, ``confirm`` must be the JSON literal ``true``;
every string parameter has a length limit and a bad value is quoted only as a short excerpt;
the refusal is the ``ok`` / ``message`` envelope naming the parameter, the same from MCP, a
direct call (the CLI) and the web UI's tool path.
"""

from __future__ import annotations

import inspect
import typing

import mcp
import pytest

from hermes.arguments import excerpt, expects
from hermes.contract import Result, Tool, tool
from hermes.mcp_server import build_server
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools


@pytest.fixture
def world(db, add_items):
    ids = add_items([{"title": "Quantum codes"}, {"title": "Surface codes"}])
    db.execute("INSERT INTO feeds (url, title, added) VALUES ('https://example.org/f.xml', 'F', '2024-01-01')")
    create_user(db, "ann", "quantum error correction")
    return ids


def counts(db) -> dict:
    return {
        t: db.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0]
        for t in db.table_names()
        if t not in ("kg_cache", "explanations", "meta")
    }


# --- the coercions the security review found ------------------------------------------------

COERCIONS = [
    ("remove_feed", {"feed_id": True, "confirm": True}, "feed_id must be a whole number"),
    ("remove_feed", {"feed_id": 1, "confirm": "true"}, "confirm must be true or false"),
    ("delete_highlight", {"user": "ann", "highlight_id": True, "confirm": True}, "highlight_id must be"),
    ("delete_persona", {"name": "ann", "confirm": "true"}, "confirm must be true or false"),
    ("reset_feedback", {"name": "ann", "confirm": "yes"}, "confirm must be true or false"),
    ("record_progress", {"user": "ann", "item_id": 1, "fraction": True}, "fraction must be a number"),
    ("record_feedback", {"user": "ann", "item_id": 1, "liked": 1}, "liked must be true or false"),
    ("list_feed", {"user": True}, "user must be a non-empty string"),
]


@pytest.mark.parametrize("name,arguments,fragment", COERCIONS, ids=[c[0] for c in COERCIONS])
def test_no_argument_is_coerced(db, world, name, arguments, fragment):
    tools = collect_tools()
    if name not in tools:
        pytest.skip(f"{name} is not loaded")
    before = counts(db)
    result = call_tool(db, tools[name], arguments)
    assert result["ok"] is False and fragment in result["message"], result["message"]
    assert set(tools[name].empty) <= set(result)
    assert counts(db) == before


def test_a_huge_string_is_quoted_as_a_short_excerpt(db, world):
    tools = collect_tools()
    huge = "x" * 10_000_000
    for name, arguments in [
        ("corpus", {"user": huge}),
        ("digest", {"user": huge}),
        ("corpus_items", {"user": "ann", "facet": huge}),
        ("list_feed", {"user": huge}),
    ]:
        if name in tools:
            result = call_tool(db, tools[name], arguments)
            # the empty payload is ~400; the message and its one error quote 40 characters each
            assert result["ok"] is False and len(str(result)) < 900, name
            assert "(10,000,000 characters)" in result["message"]
            assert [e["field"] for e in result["errors"]] == [next(iter(arguments.keys() - {"user"}), "user")]


def test_whole_floats_count_as_integers_and_a_default_fills_what_is_left_out(db, world):
    tools = collect_tools()
    result = call_tool(db, tools["list_feed"], {"user": "ann", "limit": 1.0, "since_days": None})
    assert result["ok"] and len(result["items"]) == 1
    refused = call_tool(db, tools["list_feed"], {"user": "ann", "limit": 1.5})
    assert refused["message"] == "limit must be a whole number from 1 to 100, got 1.5."


def test_missing_and_unknown_parameters_are_named(db, world):
    tools = collect_tools()
    assert call_tool(db, tools["list_feed"], {})["message"] == (
        "list_feed needs user: a non-empty string of at most 64 characters."
    )
    assert call_tool(db, tools["list_feed"], {"user": "ann", "db": 1})["message"] == (
        'list_feed has no parameter "db"; its parameters are: user, limit, since_days, below_bar, offset, detail, removed_feeds.'
    )


def test_confirm_left_out_gives_the_preview(db, world):
    tools = collect_tools()
    before = counts(db)
    preview = call_tool(db, tools["delete_persona"], {"name": "ann"})
    assert preview["ok"] is False and preview["would_delete"]["persona"] == "ann"
    assert counts(db) == before


def test_a_direct_call_gets_what_mcp_gets(db, world):
    """The CLI calls the tool object; it is checked exactly like a call through MCP."""
    from hermes_feeds.tools import list_feed

    assert isinstance(list_feed, Tool)
    assert list_feed(db, "ann", limit=True) == call_tool(
        db, collect_tools()["list_feed"], {"user": "ann", "limit": True}
    )
    assert list_feed(db, "ann", limit=True)["message"].startswith("limit must be a whole number")


@pytest.mark.anyio
async def test_over_mcp_a_bad_argument_is_an_envelope_not_an_sdk_error(db_path, db, world):
    async with mcp.Client(build_server(str(db_path))) as client:
        result = await client.call_tool("remove_feed", {"feed_id": True, "confirm": True})
    assert result.is_error is True  # a refusal, with hermes's envelope, not the SDK's text
    assert result.structured_content == {
        "ok": False,
        "feed": {},
        "removed": False,
        "message": "feed_id must be a whole number of at least 1, got true.",
        # which parameter each problem is about, for a client to act on
        "errors": [{"field": "feed_id", "problem": "feed_id must be a whole number of at least 1, got true."}],
    }
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 2  # add_items made one


# --- every tool is defined one way ----------------------------------------------------------


def _string_parameters(t: Tool):
    hints = typing.get_type_hints(t.fn, include_extras=True)
    for p in t.arguments():
        if "str" in repr(hints[p.name]).replace("structure", ""):
            yield p.name


@pytest.mark.parametrize("name", sorted(collect_tools()))
def test_every_tool_is_defined_one_way(name):
    t = collect_tools()[name]
    assert issubclass(t.result, Result)
    assert t.description.startswith(" ".join(inspect.cleandoc(t.fn.__doc__).split()))
    properties = t.input_schema()["properties"]
    for parameter in _string_parameters(t):
        prop = properties[parameter]
        limits = [prop.get("maxLength")] + [o.get("maxLength") for o in prop.get("anyOf", [])]
        has_enum = "enum" in prop or any("enum" in o for o in prop.get("anyOf", []))  # an optional Literal
        assert has_enum or any(limits), f"{name}.{parameter} has no max_length"
        # a persona (hermes.tools.User) is described once, in the server's instructions
        persona = parameter in t.argument_model.__hermes_alias__.values() or parameter == "user"
        assert persona or prop.get("description"), f"{name}.{parameter} has no description"
    assert t.output_schema()["properties"].keys() == t.result.model_fields.keys()


def test_every_persona_argument_allows_the_names_a_persona_can_have():
    """An agent reading a schema must not send a name every call then refuses: each persona
    argument (user, name) allows exactly the creation limit, and so does the web form."""
    from hermes.contract import NAME_MAX

    limits = {
        (name, p): t.input_schema()["properties"][p].get("maxLength")
        for name, t in collect_tools().items()
        for p in t.input_schema()["properties"]
        if p in ("user", "name")
    }
    assert limits and set(limits.values()) == {NAME_MAX}, limits


def test_a_tool_without_a_docstring_or_with_a_required_result_field_is_refused():
    class Needs(Result):
        count: int

    with pytest.raises(TypeError, match="docstring"):
        tool("x", result=Result)(lambda db: {})
    with pytest.raises(TypeError, match="need a default"):

        def counted(db) -> dict:
            """Count."""

        tool("x", result=Needs)(counted)


def test_words_for_what_a_parameter_accepts():
    assert expects({"type": "integer", "minimum": 1, "maximum": 5}) == "a whole number from 1 to 5"
    assert expects({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}) == (
        "a whole number of at least 1 or null"
    )
    assert expects({"enum": ["a", "b"]}) == 'one of "a", "b"'
    assert excerpt("y" * 100) == '"' + "y" * 40 + '…" (100 characters)'
    assert excerpt(True) == "true" and excerpt(None) == "null"


def test_a_query_strings_value_is_refused_as_typed_text_not_json(db, world):
    """A JSON route hands the query string to a tool as typed (no face of its own): its
    refusal says what to type (yes or no), not JSON's booleans or null."""
    from hermes import arguments

    model = collect_tools()["digest"].argument_model
    with arguments.typed_as_text(), pytest.raises(arguments.InvalidArguments) as refused:
        arguments.validate("digest", model, {"user": "ann", "below_bar": "maybe"})
    assert str(refused.value) == 'below_bar must be yes or no, got "maybe".'
