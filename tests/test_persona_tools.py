"""The persona tools through their functions: behaviour, and every kind of bad input."""

from __future__ import annotations

import pytest
from test_persona_support import archive, make_persona, snapshot, tool  # noqa: F401

from hermes.embed import get_embedder
from hermes.ranking.rank import rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import require_user
from hermes.tools import collect_tools

PERSONA_TOOLS = {
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


def test_the_group_registers_every_tool_with_truthful_annotations():
    tools = collect_tools({"persona"})
    assert set(tools) == PERSONA_TOOLS
    assert all(t.plugin == "persona" for t in tools.values())
    read_only = {n for n, t in tools.items() if t.read_only}
    assert read_only == {"list_users", "propose_interests", "profile_status", "search_feed"}
    destructive = {n for n, t in tools.items() if t.destructive}
    assert {"delete_persona", "reset_feedback"} <= destructive
    assert not destructive & read_only
    for t in tools.values():
        assert t.description and t.empty, t.name


def test_list_users_empty_then_with_click_counts(db, archive):
    result = tool(db, "list_users")
    assert result["ok"] and result["users"] == [] and "create_persona" in result["message"]
    alice = make_persona(db, "alice")
    make_persona(db, "bob", "baking bread")
    record_click(db, alice["id"], archive[0], True, "agent")
    record_click(db, alice["id"], archive[2], False, "ui")
    users = {u["name"]: u for u in tool(db, "list_users")["users"]}
    assert users["alice"]["clicks"] == 2 and users["alice"]["likes"] == 1 and users["alice"]["dislikes"] == 1
    assert users["bob"]["clicks"] == 0 and users["bob"]["interests"] == "baking bread"


# --- create_persona -----------------------------------------------------------------------


def test_create_persona_is_single_turn(db):
    result = tool(db, "create_persona", name="  alice ", interests=" graph neural networks ")
    assert result["ok"], result["message"]
    assert result["persona"] == {"name": "alice", "interests": "graph neural networks", "not_wanted": []}
    row = require_user(db, "alice")
    assert row["interests"] == "graph neural networks"


@pytest.mark.parametrize("name", ["alice", "ALICE", " Alice "])
def test_duplicate_persona_is_refused_and_nothing_is_written(db, name):
    make_persona(db, "alice", "graph neural networks")
    before = snapshot(db)
    result = tool(db, "create_persona", name=name, interests="something else")
    assert result["ok"] is False and result["persona"] == {}
    assert "already exists" in result["message"] and "'alice'" in result["message"]
    assert snapshot(db) == before


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 65, "at most 64 characters"),
        ("-rf", "start with a letter or digit"),
        ("a/b", "not allowed"),
        ("bob'; DROP TABLE users; --", "not allowed"),
        ("two\nlines", "not allowed"),
        ("_hidden", "start with a letter or digit"),
        (123, "name must be a non-empty string"),
        (None, "name must be a non-empty string"),
    ],
)
def test_invalid_names_are_refused(db, name, fragment):
    before = snapshot(db)
    result = tool(db, "create_persona", name=name, interests="graph neural networks")
    assert result["ok"] is False and fragment in result["message"]
    assert snapshot(db) == before


def test_unicode_letters_are_fine_in_a_name(db):
    assert tool(db, "create_persona", name="Zoë Müller-Łukasz", interests="topology")["ok"]


@pytest.mark.parametrize(
    "interests, fragment",
    [
        ("", "empty"),
        ("  \n\t ", "empty"),
        (
            "x" * 100_000,
            'at most 4,000 characters, got "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" (100,000 characters)',
        ),
        ("a\x00b", "NUL"),
        (None, "must be a non-empty string"),
        (["graphs"], "must be a non-empty string"),
    ],
)
def test_bad_interests_are_refused_and_nothing_is_written(db, interests, fragment):
    before = snapshot(db)
    result = tool(db, "create_persona", name="alice", interests=interests)
    assert result["ok"] is False and fragment in result["message"], result["message"]
    assert snapshot(db) == before


def test_interests_at_the_limit_are_accepted(db):
    assert tool(db, "create_persona", name="alice", interests="y" * 4000)["ok"]


