"""delete_persona and reset_feedback: confirm=false changes nothing and names the loss;
confirm=true removes exactly one persona's data, in one transaction."""

from __future__ import annotations

import pytest
from hermes_persona.tools import destroy
from test_persona_support import archive, make_persona, snapshot, tool  # noqa: F401

from hermes.hookspecs import hookimpl
from hermes.storage.clicks import record_click


@pytest.fixture
def two(db, archive):
    """alice (3 clicks, 1 explanation, 2 plugin rows) and bob (1 click, same kinds of rows)."""
    alice = make_persona(db, "alice", "graph neural networks")
    bob = make_persona(db, "bob", "sourdough baking")
    record_click(db, alice["id"], archive[0], True, "agent")
    record_click(db, alice["id"], archive[1], True, "ui")
    record_click(db, alice["id"], archive[2], False, "bootstrap")
    record_click(db, bob["id"], archive[2], True, "ui")
    # A plugin-owned per-persona table (as the corpus plugin adds), found generically, and
    # one that names the persona through a foreign key instead of a user_id column.
    db.execute("CREATE TABLE plugin_notes (id INTEGER PRIMARY KEY, user_id INTEGER, item_id INTEGER, body TEXT)")
    db.execute("CREATE TABLE plugin_state (owner INTEGER NOT NULL REFERENCES users(id), revision INTEGER)")
    for persona in (alice, bob):
        db.execute(
            "INSERT INTO explanations (user_id, item_id, payload) VALUES (?, ?, '{}')", [persona["id"], archive[0]]
        )
        db.execute("INSERT INTO plugin_state (owner, revision) VALUES (?, 7)", [persona["id"]])
    db.execute(
        "INSERT INTO plugin_notes (user_id, item_id, body) VALUES (?, ?, 'a'), (?, ?, 'b'), (?, ?, 'c')",
        [alice["id"], archive[0], alice["id"], archive[1], bob["id"], archive[2]],
    )
    return alice, bob


def rows_of(db, persona_id) -> dict:
    return {
        "users": db.execute("SELECT count(*) FROM users WHERE id = ?", [persona_id]).fetchone()[0],
        "clicks": db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [persona_id]).fetchone()[0],
        "explanations": db.execute("SELECT count(*) FROM explanations WHERE user_id = ?", [persona_id]).fetchone()[0],
        "plugin_notes": db.execute("SELECT count(*) FROM plugin_notes WHERE user_id = ?", [persona_id]).fetchone()[0],
        "plugin_state": db.execute("SELECT count(*) FROM plugin_state WHERE owner = ?", [persona_id]).fetchone()[0],
    }


def bob_rows(db, bob) -> list:
    return [
        db.execute("SELECT * FROM users WHERE id = ?", [bob["id"]]).fetchall(),
        db.execute("SELECT * FROM clicks WHERE user_id = ?", [bob["id"]]).fetchall(),
        db.execute("SELECT * FROM explanations WHERE user_id = ?", [bob["id"]]).fetchall(),
        db.execute("SELECT * FROM plugin_notes WHERE user_id = ?", [bob["id"]]).fetchall(),
        db.execute("SELECT * FROM plugin_state WHERE owner = ?", [bob["id"]]).fetchall(),
    ]


def test_delete_without_confirm_changes_nothing_and_names_the_loss(db, two):
    before = snapshot(db)
    result = tool(db, "delete_persona", name="alice", confirm=False)
    assert result["ok"] is False and result["deleted"] == {}
    msg = result["message"]
    assert msg.startswith("nothing changed")
    assert "persona 'alice'" in msg and "3 clicks (2 likes, 1 dislike)" in msg
    assert "1 cached explanation" in msg and "2 rows in plugin_notes" in msg and "1 row in plugin_state" in msg
    assert "confirm=true" in msg
    assert result["would_delete"]["persona"] == "alice" and result["would_delete"]["clicks"] == 3
    assert result["would_delete"]["rows"]["plugin_notes"] == 2
    assert snapshot(db) == before


def test_delete_with_confirm_removes_the_persona_and_everything_it_owns(db, two):
    alice, bob = two
    keep = bob_rows(db, bob)
    items = db["items"].count
    result = tool(db, "delete_persona", name="alice", confirm=True)
    assert result["ok"], result["message"]
    assert result["deleted"]["persona"] == "alice" and result["deleted"]["clicks"] == 3
    assert result["deleted"]["rows"] == {"clicks": 3, "explanations": 1, "plugin_notes": 2, "plugin_state": 1}
    assert rows_of(db, alice["id"]) == dict.fromkeys(rows_of(db, alice["id"]), 0)
    assert bob_rows(db, bob) == keep  # nothing of another persona changes
    assert db["items"].count == items
    again = tool(db, "delete_persona", name="alice", confirm=True)
    assert again["ok"] is False and "unknown persona 'alice'" in again["message"]


