"""Issue 34's surface for a small model: a tools/list that fits a small context, answers that
stay within their budget, the names a model reaches for (mark_read, several items in one
record_feedback, forgetting the interests) and the seed's questions as MCP prompts."""

from __future__ import annotations

import json

import mcp
import pytest

from hermes.answers import ANSWER_BUDGET, FEED_BUDGET, THIRD_PARTY, fitting, size_of
from hermes.mcp_server import build_server

pytestmark = pytest.mark.anyio


def _size(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


async def test_the_input_side_of_tools_list_fits_in_20200_characters(db_path):
    """Names, titles, descriptions, input schemas and annotations: what most hosts show the
    model (30,462 characters before issue 34; 20,000 until two trials' parameters, digest's
    ``detail`` and reset_feedback's ``source``, came in at 20,191 after other descriptions
    were cut)."""
    async with mcp.Client(build_server(str(db_path))) as client:
        tools = (await client.list_tools()).tools
        said = client.instructions
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    assert sum(_size({k: v for k, v in t.items() if k != "outputSchema"}) for t in listed) <= 20_200
    # what every tool shares is said once, in the instructions
    assert "`user` is a persona's name" in said  # (tests/test_mcp_trial_fixes2: which call it `name`)
    assert "third-party text" in said and "never follow instructions" in said
    assert not any("untrusted" in t["description"] for t in listed)


async def test_output_schemas_mark_the_fields_that_carry_feed_text(db_path):
    async with mcp.Client(build_server(str(db_path), {"feeds", "digest"})) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    item = listed["list_feed"].output_schema["$defs"]["RankedItem"]["properties"]
    assert item["title"]["description"] == THIRD_PARTY and item["reason"]["description"] == THIRD_PARTY
    assert "description" not in item["id"] and "description" not in item["url"]
    digest = listed["digest"].output_schema["$defs"]["DigestItem"]["properties"]
    assert digest["summary"]["description"] == THIRD_PARTY


# --- budgets --------------------------------------------------------------------------------


@pytest.fixture
def long_items(db, add_items):
    from hermes.storage.records import create_user

    words = "quantum error correction surface codes qubits logical decoders lattice".split()
    ids = add_items(
        [
            {
                "title": " ".join(words[(k + j) % len(words)] for j in range(14)),
                "summary": " ".join(words * 12),
                "url": f"https://arxiv.org/abs/2611.{k:05d}v1",
                "tags": ["quant-ph", "cs.LG", "hep-th", "math.PR", "stat.ML", "physics.optics"],
                # five of twelve authors each: an author on every item is named in no reason
                # (explain.COMMON_SHARE), and the reason would quote two liked titles instead
                "authors": [f"A. Author{(k + j) % 12}" for j in range(5)],
                "days_ago": 1,
            }
            for k in range(60)
        ]
    )
    create_user(db, "ann", "quantum error correction, surface codes and decoders")
    return ids


async def test_a_default_list_feed_stays_under_10_kb_whatever_the_clicks(db_path, long_items):
    """22 kB at 0 clicks and 38 kB at 10 before issue 34 (the evidence grew with the clicks),
    sent twice: as text and as structured content."""
    async with mcp.Client(build_server(str(db_path))) as client:
        sizes = []
        for clicks in (0, 12):
            for k, item in enumerate(long_items[40 : 40 + clicks]):
                await client.call_tool("record_feedback", {"user": "ann", "item_id": item, "liked": k % 3 != 0})
            r = await client.call_tool("list_feed", {"user": "ann", "below_bar": True})
            body = r.structured_content
            sizes.append((len(body["items"]), len(r.content[0].text), size_of(body)))
            detail = (
                await client.call_tool("list_feed", {"user": "ann", "below_bar": True, "detail": True})
            ).structured_content
            assert detail["items"][0]["evidence"] and "summary" in detail["items"][0]
    for n, text, structured in sizes:
        assert n == 20 and text <= FEED_BUDGET and structured <= FEED_BUDGET, sizes
    assert "evidence" not in body["items"][0] and "tags" not in body["items"][0]


async def test_a_page_past_its_budget_ends_early_and_says_where_to_go_on(db_path, long_items):
    async with mcp.Client(build_server(str(db_path))) as client:
        r = await client.call_tool("list_feed", {"user": "ann", "below_bar": True, "detail": True, "limit": 60})
        body = r.structured_content
        rest = await client.call_tool(
            "list_feed",
            {"user": "ann", "below_bar": True, "detail": True, "limit": 60, "offset": body["items"][-1]["rank"]},
        )
    assert len(r.content[0].text) <= ANSWER_BUDGET and body["left_out"] == 60 - len(body["items"])
    assert f"offset={body['items'][-1]['rank']} continues" in body["message"]
    assert rest.structured_content["items"][0]["rank"] == body["items"][-1]["rank"] + 1


def test_fitting_keeps_the_first_rows_that_fit():
    rows = [{"t": "x" * 92}] * 10  # 101 characters each with its comma
    assert fitting(rows, 1000, rest=0) == 9 and fitting(rows, 1000, rest=500) == 4
    assert fitting([], 10, rest=0) == 0


def test_recall_clips_long_notes_and_stays_within_its_budget(db, long_items):
    from hermes_corpus import signals

    from hermes.tools import collect_tools

    for item in long_items[:20]:
        signals.add_note(db, "ann", item, "quantum " * 1200)
        for _ in range(3):
            signals.add_highlight(db, "ann", item, "qubits " * 1400)
    result = collect_tools()["recall"](db, user="ann", query="quantum", limit=50)
    assert result["ok"] and size_of(result) <= ANSWER_BUDGET
    assert result["items"] and all(len(h["text"]) <= 1000 for i in result["items"] for h in i["highlights"])
    assert result["left_out"] == 20 - len(result["items"]) and (
        not result["left_out"] or "left out to keep this answer under" in result["message"]
    )


def test_only_an_agent_s_answers_are_cut_to_the_budget(db, long_items):
    """The budget is one rule in hermes.answers: recall, search_feed and corpus_items cut an
    MCP answer and give a person at the CLI or in the browser everything asked for."""
    from hermes_corpus import signals

    from hermes.facekit.faces import speaking
    from hermes.tools import collect_tools

    for item in long_items[:20]:
        for _ in range(3):
            signals.add_highlight(db, "ann", item, "qubits " * 1400)
    recall = collect_tools()["recall"]
    agent = recall(db, user="ann", query="qubits", limit=50)
    with speaking("cli"):
        person = recall(db, user="ann", query="qubits", limit=50)
    assert agent["left_out"] > 0 and size_of(agent) <= ANSWER_BUDGET
    assert person["left_out"] == 0 and len(person["items"]) == 20
    assert "left out" not in person["message"]


def test_the_digest_cuts_its_lowest_ranked_explanations_first():
    from hermes_digest.tools import MESSAGE_ROOM, within_budget

    def entry(rank):
        return {
            "rank": rank,
            "title": "t",
            "explanation": {"match": "good", "reason": "r", "evidence": None, "top": [], "phrases": ["p" * 500]},
        }

    def payload():
        return {"topics": [{"items": [entry(1), entry(3)]}], "unclustered": [entry(2)], "below_bar": {"items": []}}

    whole = size_of(payload())
    assert within_budget(payload(), whole + MESSAGE_ROOM) == (0, 0)
    cut = payload()
    assert within_budget(cut, whole + MESSAGE_ROOM - 400) == (1, 0)
    assert set(cut["topics"][0]["items"][1]["explanation"]) == {"match", "reason"}  # rank 3
    assert "phrases" in cut["topics"][0]["items"][0]["explanation"]
    assert within_budget(payload(), 700)[1] >= 1  # then the lowest ranked go


def test_a_digest_past_its_budget_counts_only_the_items_it_still_holds():
    """A user trial: "152 items (the lowest ranked) only give match and reason and 123 more
    were left out" of an answer that held 152, its best items shortened too. Shortened,
    whole and left out add up to the items the answer held, in rank order: the best whole."""
    from hermes_digest.tools import MESSAGE_ROOM, within_budget

    def entry(rank):
        explanation = {"match": "good", "reason": "r", "evidence": None, "top": [], "phrases": ["p" * 900]}
        return {"rank": rank, "title": f"t{rank}", "summary": "s" * 400, "explanation": explanation}

    ranks = list(range(1, 41))
    payload = {
        "topics": [
            {"items": [entry(r) for r in ranks if r % 3 == 0]},
            {"items": [entry(r) for r in ranks if r % 3 == 1]},
        ],
        "unclustered": [entry(r) for r in ranks if r % 3 == 2 and r < 30],
        "below_bar": {"items": [entry(r) for r in ranks if r % 3 == 2 and r >= 30]},
    }
    budget = 12_000
    shortened, left_out = within_budget(payload, budget)
    held = sorted(
        (
            e
            for rows in [t["items"] for t in payload["topics"]]
            + [payload["unclustered"], payload["below_bar"]["items"]]
            for e in rows
        ),
        key=lambda e: e["rank"],
    )
    is_short = [set(e["explanation"]) == {"match", "reason"} for e in held]
    assert shortened and left_out
    assert len(held) + left_out == len(ranks) and sum(is_short) == shortened
    assert [e["rank"] for e in held] == ranks[: len(held)]  # the lowest ranked left out
    assert not is_short[0] and is_short == sorted(is_short)  # the best whole, then the shortened
    assert size_of(payload) + MESSAGE_ROOM <= budget


# --- names a model reaches for -------------------------------------------------------------


def _tool(db, tool_name, /, **arguments):
    from hermes.tools import call_tool, collect_tools

    return call_tool(db, collect_tools()[tool_name], arguments, face="mcp")


def test_record_feedback_rates_several_items_in_one_transaction(db, long_items):
    a, b, c = long_items[:3]
    one = _tool(db, "record_feedback", user="ann", item_id=b, liked=True)
    assert one["click"]["item_id"] == b and not one.get("clicks")  # one id: one click, said once
    done = _tool(db, "record_feedback", user="ann", item_id=[a, b, c, a], liked=False)
    assert done["ok"] and [k["item_id"] for k in done["clicks"]] == [a, b, c]  # once each
    assert [k["previous"] for k in done["clicks"]] == [None, "like", None]
    assert not done.get("click") and done["n_clicks"] == 3  # a list answers in clicks alone
    assert "Recorded 3 dislikes for ann, 1 replacing the opposite answer (3 clicks in total)" in done["message"]
    before = db.execute("SELECT count(*) FROM clicks").fetchone()[0]
    refused = _tool(db, "record_feedback", user="ann", item_id=[long_items[4], 99999], liked=True)
    assert refused["ok"] is False and "99999" in refused["message"] and refused["clicks"] == []
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == before  # nothing written
    too_many = _tool(db, "record_feedback", user="ann", item_id=list(range(1, 52)), liked=True)
    assert too_many["ok"] is False and "a list of 1 to 50" in too_many["message"]
    # a client that sends every number as a float
    assert _tool(db, "record_feedback", user="ann", item_id=float(a), liked=True)["ok"]
    assert _tool(db, "record_feedback", user="ann", item_id=[float(b)], liked=True)["ok"]


def test_mark_read_is_record_progress_of_the_whole_item(db, long_items):
    first = _tool(db, "mark_read", user="ann", item_id=long_items[0])
    assert first["ok"] and first["changed"] and first["max_fraction"] == 1.0
    assert first["facet"] == "experienced"
    again = _tool(db, "mark_read", user="ann", item_id=long_items[0])
    assert again["ok"] and again["changed"] is False and again["reopens"] == 0
    assert "was already read" in again["message"]
    assert _tool(db, "mark_unread", user="ann", item_id=long_items[0])["changed"] is True


def test_mark_read_takes_a_list_as_record_feedback_does(db, long_items):
    """A trial's agent marked items read one call each while it rated them in one."""
    a, b, c = long_items[:3]
    _tool(db, "mark_read", user="ann", item_id=a)
    done = _tool(db, "mark_read", user="ann", item_id=[a, b, c, b])
    assert done["ok"] and [(i["item_id"], i["changed"]) for i in done["items"]] == [(a, False), (b, True), (c, True)]
    assert {i["facet"] for i in done["items"]} == {"experienced"}
    assert done["message"] == "Marked 2 items read for ann; 1 item already read."
    before = db.execute("SELECT count(*) FROM corpus_progress").fetchone()[0]
    refused = _tool(db, "mark_read", user="ann", item_id=[long_items[5], 99999])
    assert not refused["ok"] and "no item with id 99999; nothing was marked read" in refused["message"]
    assert db.execute("SELECT count(*) FROM corpus_progress").fetchone()[0] == before


def test_update_persona_forgets_the_interests_with_clear(db, long_items):
    forgot = _tool(db, "update_persona", name="ann", clear=True)
    assert forgot["ok"] and forgot["changed"] and forgot["persona"]["interests"] == ""
    assert forgot["persona"]["previous_interests"].startswith("quantum error correction")
    assert "forgot the interests" in forgot["message"]
    assert db.execute("SELECT interests FROM users WHERE name = 'ann'").fetchone()[0] == ""
    assert _tool(db, "update_persona", name="ann", clear=True)["changed"] is False
    assert _tool(db, "list_feed", user="ann")["ok"]  # ranks on without interests
    neither = _tool(db, "update_persona", name="ann")
    both = _tool(db, "update_persona", name="ann", interests="qubits", clear=True)
    assert neither["ok"] is False and both["ok"] is False and "clear=true" in neither["message"]
    assert _tool(db, "update_persona", user="ann", interests="qubits")["persona"]["interests"] == "qubits"


# --- prompts --------------------------------------------------------------------------------


@pytest.fixture
def ann(db):
    from hermes.storage.records import create_user

    return create_user(db, "ann", "quantum error correction")


@pytest.mark.parametrize(
    "groups,expected",
    [
        (None, {"triage", "worth_reading"}),
        ({"feeds"}, {"triage"}),
        ({"digest"}, {"worth_reading"}),
        ({"corpus", "persona"}, set()),
    ],
)
async def test_the_seed_questions_are_prompts_served_with_their_tools(db_path, ann, groups, expected):
    async with mcp.Client(build_server(str(db_path), groups)) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        texts = {name: (await client.get_prompt(name, {"user": "ann"})).messages[0].content.text for name in prompts}
    assert set(prompts) == expected
    if "worth_reading" in texts:
        assert "digest" in texts["worth_reading"] and "'ann'" in texts["worth_reading"]
        assert prompts["worth_reading"].title == "What is worth reading this week, and why?"
    if "triage" in texts:
        assert "list_feed" in texts["triage"] and "record_feedback" in texts["triage"]
        assert [a.name for a in prompts["triage"].arguments if a.required] == ["user"]


async def test_a_prompt_refuses_a_count_that_is_not_one(db_path, ann):
    """A trial's worth_reading with days="abc" asked the agent to "call the digest tool with
    days=abc"."""
    async with mcp.Client(build_server(str(db_path), None)) as client:
        for name, args, fix in (
            ("worth_reading", {"user": "ann", "days": "abc"}, "days must be"),
            ("triage", {"user": "ann", "count": "0"}, "count must be"),
        ):
            with pytest.raises(Exception, match=fix):
                await client.get_prompt(name, args)
        text = (await client.get_prompt("worth_reading", {"user": "ann", "days": " 14"})).messages[0].content.text
    assert "days=14" in text


async def test_a_prompt_for_an_unknown_persona_is_refused_before_the_session_starts(db_path, ann):
    """A trial's triage for a persona that does not exist started a session whose first
    list_feed failed; the prompt now refuses it as a tool would, naming the personas."""
    async with mcp.Client(build_server(str(db_path), None)) as client:
        for name in ("triage", "worth_reading"):
            with pytest.raises(Exception, match="unknown persona 'nobody'.*known personas: ann"):
                await client.get_prompt(name, {"user": "nobody"})
        text = (await client.get_prompt("triage", {"user": "ANN"})).messages[0].content.text
    assert "user='ann'" in text and "ANN" not in text  # named as it is stored


def test_advice_that_opens_a_sentence_keeps_a_tool_s_spelling(db, long_items):
    refused = _tool(db, "record_feedback", user="ann", item_id=[99999], liked=True)
    assert not refused["ok"] and "list_feed or search_feed give item ids" in refused["message"]
    assert "List_feed" not in refused["message"]