# --- propose_interests --------------------------------------------------------------------


def test_propose_interests_counts_the_most_common_tags(db, archive):
    before = snapshot(db)
    result = tool(db, "propose_interests", limit=3)
    assert result["ok"]
    assert result["tags"][0] == {"tag": "cs.lg", "count": 3}
    assert result["tags"][1] == {"tag": "software", "count": 2}
    assert len(result["tags"]) == 3
    assert {"content_type": "article", "count": 4} in result["content_types"]
    assert result["suggested_interests"].startswith("cs.lg, software")
    assert snapshot(db) == before  # read-only


def test_propose_interests_on_an_empty_archive(db):
    result = tool(db, "propose_interests")
    assert result["ok"] and result["tags"] == [] and "no tagged items" in result["message"]


@pytest.mark.parametrize("limit", [0, -5, 10_000])
def test_propose_interests_refuses_out_of_range_limits(db, archive, limit):
    result = tool(db, "propose_interests", limit=limit)
    assert result["ok"] is False and result["tags"] == []
    assert result["message"] == f"limit must be a whole number from 1 to 100, got {limit}."


@pytest.mark.parametrize("limit", ["12", 1.5, True, None])
def test_propose_interests_refuses_a_non_integer_limit(db, limit):
    result = tool(db, "propose_interests", limit=limit)
    assert result["ok"] is False and "limit must be a whole number" in result["message"]
    assert result["tags"] == []


# --- update_persona -----------------------------------------------------------------------


@pytest.fixture
def embed_calls(monkeypatch):
    """Count the texts the active embedder is asked to embed."""
    embedder = get_embedder()
    calls = []
    original = embedder.embed

    def counting(texts):
        calls.append(list(texts))
        return original(texts)

    monkeypatch.setattr(embedder, "embed", counting)
    return calls


def test_update_persona_re_embeds_only_when_the_text_changes(db, archive, embed_calls):
    alice = make_persona(db, "alice", "graph neural networks")
    rank_items(db, require_user(db, "alice"), since_days=None)
    assert embed_calls == [["graph neural networks"]]
    rank_items(db, require_user(db, "alice"), since_days=None)
    assert len(embed_calls) == 1  # cached by the hash of the text

    result = tool(db, "update_persona", name="alice", interests="baking sourdough bread")
    assert result["ok"] and result["changed"] is True
    assert result["persona"]["previous_interests"] == "graph neural networks"
    assert require_user(db, "alice")["interests"] == "baking sourdough bread"
    top = rank_items(db, require_user(db, "alice"), since_days=None, limit=1)
    assert embed_calls[-1] == ["baking sourdough bread"] and len(embed_calls) == 2
    assert top[0]["id"] == archive[2]  # the new text decides the order

    same = tool(db, "update_persona", name="alice", interests="baking sourdough bread")
    assert same["ok"] and same["changed"] is False and "nothing changed" in same["message"]
    rank_items(db, require_user(db, "alice"), since_days=None)
    assert len(embed_calls) == 2
    assert require_user(db, "alice")["id"] == alice["id"]


def test_update_persona_keeps_the_clicks(db, archive):
    alice = make_persona(db)
    record_click(db, alice["id"], archive[0], True, "ui")
    assert tool(db, "update_persona", name="alice", interests="robots")["ok"]
    assert db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [alice["id"]]).fetchone()[0] == 1


@pytest.mark.parametrize("interests", ["", "x" * 100_000, None])
def test_update_persona_refuses_bad_interests_without_writing(db, interests):
    make_persona(db)
    before = snapshot(db)
    result = tool(db, "update_persona", name="alice", interests=interests)
    assert result["ok"] is False and result["persona"] == {} and result["changed"] is False
    assert snapshot(db) == before


# --- profile_status -----------------------------------------------------------------------


def test_profile_status_of_a_new_persona(db):
    make_persona(db)
    s = tool(db, "profile_status", user="alice")
    assert s["ok"] and s["clicks"] == 0 and s["blend_weight"] == 0.0
    assert s["clicks_by_source"] == {"ui": 0, "agent": 0, "bootstrap": 0}
    assert s["liked_tags"] == [] and s["disliked_tags"] == []
    assert s["classifier_active"] is False and "no clicks" in s["classifier_reason"]


