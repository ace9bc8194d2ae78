"""What the second MCP agent trial (a real client over stdio against ``hermes serve``) found: a
``score`` nothing said how to read, "nothing new yet" said four ways (and wrongly under a
server that refreshes its feeds itself), instructions that named the persona parameter
wrongly, an ``explain_item`` answer that said its evidence three times, and a prompt asking for
what the tool it names does not return."""

from __future__ import annotations

import json
import re
from pathlib import Path

import mcp
import pytest
from typer.testing import CliRunner

from hermes.facekit.faces import INGEST, REFRESHED, speaking
from hermes.ingest import refresher
from hermes.mcp_server import build_server, names_persona
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools


def tool(db, name: str, **args) -> dict:
    return call_tool(db, collect_tools()[name], args)


async def listed_tools(db_path, groups=None) -> tuple[dict, str]:
    async with mcp.Client(build_server(str(db_path), groups)) as client:
        tools = {
            t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in (await client.list_tools()).tools
        }
        return tools, client.instructions


# --- 1. what score is -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_every_ranked_score_says_what_it_is_and_how_the_list_is_ordered(db_path, db):
    """The trial read list_feed's scores as the order (a weak item at 2.65 came after a good
    one at 1.23) and search_feed's +1.00 / -1.00 as verdicts: nothing said what they are."""
    tools, _ = await listed_tools(db_path)
    where = {
        "list_feed": "RankedItem",
        "explain_item": "ItemExplanation",
        "digest": "DigestItem",
        "search_feed": "SearchHit",
    }
    for name, model in where.items():
        said = tools[name]["outputSchema"]["$defs"][model]["properties"]["score"].get("description", "")
        assert "z-score" in said and ("one answer only" in said or "search matched" in said), (name, said)
        assert "match says how well" in said, (name, said)
    feed = tools["list_feed"]["outputSchema"]["$defs"]["RankedItem"]["properties"]["score"]["description"]
    assert "clear the bar (match strong or good) rank first, then the rest, each by score" in feed
    search = tools["search_feed"]["outputSchema"]["$defs"]["SearchHit"]["properties"]["score"]["description"]
    assert "one match: 0" in search and "best first" in search
    # the tools themselves say the order in a clause
    assert "by score, then (below_bar) the rest by score" in tools["list_feed"]["description"]
    assert "by the persona's score among the results" in tools["search_feed"]["description"]


def test_the_order_is_the_one_the_score_description_states(db, add_items):
    """Bar-clearing items first, each group by score; a search's lone match scores 0."""
    create_user(db, "ann", "quantum error correction")
    add_items(
        [{"title": f"quantum error correction {k}", "summary": "surface codes"} for k in range(3)]
        + [{"title": f"bread baking {k}", "summary": "sourdough"} for k in range(6)]
    )
    items = tool(db, "list_feed", user="ann", below_bar=True, limit=20)["items"]
    clears = [i["match"] in ("strong", "good") for i in items]
    assert clears == sorted(clears, reverse=True)
    for group in (True, False):
        scores = [i["score"] for i, c in zip(items, clears, strict=True) if c is group]
        assert scores == sorted(scores, reverse=True)
    (lone,) = tool(db, "search_feed", user="ann", query="sourdough bread baking 3")["results"]
    assert lone["score"] == 0


# --- 2. how new items arrive, said once --------------------------------------------------------


@pytest.fixture
def serving(db_path, monkeypatch):
    """This process refreshes the database's feeds itself, as ``hermes serve`` does (the
    refresher registered, its thread not started: nothing is fetched)."""
    monkeypatch.setitem(refresher._active, str(Path(db_path).resolve()), refresher.Refresher(db_path, 3600))


def _empty_messages(db) -> dict[str, str]:
    create_user(db, "ada", "superconductivity")
    return {
        "list_feed": tool(db, "list_feed", user="ada")["message"],
        "digest": tool(db, "digest", user="ada")["message"],
        "propose_interests": tool(db, "propose_interests")["message"],
        "search_feed": tool(db, "search_feed", user="ada", query="superconductivity")["message"],
        "kg_communities": tool(db, "kg_communities")["message"],
    }


def test_under_a_refreshing_server_an_empty_archive_says_the_server_fetches_its_feeds(db, serving):
    """The trial, in an empty archive under ``hermes serve``: list_feed said "wait for the next
    ingest", digest and propose_interests "the next `hermes ingest` (run by the person or a
    schedule)", search_feed "try fewer or different words"."""
    for name, message in _empty_messages(db).items():
        said = message.lower()
        assert REFRESHED.mcp.split(",")[0] in said and "list_feeds shows when each feed" in said, (name, message)
        assert "hermes ingest" not in message and "next ingest" not in message, (name, message)


def test_an_empty_archive_s_search_says_so_rather_than_try_fewer_words(db, serving):
    create_user(db, "ada", "superconductivity")
    message = tool(db, "search_feed", user="ada", query="superconductivity")["message"]
    assert message.startswith("the archive is empty") and "fewer" not in message, message


