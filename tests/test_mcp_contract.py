"""The MCP contract an agent relies on the first time: an unknown tool is a protocol error,
every answer validates against its tool's typed output schema, one isError rule and true
annotations, and the persona named ``user`` wherever a persona is meant."""

from __future__ import annotations

import mcp
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from hermes.mcp_server import build_server

pytestmark = pytest.mark.anyio


async def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(db_path):
    """2025-11-25: "Unknown tools" are protocol errors (-32602), not a tool result."""
    async with mcp.Client(build_server(str(db_path), {"feeds"})) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("list_fed", {"user": "ann"})
        # still serving after it
        assert (await client.call_tool("list_feeds", {})).is_error is False
    assert raised.value.code == INVALID_PARAMS
    assert "Unknown tool: 'list_fed'" in raised.value.message
    assert "list_feed" in raised.value.message and "digest" not in raised.value.message


# --- every answer against its typed output schema; one isError rule; true annotations --------

#: per tool, its annotations: r read-only, d destructive (loses what no other call gives back:
#: hermes.contract.Tool.destructive), i idempotent, o open world (fetches what the caller names).
#: A change another call undoes is not destructive: a host asks to confirm each destructive call
#: (an MCP trial's host asked before every like).
ANNOTATIONS = {
    "list_feed": "ri",
    "explain_item": "i",  # explain_item writes the explanations cache
    "add_feed": "io",
    "preview_feed": "rio",
    "list_feeds": "ri",
    "rename_feed": "i",
    "remove_feed": "di",
    "suggest_feeds": "ri",
    "record_feedback": "i",
    "remove_feedback": "i",  # record_feedback gives it back
    "list_users": "ri",
    "create_persona": "i",
    "propose_interests": "ri",
    "update_persona": "i",  # the old text is returned,
    "rename_persona": "i",
    "profile_status": "ri",
    "search_feed": "ri",
    "delete_persona": "di",
    "reset_feedback": "di",
    "bootstrap_persona": "i",
    "import_library": "i",
    "kg_communities": "ri",
    "digest": "ri",
    "record_progress": "",
    "add_highlight": "",
    "delete_highlight": "d",  # its text is lost,
    "add_note": "",
    "delete_note": "d",
    "favorite": "i",
    "mark_read": "i",
    "mark_unread": "i",  # mark_read reads it again
    "corpus": "ri",
    "corpus_items": "ri",
    "corpus_changes": "ri",
    "corpus_ranked": "ri",
    "corpus_entities": "ri",
    "recall": "ri",
    "export_corpus": "ri",
    "save_item": "io",
}

OK, REFUSED, DRY_RUN, DONE, EMPTY = "ok", "refused", "dry run", "done already", "empty"
#: isError by kind of answer (docs/plugin_hooks.md, "isError"): a refusal and a dry run are
#: errors (the call did not do what it says); work found done and an empty answer are not
IS_ERROR = {OK: False, REFUSED: True, DRY_RUN: True, DONE: False, EMPTY: False}