def test_reset_without_confirm_changes_nothing_and_names_the_clicks(db, two):
    before = snapshot(db)
    result = tool(db, "reset_feedback", name="alice", confirm=False)
    assert result["ok"] is False and result["deleted"] == {}
    assert "3 clicks (2 likes, 1 dislike)" in result["message"]
    assert "persona 'alice'" not in result["loss"] and "plugin_notes" not in result["loss"]  # they stay
    # and the preview says what stays: the persona and every other row it owns (its corpus)
    assert (
        "The persona and its interests are kept, with 2 rows in plugin_notes and 1 row in plugin_state. Call"
        in result["message"]
    ), result["message"]
    assert snapshot(db) == before


def test_reset_with_confirm_clears_only_the_feedback(db, two):
    alice, bob = two
    keep = bob_rows(db, bob)
    result = tool(db, "reset_feedback", name="alice", confirm=True)
    assert result["ok"], result["message"]
    assert "kept" in result["message"]
    # a sentence (a trial's read "deleted 3 bootstrap clicks … (not from bootstrap)" and stopped)
    assert result["message"].startswith("Deleted ") and result["message"].endswith("."), result["message"]
    assert rows_of(db, alice["id"]) == {
        "users": 1,
        "clicks": 0,
        "explanations": 0,
        "plugin_notes": 2,
        "plugin_state": 1,
    }
    assert (
        db.execute("SELECT interests FROM users WHERE id = ?", [alice["id"]]).fetchone()[0] == "graph neural networks"
    )
    assert bob_rows(db, bob) == keep
    status = tool(db, "profile_status", user="alice")
    assert status["clicks"] == 0 and status["liked_tags"] == []
    # idempotent: a second reset finds nothing and removes nothing
    assert tool(db, "reset_feedback", name="alice", confirm=True)["deleted"]["clicks"] == 0


@pytest.mark.parametrize("name", ["delete_persona", "reset_feedback"])
@pytest.mark.parametrize("confirm", ["true", "yes", 1, None])
def test_confirm_must_be_a_real_boolean(db, two, name, confirm):
    before = snapshot(db)
    result = tool(db, name, name="alice", confirm=confirm)
    assert result["ok"] is False and "confirm must be true or false" in result["message"]
    assert result["deleted"] == {} and snapshot(db) == before


@pytest.mark.parametrize("name", ["delete_persona", "reset_feedback"])
def test_confirm_is_required(db, two, name):
    before = snapshot(db)
    result = tool(db, name, name="alice")
    assert result["ok"] is False and "confirm" in result["message"]
    assert snapshot(db) == before


class Observer:
    def __init__(self, fail=False):
        self.seen, self.fail = [], fail

    @hookimpl
    def hermes_signal_written(self, db, signal):
        self.seen.append((signal.kind, signal.op, signal.item_id, signal.data.get("label")))
        if self.fail:
            raise RuntimeError("observer refuses")


def test_clearing_clicks_goes_through_the_signal_path(db, archive, two, pm):
    observer = Observer()
    pm.register(observer, name="observer")
    assert tool(db, "reset_feedback", name="alice", confirm=True)["ok"]
    assert observer.seen == [
        ("click", "delete", archive[0], "like"),
        ("click", "delete", archive[1], "like"),
        ("click", "delete", archive[2], "dislike"),
    ]


def test_a_failing_observer_rolls_the_whole_delete_back(db, two, pm):
    pm.register(Observer(fail=True), name="observer")
    before = snapshot(db)
    result = tool(db, "delete_persona", name="alice", confirm=True)
    # the plugin's own words stay in the log (issue 33): the answer says it failed
    assert result["ok"] is False and "failed unexpectedly" in result["message"]
    assert "observer refuses" not in result["message"]
    assert snapshot(db) == before