def test_profile_status_reports_what_the_clicks_taught(db, archive):
    alice = make_persona(db)
    record_click(db, alice["id"], archive[0], True, "agent")
    s = tool(db, "profile_status", user="alice")
    assert s["clicks"] == 1 and s["blend_weight"] == round(1 / 6, 4)
    assert s["classifier_active"] is False and "needs at least one dislike" in s["classifier_reason"]
    assert {e["key"] for e in s["liked_tags"]} == {"cs.lg", "chemistry"}

    record_click(db, alice["id"], archive[2], False, "ui")
    record_click(db, alice["id"], archive[6], True, "bootstrap")
    s = tool(db, "profile_status", user="alice")
    assert s["clicks"] == 3 and s["likes"] == 2 and s["dislikes"] == 1
    assert s["blend_weight"] == round(3 / 8, 4)
    assert s["clicks_by_source"] == {"ui": 1, "agent": 1, "bootstrap": 1}
    assert s["liked_tags"][0]["key"] == "cs.lg" and s["liked_tags"][0]["likes"] == 2
    assert [e["key"] for e in s["disliked_tags"]] == ["cooking"]
    assert s["liked_sources"][0]["key"] == "Test feed"
    assert s["classifier_active"] is True and "3 clicked items" in s["classifier_reason"]
    assert s["recent_clicks"][0]["item_id"] == archive[6]
    assert "classifier active" in s["message"]


def test_profile_status_names_dislikes_the_interests_text_asks_for(db, add_items, db_path):
    """A trial's cosmology persona disliked cosmology papers (its own ground truth said so);
    nothing said the clicks now pulled against the text."""
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    ids = add_items(
        [
            {"title": "Dark energy", "tags": ["cosmology", "astro-ph.co"]},
            {"title": "Soufflé", "tags": ["cooking"]},
            {"title": "Robot arms", "tags": ["robotics"]},
        ]
    )
    ann = make_persona(db, "ann", "galaxy formation and cosmology, but not robotics")
    for item in ids:
        record_click(db, ann["id"], item, False, "ui")
    s = tool(db, "profile_status", user="ann")
    # cooking is not asked for, robotics is asked not to be shown
    assert [(e["key"], e["kind"], e["dislikes"]) for e in s["disliked_but_asked_for"]] == [("cosmology", "tag", 1)]
    assert "1 tag or topic the interests text asks for was disliked" in s["message"]
    assert "remove_feedback" in s["message"]
    out = CliRunner().invoke(build_app(), ["persona", "show", "ann", "--db", str(db_path)])
    assert "disliked, but the interests ask for them: cosmology (tag, 1 dislike)" in out.output
    assert "`hermes unrate ann ITEM_ID`" in out.output
    assert tool(db, "profile_status", user="alice" if make_persona(db) else "")["disliked_but_asked_for"] == []


def test_profile_status_is_read_only(db, archive):
    alice = make_persona(db)
    record_click(db, alice["id"], archive[0], True, "agent")
    before = snapshot(db)
    assert tool(db, "profile_status", user="alice")["ok"]
    assert snapshot(db) == before


# --- unknown personas and wrong types, in every tool --------------------------------------