def _calls(ctx) -> list[tuple[str, str, dict]]:
    """(tool, kind of answer, arguments), readers first: writers change what they see."""
    i, url = ctx["items"], ctx["url"]
    bib = "@article{q0, title={Quantum paper 0}}\n"
    return [
        ("list_users", OK, {}),
        ("list_feed", OK, {"user": "ann", "since_days": None, "below_bar": True}),
        ("list_feed", EMPTY, {"user": "ann", "since_days": 1}),
        ("list_feed", REFUSED, {"user": "bob"}),
        ("explain_item", OK, {"user": "ann", "item_id": i[5], "since_days": None}),
        ("explain_item", REFUSED, {"user": "ann", "item_id": 9999}),
        ("preview_feed", OK, {"url": url}),
        ("preview_feed", REFUSED, {"url": "ftp://example.org/feed"}),
        ("list_feeds", OK, {}),
        ("suggest_feeds", OK, {"user": "ann"}),
        ("suggest_feeds", REFUSED, {"user": "bob"}),
        ("kg_communities", OK, {}),
        ("digest", OK, {"user": "ann", "days": 36500}),
        ("digest", OK, {"user": "ann", "days": 36500, "below_bar": True}),
        ("digest", EMPTY, {"user": "ann", "days": 1}),
        ("digest", REFUSED, {"user": "bob"}),
        ("propose_interests", OK, {}),
        ("profile_status", OK, {"user": "ann"}),
        ("profile_status", REFUSED, {"user": "bob"}),
        ("search_feed", OK, {"user": "ann", "query": "quantum"}),
        ("search_feed", EMPTY, {"user": "ann", "query": "sourdough"}),
        ("search_feed", REFUSED, {"user": "bob", "query": "quantum"}),
        ("corpus", OK, {"user": "ann"}),
        ("corpus", REFUSED, {"user": "bob"}),
        ("corpus_items", OK, {"user": "ann"}),
        ("corpus_items", REFUSED, {"user": "ann", "facet": "liked"}),
        ("corpus_changes", OK, {"user": "ann"}),
        ("corpus_ranked", OK, {"user": "ann"}),
        ("corpus_entities", OK, {"user": "ann"}),
        ("recall", OK, {"user": "ann", "query": "quantum"}),
        ("recall", EMPTY, {"user": "ann", "query": "sourdough"}),
        ("export_corpus", OK, {"user": "ann", "format": "bibtex"}),
        ("export_corpus", REFUSED, {"user": "bob", "format": "bibtex"}),
        ("record_feedback", OK, {"user": "ann", "item_id": i[1], "liked": True}),
        ("record_feedback", DONE, {"user": "ann", "item_id": i[1], "liked": True}),
        ("record_feedback", REFUSED, {"user": "bob", "item_id": i[1], "liked": True}),
        ("record_feedback", OK, {"user": "ann", "item_id": [i[1], i[2]], "liked": False}),
        ("record_feedback", DONE, {"user": "ann", "item_id": [i[2], i[1]], "liked": False}),
        ("record_feedback", REFUSED, {"user": "ann", "item_id": [i[1], 9999], "liked": True}),
        ("record_feedback", REFUSED, {"user": "ann", "item_id": [], "liked": True}),
        ("remove_feedback", OK, {"user": "ann", "item_id": i[1]}),
        ("remove_feedback", DONE, {"user": "ann", "item_id": i[1]}),
        ("add_feed", OK, {"url": url}),
        ("add_feed", DONE, {"url": url}),
        ("add_feed", REFUSED, {"url": "not a url"}),
        ("rename_feed", OK, {"feed_id": 2, "title": "Renamed"}),
        ("rename_feed", REFUSED, {"feed_id": 999, "title": "Renamed"}),
        ("remove_feed", DRY_RUN, {"feed_id": 2}),
        ("remove_feed", OK, {"feed_id": 2, "confirm": True}),
        ("record_progress", OK, {"user": "ann", "item_id": i[2], "fraction": 0.5}),
        ("record_progress", REFUSED, {"user": "ann", "item_id": i[2], "fraction": 2}),
        ("add_highlight", OK, {"user": "ann", "item_id": i[2], "text": "qubits"}),
        ("add_note", OK, {"user": "ann", "item_id": i[2], "text": "qubits"}),
        ("delete_highlight", DRY_RUN, {"user": "ann", "highlight_id": ctx["highlight"]}),
        ("delete_highlight", OK, {"user": "ann", "highlight_id": ctx["highlight"], "confirm": True}),
        ("delete_highlight", REFUSED, {"user": "ann", "highlight_id": 999, "confirm": True}),
        ("delete_note", DRY_RUN, {"user": "ann", "note_id": ctx["note"]}),
        ("delete_note", OK, {"user": "ann", "note_id": ctx["note"], "confirm": True}),
        ("favorite", OK, {"user": "ann", "item_id": i[4]}),
        ("favorite", DONE, {"user": "ann", "item_id": i[4]}),
        ("favorite", OK, {"user": "ann", "item_id": i[4], "on": False}),
        ("mark_read", OK, {"user": "ann", "item_id": i[2]}),
        ("mark_read", DONE, {"user": "ann", "item_id": i[2]}),
        ("mark_unread", OK, {"user": "ann", "item_id": i[2]}),
        ("mark_unread", DONE, {"user": "ann", "item_id": i[2]}),
        ("save_item", OK, {"user": "ann", "ref": "https://example.org/q3"}),
        ("save_item", REFUSED, {"user": "bob", "ref": "https://example.org/q3"}),
        ("create_persona", OK, {"name": "bob", "interests": "sourdough bread"}),
        ("create_persona", DONE, {"name": "bob", "interests": "sourdough bread"}),
        ("create_persona", REFUSED, {"name": "bob", "interests": "quantum"}),
        ("update_persona", OK, {"name": "bob", "interests": "bread"}),
        ("update_persona", DONE, {"name": "bob", "interests": "bread"}),
        ("update_persona", REFUSED, {"name": "bob"}),
        ("update_persona", REFUSED, {"name": "bob", "interests": "rye", "clear": True}),
        ("rename_persona", OK, {"name": "bob", "new_name": "Bob"}),
        ("bootstrap_persona", None, {"name": "Bob"}),  # ok or refused: what bread matches
        ("import_library", OK, {"name": "ann", "text": bib}),
        ("import_library", REFUSED, {"name": "ann", "text": "not a library"}),
        ("reset_feedback", DRY_RUN, {"name": "ann"}),
        ("reset_feedback", OK, {"name": "ann", "confirm": True}),
        ("bootstrap_persona", OK, {"name": "ann"}),  # its clicks are all gone
        ("bootstrap_persona", DONE, {"name": "ann"}),
        ("delete_persona", DRY_RUN, {"name": "Bob"}),
        ("delete_persona", OK, {"name": "Bob", "confirm": True}),
        ("delete_persona", REFUSED, {"name": "Bob", "confirm": True}),
    ]