def test_a_plugin_full_text_index_follows_its_content_table(db, two):
    """A virtual table is left to its owner's triggers; the rows behind it still go."""
    alice, bob = two
    db.execute(
        "CREATE VIRTUAL TABLE plugin_notes_fts USING fts5(body, user_id UNINDEXED, "
        "content='plugin_notes', content_rowid='id')"
    )
    db.execute("INSERT INTO plugin_notes_fts(plugin_notes_fts) VALUES ('rebuild')")
    db.execute(
        "CREATE TRIGGER plugin_notes_ad AFTER DELETE ON plugin_notes BEGIN "
        "INSERT INTO plugin_notes_fts(plugin_notes_fts, rowid, body, user_id) "
        "VALUES ('delete', old.id, old.body, old.user_id); END"
    )
    would = tool(db, "delete_persona", name="alice", confirm=False)["would_delete"]["rows"]
    assert "plugin_notes_fts" not in would and would["plugin_notes"] == 2
    assert tool(db, "delete_persona", name="alice", confirm=True)["ok"]
    assert db.execute("INSERT INTO plugin_notes_fts(plugin_notes_fts) VALUES ('integrity-check')")
    assert db.execute("SELECT rowid FROM plugin_notes_fts WHERE plugin_notes_fts MATCH 'a OR b OR c'").fetchall() == [
        (r[0],) for r in db.execute("SELECT id FROM plugin_notes WHERE body = 'c'")
    ]


def test_corpus_rows_go_with_a_deleted_persona_and_survive_a_reset(db, archive):
    """With the real corpus tool group (reached through the collected tools, never imported)."""
    from hermes.tools import collect_tools

    if not {"add_highlight", "favorite", "corpus"} <= set(collect_tools()):
        pytest.skip("the corpus tool group is not registered")
    alice = make_persona(db, "alice", "graphs")
    make_persona(db, "bob", "bread")
    for persona in ("alice", "bob"):
        assert tool(db, "add_highlight", user=persona, item_id=archive[0], text="message passing")["ok"]
        assert tool(db, "favorite", user=persona, item_id=archive[1])["ok"]
    record_click(db, alice["id"], archive[0], True, "agent")
    bob_corpus = tool(db, "corpus", user="bob")

    refused = tool(db, "delete_persona", name="alice", confirm=False)
    assert "1 highlight" in refused["message"] and "1 favourite" in refused["message"]

    preview = tool(db, "reset_feedback", name="alice", confirm=False)["message"]
    stays = preview.split("The persona and its interests are kept, with ")[1]  # the reset's preview says so
    assert "items in the personal corpus" in stays and "1 highlight" in stays and "1 favourite" in stays, preview
    assert tool(db, "reset_feedback", name="alice", confirm=True)["ok"]
    kept = tool(db, "corpus", user="alice")
    assert kept["experienced_count"] == 1 and kept["saved_count"] == 1

    assert tool(db, "delete_persona", name="alice", confirm=True)["ok"]
    leftovers = {
        t: db.execute(f'SELECT count(*) FROM "{t}" WHERE user_id = ?', [alice["id"]]).fetchone()[0]
        for t in db.table_names()
        if t.startswith("corpus_") and "user_id" in db[t].columns_dict
    }
    assert leftovers and set(leftovers.values()) == {0}
    assert tool(db, "corpus", user="bob") == bob_corpus


def test_a_deleted_persona_id_is_never_handed_to_a_new_persona(db, archive):
    make_persona(db, "alice", "graphs")
    bob = make_persona(db, "bob", "bread")
    assert tool(db, "delete_persona", name="bob", confirm=True)["ok"]
    carol = make_persona(db, "carol", "robots")
    assert carol["id"] > bob["id"]
    assert tool(db, "delete_persona", name="carol", confirm=True)["ok"]
    assert tool(db, "delete_persona", name="alice", confirm=True)["ok"]
    dave = make_persona(db, "dave", "gardens")
    assert dave["id"] > carol["id"]
    assert tool(db, "profile_status", user="dave")["clicks"] == 0


def test_a_delete_names_the_corpus_rows_in_a_person_s_words(db, archive):
    """A trial's dry run said "1 row in corpus_favorites, 2 rows in corpus_log": table names,
    which mean nothing to the person deciding. The migration that made a table says what its
    rows are (``Migration.rows``); a bookkeeping table is counted but not named."""
    make_persona(db, "alice")
    for item in archive[:2]:
        assert tool(db, "mark_read", user="alice", item_id=item)["ok"]
    assert tool(db, "add_highlight", user="alice", item_id=archive[0], text="a passage")["ok"]
    msg = tool(db, "delete_persona", name="alice", confirm=False)["message"]
    assert "2 items in the personal corpus" in msg and "1 highlight" in msg
    assert "2 entries of the corpus's change log" in msg
    assert "corpus_" not in msg and "revision" not in msg


# --- a reset of one click source (a library import taken back) ---------------------------------


def sources_of(db, persona_id) -> list[str]:
    return [r[0] for r in db.execute("SELECT source FROM clicks WHERE user_id = ? ORDER BY source", [persona_id])]