CALLS = {
    "update_persona": {"name": "nobody", "interests": "x"},
    "rename_persona": {"name": "nobody", "new_name": "research"},
    "profile_status": {"user": "nobody"},
    "search_feed": {"user": "nobody", "query": "graph"},
    "delete_persona": {"name": "nobody", "confirm": True},
    "reset_feedback": {"name": "nobody", "confirm": True},
    "bootstrap_persona": {"name": "nobody"},
    "import_library": {"name": "nobody", "text": "@misc{x, title = {A paper}}"},
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_unknown_persona_in_every_tool(db, archive, name):
    make_persona(db, "alice")
    before = snapshot(db)
    result = tool(db, name, **CALLS[name])
    assert result["ok"] is False
    assert "unknown persona 'nobody'" in result["message"] and "alice" in result["message"]
    empty = collect_tools()[name].empty
    echoed = {k: v for k, v in CALLS[name].items() if isinstance(empty.get(k), str)}  # whose call it was
    assert {k: result[k] for k in empty} == {**empty, **echoed}
    assert snapshot(db) == before


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_persona_id_instead_of_a_name_is_refused(db, archive, name):
    alice = make_persona(db, "alice")
    key = "user" if "user" in CALLS[name] else "name"
    before = snapshot(db)
    result = tool(db, name, **{**CALLS[name], key: alice["id"]})
    assert result["ok"] is False and "string" in result["message"]
    assert snapshot(db) == before


@pytest.mark.parametrize("name", sorted(PERSONA_TOOLS))
def test_an_unexpected_argument_is_a_clear_failure(db, name):
    result = tool(db, name, bogus=1)
    assert result["ok"] is False and "bogus" in result["message"]


def test_keyphrase_topics_are_not_reported_as_tags_the_ranking_counts(db, add_items):
    """A trial's `persona show` listed "liked tags: activation patching (+0.33)", keyphrases
    the preference scorer leaves out: a pull on the ranking they do not have."""
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    ids = add_items([{"title": "Activation patching in small transformers", "tags": ["cs.lg"]}])
    db.execute(
        """UPDATE items SET tags = '["cs.lg", "activation patching"]',
                  keyphrases = '["activation patching"]' WHERE id = ?""",
        [ids[0]],
    )
    alice = make_persona(db)
    record_click(db, alice["id"], ids[0], True, "ui")
    s = tool(db, "profile_status", user="alice")
    assert [e["key"] for e in s["liked_tags"]] == ["cs.lg"]
    assert [e["key"] for e in s["liked_topics"]] == ["activation patching"]
    path = db.execute("PRAGMA database_list").fetchone()[2]
    out = CliRunner().invoke(build_app(), ["persona", "show", "alice", "--db", path]).output
    assert "liked tags: cs.lg (+" in out and "activation patching" not in out.split("liked tags:")[1].split("\n")[0]
    assert "liked topics (keyphrases: listed, not counted in the ranking): activation patching" in out


def test_a_persona_is_found_whatever_the_case_it_is_typed_in(db):
    """Creating "ADA" beside "ada" is refused, so the names are one regardless of case; yet
    `hermes like bea 9` answered "unknown persona 'bea' … known personas: Bea"."""
    from hermes.storage.records import require_user

    bea = make_persona(db, "Bea")
    assert require_user(db, "bea")["id"] == bea["id"] and require_user(db, "BEA")["name"] == "Bea"
    result = tool(db, "profile_status", user="bea")
    assert result["ok"] and result["user"] == "Bea"


@pytest.mark.parametrize("name", ["alice", "ALICE", " Alice "])
def test_the_same_create_again_finds_it_done(db, name):
    """Marked idempotent: the same name and interests again is ok, and nothing is written."""
    made = tool(db, "create_persona", name="alice", interests="graph neural networks")
    assert made["ok"] and made["created"] is True
    before = snapshot(db)
    again = tool(db, "create_persona", name=name, interests=" graph neural networks ")
    assert again["ok"] is True and again["created"] is False
    assert again["persona"] == made["persona"] and "nothing changed" in again["message"]
    assert snapshot(db) == before
    other = tool(db, "create_persona", name=name, interests="something else")
    assert other["ok"] is False and "update_persona" in other["message"]


def test_a_word_inside_an_interest_phrase_is_not_asked_for():
    """A trial's profile_status warned that "mechanics" (a keyphrase) was disliked though
    asked for: the text asked for "statistical mechanics", not mechanics."""
    from hermes_persona.status import at_odds

    disliked = {"likes": 0, "dislikes": 1, "score": -0.5}
    stats = {
        "topic:mechanics": disliked,
        "topic:statistical mechanics": disliked,
        "topic:matter": disliked,
        "tag:active matter": disliked,
        "topic:glasses": disliked,
        "tag:interpretability": disliked,
    }
    text = "soft matter, statistical mechanics and active matter; glasses; mechanistic interpretability"
    found = at_odds(stats, text)
    # a feed's tag is its author's word, wherever it sits in the text
    assert sorted(e["key"] for e in found) == ["active matter", "glasses", "interpretability", "statistical mechanics"]