@pytest.fixture
def served_world(db, add_items, monkeypatch):
    from feeds_support import SAMPLE_ENTRIES, CannedServer, rss
    from hermes_corpus import signals

    from hermes.storage.records import create_user

    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")  # add / preview the loopback feed
    ids = add_items(
        [
            {
                "title": f"Quantum paper {k}",
                "summary": "qubits and error correction",
                "tags": ["quant-ph", "qubits"],
                "url": f"https://example.org/q{k}",
                "days_ago": 3,
            }
            for k in range(6)
        ]
    )
    create_user(db, "ann", "quantum error correction")
    highlight = signals.add_highlight(db, "ann", ids[0], "qubits")["highlight_id"]
    note = signals.add_note(db, "ann", ids[0], "qubits")["note_id"]
    signals.record_progress(db, "ann", ids[3], 0.9)
    db.execute("INSERT INTO clicks (user_id, item_id, label, source) VALUES (1, ?, 'like', 'ui')", [ids[4]])
    with CannedServer() as server:
        server.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss("Quantum blog", SAMPLE_ENTRIES))
        yield {"items": ids, "url": server.url("/feed.xml"), "highlight": highlight, "note": note}


async def test_every_answer_validates_and_is_an_error_by_one_rule(db_path, served_world):
    from jsonschema import Draft202012Validator

    async with mcp.Client(build_server(str(db_path))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == set(ANNOTATIONS), "a tool without a row in ANNOTATIONS"
        validators = {n: Draft202012Validator(t.output_schema) for n, t in listed.items()}
        seen, wrong = set(), []
        for name, kind, arguments in _calls(served_world):
            result = await client.call_tool(name, arguments)
            body = result.structured_content
            errors = [e.message[:200] for e in validators[name].iter_errors(body)]
            assert not errors, (name, kind, errors)
            seen.add(name)
            if kind is not None and result.is_error is not IS_ERROR[kind]:
                wrong.append((name, kind, result.is_error, body["message"][:160]))
            if kind == DRY_RUN:  # the seed's dry run names what would be lost
                assert body["ok"] is False and "confirm=true" in body["message"], (name, body)
    assert not wrong, wrong
    assert seen == set(listed)


async def test_annotations_say_what_each_tool_does(db_path):
    async with mcp.Client(build_server(str(db_path))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == set(ANNOTATIONS)  # a new tool needs its line in the table
    for name, flags in ANNOTATIONS.items():
        a = listed[name].annotations
        said = (
            ("r" if a.read_only_hint else "")
            + ("d" if a.destructive_hint else "")
            + ("i" if a.idempotent_hint or a.read_only_hint else "")
            + ("o" if a.open_world_hint else "")
        )
        assert said == flags, (name, said, flags)
        # destructive and idempotent mean nothing for a read-only tool (the specification):
        # left out, as MCP's default
        assert (a.destructive_hint is None) == ("r" in flags), name
        assert a.idempotent_hint is None or "r" not in flags, name
        assert listed[name].title, name


#: titles where the name in words reads poorly ("Kg communities")
TITLES = {
    "kg_communities": "Topics of the archive",
    "list_users": "List personas",
    "search_feed": "Search the archive",
    "bootstrap_persona": "Warm up a persona",
    "digest": "What is worth reading",
}


def _untyped(schema: dict) -> list[str]:
    """The places of an output schema holding an object or a list of them with no fields."""
    out, defs = [], schema.get("$defs", {})

    def walk(node, where, seen):
        if isinstance(node, list):
            for n in node:
                walk(n, where, seen)
        if not isinstance(node, dict):
            return
        ref = node.get("$ref", "").rsplit("/", 1)[-1]
        if ref and ref not in seen:
            walk(defs.get(ref, {}), f"{where}/{ref}", seen | {ref})
        if (
            node.get("type") == "object"
            and "properties" not in node
            and not isinstance(node.get("additionalProperties"), dict)
        ):
            out.append(where)
        for key, value in node.items():
            if key != "$defs":
                walk(value, where if key in ("properties", "anyOf", "items") else f"{where}/{key}", seen)

    walk(schema, "", set())
    return out


async def test_persona_and_digest_answers_are_typed_and_titled(db_path):
    """Issue 34: an agent reading tools/list sees the fields it will read."""
    async with mcp.Client(build_server(str(db_path), {"persona", "digest"})) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert {n: u for n, t in listed.items() if (u := _untyped(t.output_schema))} == {}
    assert {n: listed[n].title for n in TITLES} == TITLES


# --- names: the persona is `user` everywhere; only what is served is named ---------------------


async def test_a_persona_parameter_answers_to_user_too(db_path, db):
    """The seed calls it ``name`` in the persona tools and ``user`` everywhere else: a model
    that sends ``user`` to reset_feedback meant the persona."""
    from hermes.storage.records import create_user

    create_user(db, "ada", "proof theory")
    async with mcp.Client(build_server(str(db_path))) as client:
        dry = await client.call_tool("reset_feedback", {"user": "ada"})
        done = await client.call_tool("reset_feedback", {"user": "ada", "confirm": True})
        seed = await client.call_tool("reset_feedback", {"name": "ada", "confirm": True})
        both = await client.call_tool("profile_status", {"user": "ada", "name": "ada"})
    # the persona it meant (no clicks: nothing to reset, said without asking for confirm=true)
    assert dry.structured_content["message"] == "Persona 'ada' has no clicks: nothing to reset."
    assert done.structured_content["ok"] is True and seed.structured_content["ok"] is True
    # a tool whose persona is already `user` takes no second name for it
    assert both.is_error and 'has no parameter "name"' in both.structured_content["message"]


def _named_tools(text: str, names: set[str]) -> set[str]:
    import re

    return {w for w in re.findall(r"[a-z]+(?:_[a-z]+)+", text) if w in names}


@pytest.mark.parametrize("groups", [{"feeds"}, {"persona"}, {"digest"}, {"corpus"}, None])
async def test_instructions_and_descriptions_name_only_tools_served(tmp_path, groups):
    """``--tools feeds`` served descriptions that sent the agent to list_users, which it
    does not serve."""
    import json

    from hermes.tools import collect_tools

    every = {n for n in collect_tools() if "_" in n}
    async with mcp.Client(build_server(str(tmp_path / "h.db"), groups)) as client:
        served = {t.name: t for t in (await client.list_tools()).tools}
        said = client.instructions
    names = set(served)
    assert _named_tools(said, every) <= names, said
    for name, t in served.items():
        text = t.description + json.dumps(t.input_schema)
        assert _named_tools(text, every) <= names, name
    if groups == {"feeds"}:
        assert "ask the person which persona" in said and "list_users" not in said
    if groups is None:
        assert "list_users names the personas" in said