def test_reset_of_one_source_keeps_the_other_clicks(db, two):
    alice, bob = two
    keep = bob_rows(db, bob)
    result = tool(db, "reset_feedback", name="alice", confirm=True, source="bootstrap")
    assert result["ok"], result["message"]
    assert result["deleted"]["clicks"] == 1 and result["deleted"]["dislikes"] == 1
    assert "1 bootstrap click (0 likes, 1 dislike)" in result["message"]
    assert "2 other clicks" in result["message"]
    assert sources_of(db, alice["id"]) == ["agent", "ui"]
    # the cached explanations go, as with a full reset: they may cite the removed click
    assert rows_of(db, alice["id"])["explanations"] == 0
    assert bob_rows(db, bob) == keep
    again = tool(db, "reset_feedback", name="alice", confirm=True, source="bootstrap")
    assert again["ok"] and again["deleted"]["clicks"] == 0 and sources_of(db, alice["id"]) == ["agent", "ui"]


def test_a_preview_of_one_source_says_the_other_clicks_stay_by_source(db, two):
    said = tool(db, "reset_feedback", name="alice", source="bootstrap")["message"]
    assert "would permanently delete 1 bootstrap click (0 likes, 1 dislike) and 1 cached explanation." in said
    assert "The persona and its interests are kept, with its 2 other clicks (1 ui, 1 agent), 2 rows" in said, said


def test_nothing_of_that_source_to_reset_is_said_and_is_no_refusal(db, two):
    """A trial: the import already taken back, a second ``reset --source bootstrap`` said
    "error: nothing changed (no --yes): this would permanently delete 0 bootstrap clicks"."""
    alice, _ = two
    assert tool(db, "reset_feedback", name="alice", confirm=True, source="bootstrap")["deleted"]["clicks"] == 1
    before = snapshot(db)
    for confirm in (False, True):
        result = tool(db, "reset_feedback", name="alice", confirm=confirm, source="bootstrap")
        assert result["ok"] is True, result["message"]
        assert result["message"] == "Persona 'alice' has no bootstrap clicks: nothing to reset."
        assert result["deleted"]["clicks"] == 0 and result["would_delete"]["clicks"] == 0
    assert snapshot(db) == before
    assert tool(db, "reset_feedback", name="alice", confirm=True)["deleted"]["clicks"] == 2
    none = tool(db, "reset_feedback", name="alice", confirm=False)
    assert none["ok"] and none["message"] == "Persona 'alice' has no clicks: nothing to reset."
    # a delete always has the persona to delete: still a preview
    assert tool(db, "delete_persona", name="alice", confirm=False)["ok"] is False


def test_reset_of_one_source_without_confirm_names_only_that_source(db, two):
    before = snapshot(db)
    result = tool(db, "reset_feedback", name="alice", source="ui")
    assert result["ok"] is False and result["deleted"] == {}
    assert "1 ui click (1 like, 0 dislikes)" in result["message"]
    assert result["would_delete"]["clicks"] == 1 and result["would_delete"]["rows"]["clicks"] == 1
    assert "source='ui'" in result["message"]
    assert snapshot(db) == before


def test_reset_of_an_unknown_source_is_refused_naming_the_valid_ones(db, two):
    before = snapshot(db)
    for call in (
        lambda: tool(db, "reset_feedback", name="alice", confirm=True, source="zotero"),
        lambda: destroy(db, "alice", True, persona=False, of_source="zotero"),  # past the schema
    ):
        result = call()
        assert result["ok"] is False
        for word in ("zotero", "ui", "agent", "bootstrap"):
            assert word in result["message"], result["message"]
    assert snapshot(db) == before


def test_cli_reset_by_source(db, db_path, two):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    alice, _ = two

    def run(*args):
        return CliRunner().invoke(build_app(), ["persona", "reset", "alice", *args, "--db", str(db_path)])

    dry = run("--source", "bootstrap")
    assert "1 bootstrap click" in dry.output and "--yes" in dry.output
    assert sources_of(db, alice["id"]) == ["agent", "bootstrap", "ui"]
    done = run("--source", "bootstrap", "--yes")
    assert done.exit_code == 0, done.output
    assert sources_of(db, alice["id"]) == ["agent", "ui"]
    again = run("--source", "bootstrap")  # nothing left of it: said, exit 0, no --yes asked for
    assert again.exit_code == 0 and again.stdout.strip() == "Persona 'alice' has no bootstrap clicks: nothing to reset."
    bad = run("--source", "web", "--yes")
    assert bad.exit_code != 0 and "bootstrap" in bad.output + bad.stderr