def test_without_a_refresher_the_same_messages_name_hermes_ingest_in_each_face(db):
    messages = _empty_messages(db)
    for name, message in messages.items():
        assert INGEST.mcp in message or INGEST.mcp[:1].upper() + INGEST.mcp[1:] in message, (name, message)
    with speaking("cli"):
        message = tool(db, "list_feed", user="ada")["message"]
    assert "run `hermes ingest` for new items" in message and "add_feed" not in message, message


# --- 3. the instructions name the persona parameter truly ---------------------------------------


@pytest.mark.anyio
async def test_the_instructions_name_each_tool_s_persona_parameter_as_the_tool_does(db_path, db):
    """The instructions said "`user` (`name` in persona tools)", yet profile_status and
    search_feed of the persona group take ``user``. Each tool's persona parameter is checked
    against the instructions' words for it."""
    tools, said = await listed_tools(db_path)
    assert "`user` is a persona's name (the *_persona tools, reset_feedback and import_library call it `name`)" in said
    named = re.search(r"\(the (.*?) call it `name`\)", said).group(1)
    patterns = [p.strip() for p in re.split(r",| and ", named.replace(" tools", "")) if p.strip()]
    assert patterns == ["*_persona", "reset_feedback", "import_library"]
    checked = 0
    for name, entry in tools.items():
        params = set(entry["inputSchema"].get("properties", {}))
        persona = params & {"user", "name"}
        if not persona:
            continue
        checked += 1
        expected = "name" if names_persona(name) else "user"
        assert persona == {expected}, (name, sorted(params))
    assert checked >= 30
    # a server serving no tool that says `name` does not mention them
    _, corpus = await listed_tools(db_path, {"corpus"})
    assert "`user` is a persona's name;" in corpus and "call it `name`" not in corpus


# --- 4. explain_item says each figure once ------------------------------------------------------


@pytest.fixture
def rated(db, add_items):
    create_user(db, "ann", "quantum error correction")
    ids = add_items(
        [
            {"title": "quantum error correction with surface codes", "tags": ["quant-ph"]},
            {"title": "bread baking", "tags": ["food"]},
            {"title": "quantum error correction decoders", "tags": ["quant-ph"]},
            # the rest of the feed it ranks among (a lone candidate: every z-score 0, no top part)
            *({"title": f"sourdough bread {k}", "tags": ["food"]} for k in range(4)),
        ]
    )
    record_click(db, 1, ids[0], True, "agent")
    record_click(db, 1, ids[1], False, "agent")
    return ids


def test_explain_item_says_its_evidence_and_reason_once(db, rated):
    """The trial's answers were 5.6 to 7 k characters: the reason three times (message,
    reason, explanation.reason), the rated tags three times (evidence, matched_tags,
    top[].evidence), the closest interest twice more in components."""
    result = tool(db, "explain_item", user="ann", item_id=rated[2])
    assert result["ok"], result["message"]
    e = result["explanation"]
    text = json.dumps(result)
    assert text.count('"tag:quant-ph"') == 1, text
    assert "matched_tags" not in e and all("evidence" not in t for t in e["top"]) and e["top"]
    assert text.count(json.dumps(e["evidence"]["interest"]["clause"])) == 1
    assert "reason" not in e["components"].get("classifier", {})
    # documented and tested: the top-level match and reason, the explanation's own
    assert result["reason"] == e["reason"] and result["match"] == e["match"]
    assert e["reason"] not in result["message"] and result["message"].startswith("Ranks ")


def test_hermes_explain_still_prints_the_rated_keys(db, db_path, rated):
    from hermes.cli.app import build_app

    out = CliRunner().invoke(build_app(), ["explain", "ann", str(rated[2]), "--db", str(db_path)])
    assert out.exit_code == 0, out.output
    assert "  rated: quant-ph (+" in out.output, out.output


# --- 5. the worth_reading prompt asks for what digest returns -----------------------------------


def test_worth_reading_asks_only_for_fields_the_default_digest_returns(db, add_items):
    """It asked for each item's "reason and explanation"; digest without detail carries no
    explanation."""
    from hermes_digest.answers import DigestItem
    from hermes_digest.prompts import worth_reading

    create_user(db, "ann", "quantum error correction")
    add_items([{"title": f"quantum error correction {k}", "tags": ["quant-ph", "codes"]} for k in range(4)])
    text = worth_reading("ann")
    assert "Call the digest tool with user='ann' and days=7." in text  # the call it names
    answer = tool(db, "digest", user="ann", days=7)
    item = (answer["topics"][0]["items"] if answer["topics"] else answer["unclustered"])[0]
    # "summary": the prompt asks the agent to write one
    named = {f for f in DigestItem.model_fields if f != "summary" and re.search(rf"\b{f}\b", text)}
    assert {"reason", "match", "explanation"} & named and named <= set(item), (named, sorted(item))
