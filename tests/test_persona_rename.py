"""``rename_persona`` and ``hermes persona rename``: a new name, the same persona (its clicks,
ranking, corpus and explanations), with the rules of ``create_persona`` for the name."""

from __future__ import annotations

import json

import pytest
from test_persona_support import archive, make_persona, snapshot, tool  # noqa: F401
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.contract import NAME_MAX
from hermes.ranking.rank import rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import require_user
from hermes.tools import collect_tools


@pytest.fixture
def alice(db, archive):
    """A persona with a like and a dislike, so its ranking depends on behaviour too."""
    alice = make_persona(db, "alice")
    record_click(db, alice["id"], archive[1], True, "ui")
    record_click(db, alice["id"], archive[2], False, "agent")
    return alice


def ranking(db, name: str) -> list[tuple[int, float]]:
    return [(r["id"], r["score"]) for r in rank_items(db, require_user(db, name), since_days=None)]


def test_annotations_say_it_changes_a_name_and_can_be_repeated():
    rename = collect_tools({"persona"})["rename_persona"]
    # renaming back restores all: not destructive (hermes.contract.Tool.destructive)
    assert not rename.destructive and rename.idempotent and not rename.read_only
    assert rename.empty == {"persona": {}, "changed": False}


def test_rename_keeps_the_clicks_and_the_ranking(db, alice):
    before = ranking(db, "alice")
    result = tool(db, "rename_persona", name="alice", new_name="research")
    assert result["ok"] and result["changed"] is True, result["message"]
    assert result["persona"] == {"name": "research", "interests": alice["interests"], "previous_name": "alice"}
    assert "2 clicks" in result["message"]
    assert require_user(db, "research")["id"] == alice["id"]
    assert ranking(db, "research") == before
    status = tool(db, "profile_status", user="research")
    assert status["clicks"] == 2 and status["likes"] == 1 and status["user"] == "research"
    gone = tool(db, "profile_status", user="alice")
    assert gone["ok"] is False and "unknown persona 'alice'" in gone["message"]


def test_rename_keeps_the_corpus_and_rewrites_cached_explanations(db, alice, archive):
    assert tool(db, "favorite", user="alice", item_id=archive[0], on=True)["ok"]
    assert tool(db, "explain_item", user="alice", item_id=archive[0], since_days=None)["ok"]
    assert tool(db, "rename_persona", name="alice", new_name="research")["ok"]
    assert tool(db, "corpus", user="research")["saved_count"] == 1
    (payload,) = db.execute("SELECT payload FROM explanations WHERE user_id = ?", [alice["id"]]).fetchone()
    assert json.loads(payload)["user"] == "research"
    assert tool(db, "explain_item", user="research", item_id=archive[0], since_days=None)["ok"]


def test_the_message_names_what_still_uses_the_old_name(db, alice):
    message = tool(db, "rename_persona", name="alice", new_name="my research")["message"]
    assert "/feed/alice.atom" in message  # the Atom feed a reader subscribed to
    assert "hermes-sync" not in message  # a synced folder follows the rename (by id)


@pytest.mark.parametrize("taken", ["bob", "BOB", " Bob "])
def test_a_taken_name_is_refused_regardless_of_case(db, alice, taken):
    make_persona(db, "Bob", "baking bread")
    before = snapshot(db)
    result = tool(db, "rename_persona", name="alice", new_name=taken)
    assert result["ok"] is False and "'Bob' already exists" in result["message"]
    assert result["persona"] == {} and result["changed"] is False
    assert snapshot(db) == before


def test_a_case_only_rename_is_allowed(db, alice):
    result = tool(db, "rename_persona", name="alice", new_name="Alice")
    assert result["ok"] and result["changed"] is True
    assert db.execute("SELECT name FROM users").fetchall() == [("Alice",)]
    assert "/feed/" not in result["message"]  # lookups ignore case: the old URLs still work
    assert tool(db, "profile_status", user="alice")["clicks"] == 2


def test_a_case_change_lookups_do_not_fold_is_announced_as_a_new_name(db, archive):
    """SQLite folds ASCII only: after "Émile" became "émile", "Émile" names nobody."""
    make_persona(db, "Émile")
    result = tool(db, "rename_persona", name="Émile", new_name="émile")
    assert result["ok"] and "/feed/%C3%89mile.atom" in result["message"]
    assert tool(db, "profile_status", user="Émile")["ok"] is False


def test_renaming_to_the_current_name_changes_nothing(db, alice):
    before = snapshot(db)
    result = tool(db, "rename_persona", name="ALICE", new_name=" alice ")
    assert result["ok"] and result["changed"] is False and "nothing changed" in result["message"]
    assert snapshot(db) == before


@pytest.mark.parametrize(
    "bad, said",
    [
        ("", "non-empty string"),
        ("   ", "name is empty"),
        ("-rm", "not allowed"),
        ("a/b", "not allowed"),
        ("x" * (NAME_MAX + 1), f"at most {NAME_MAX} characters"),
        (7, "string"),
    ],
)
def test_a_bad_new_name_is_refused_as_create_persona_refuses_it(db, alice, bad, said):
    before = snapshot(db)
    result = tool(db, "rename_persona", name="alice", new_name=bad)
    assert result["ok"] is False and said in result["message"], result["message"]
    created = tool(db, "create_persona", name=bad, interests="x")
    assert created["ok"] is False and said in created["message"]
    assert snapshot(db) == before


def test_an_unknown_persona_gets_the_error_of_every_persona_tool(db, alice):
    before = snapshot(db)
    result = tool(db, "rename_persona", name="nobody", new_name="research")
    update = tool(db, "update_persona", name="nobody", interests="x")
    assert result["ok"] is False and result["message"] == update["message"]
    assert "unknown persona 'nobody'" in result["message"] and "alice" in result["message"]
    assert snapshot(db) == before


def test_cli_rename(db_path, db, alice):
    def run(*args):
        return CliRunner().invoke(build_app(), ["persona", *args, "--db", str(db_path)])

    done = run("rename", "alice", "research")
    assert done.exit_code == 0 and "renamed persona 'alice' to 'research'" in done.stdout
    assert "/feed/alice.atom" in done.stdout
    as_json = json.loads(run("rename", "research", "Research", "--json").stdout)
    assert as_json["ok"] and as_json["persona"]["previous_name"] == "research"

    make_persona(db, "bob", "baking bread")
    refused = run("rename", "Research", "bob")
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert refused.stderr.strip().splitlines() == [
        "error: a persona named 'bob' already exists; pick another new name for 'Research'"
    ]
    unknown = run("rename", "nobody", "x", "--json")
    assert unknown.exit_code == 1 and json.loads(unknown.stdout)["ok"] is False
    assert {u["name"] for u in json.loads(run("list", "--json").stdout)["users"]} == {"bob", "Research"}
