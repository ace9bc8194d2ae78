"""The person's verbs at the terminal — like, dislike, read, save / unsave, note, highlight,
explain — take the ids `hermes feed` prints, go through the same tool functions as MCP
(one write path), record source ``ui``, and have ``--json``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.hookspecs import hookimpl
from hermes.ranking.match import shown
from hermes.storage.records import create_user


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


@pytest.fixture
def world(db, db_path, add_items):
    ids = add_items(
        [{"title": f"Paper {k} on quantum codes", "tags": ["quant-ph"], "url": f"https://e.org/{k}"} for k in range(4)]
    )
    create_user(db, "ada", "quantum error correction")
    return db, db_path, ids


def clicks(db):
    return db.execute("SELECT item_id, label, source FROM clicks ORDER BY id").fetchall()


def facet(db, item_id):
    row = db.execute("SELECT facet FROM corpus_membership WHERE item_id = ?", [item_id]).fetchone()
    return row[0] if row else None


def test_like_and_dislike_several_ids_with_source_ui(world):
    db, path, ids = world
    result = run("like", "ada", ids[0], ids[1], "--db", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("Recorded a like") == 2
    assert f"the next `hermes --db {path} feed` uses it" in result.stdout  # CLI words, not list_feed
    assert "list_feed" not in result.stdout
    assert run("dislike", "ada", ids[2], "--db", path).exit_code == 0
    assert clicks(db) == [(ids[0], "like", "ui"), (ids[1], "like", "ui"), (ids[2], "dislike", "ui")]
    # A new answer replaces the old one.
    run("dislike", "ada", ids[0], "--db", path)
    assert (ids[0], "dislike", "ui") in clicks(db) and (ids[0], "like", "ui") not in clicks(db)


def test_a_bad_id_among_good_ones_is_an_error_line_and_exit_1_the_rest_applied(world):
    db, path, ids = world
    result = run("like", "ada", ids[0], 999, "--db", path)
    assert result.exit_code == 1
    assert "Recorded a like of item" in result.stdout
    assert result.stderr.startswith("error: unknown item 999 in ")
    assert f"`hermes --db {path} feed USER`" in " ".join(result.stderr.split()) and "search_feed" not in result.stderr
    assert clicks(db) == [(ids[0], "like", "ui")]


def test_like_json_is_one_document(world):
    db, path, ids = world
    result = run("like", "ada", ids[0], ids[3], "--json", "--db", path)
    doc = json.loads(result.stdout)
    assert doc["ok"] is True and doc["message"] == "2 of 2 items done"
    assert [r["click"]["source"] for r in doc["results"]] == ["ui", "ui"]
    bad = run("dislike", "nobody", ids[0], "--json", "--db", path)
    assert bad.exit_code == 1 and json.loads(bad.stdout)["ok"] is False


class SourceSpy:
    def __init__(self):
        self.seen = []

    @hookimpl
    def hermes_signal_written(self, db, signal):
        self.seen.append((signal.kind, signal.source))


def test_read_save_unsave_note_highlight(world, pm):
    db, path, ids = world
    spy = SourceSpy()
    pm.register(spy, name="source_spy")
    assert run("read", "ada", ids[0], "--db", path).exit_code == 0
    assert facet(db, ids[0]) == "experienced"
    saved = run("save", "ada", ids[1], ids[2], "--db", path)
    assert saved.exit_code == 0 and saved.stdout.count(" saved; added to saved") == 2
    assert facet(db, ids[1]) == "saved"
    assert run("unsave", "ada", ids[2], "--db", path).exit_code == 0
    assert facet(db, ids[2]) is None
    note = run("note", "ada", ids[3], "the decoder is the bottleneck", "--json", "--db", path)
    assert json.loads(note.stdout)["note_id"] and facet(db, ids[3]) == "experienced"
    hl = run("highlight", "ada", ids[1], "below threshold", "--note", "key claim", "--db", path)
    assert hl.exit_code == 0 and "Saved highlight" in hl.stdout
    assert facet(db, ids[1]) == "experienced"  # a capture makes a saved item experienced
    assert {kind for kind, _ in spy.seen} >= {"progress", "favorite", "note", "highlight"}
    assert {source for _, source in spy.seen} == {"ui"}  # a person at the terminal


def test_save_takes_item_ids_and_references_in_one_command(world, monkeypatch):
    """Whole numbers are item ids (favorite); anything else is an arXiv id, DOI or URL for
    the save_item tool's function, as a trusted person (private addresses allowed, source ui)."""
    from hermes_corpus import exchange

    db, path, ids = world
    seen = []

    def save(db, user, ref, *, trusted):
        seen.append((user, ref, trusted))
        return {"ok": True, "message": f"Stored {ref}", **exchange.SavedItem.empty()}

    monkeypatch.setattr(exchange, "save", save)
    both = run("save", "ada", "2401.00001", ids[0], "--db", path)
    assert both.exit_code == 0, both.output
    assert seen == [("ada", "2401.00001", True)] and "Stored 2401.00001" in both.stdout
    assert facet(db, ids[0]) == "saved"


def test_explain_prints_the_components_and_json_is_the_tool_result(world):
    db, path, ids = world
    run("like", "ada", ids[0], "--db", path)
    human = run("explain", "ada", ids[1], "--db", path)
    assert human.exit_code == 0, human.output
    assert "components (contribution = weight × " in human.stdout and "profile" in human.stdout
    assert "closest liked items:" in human.stdout and f"[{ids[0]}]" in human.stdout
    # the profile's parts: the interests as the ranking groups them, and the word match
    # (the match line quotes the closest single interest, which can rank differently)
    doc = json.loads(run("explain", "ada", ids[1], "--json", "--db", path).stdout)
    profile = doc["explanation"]["components"]["profile"]
    assert (
        f"ranked on: interests grouped by subject {shown(profile['interest_score'])}, word "
        f"match (BM25) {profile['word_match_bm25']:.2f} at 10% of the profile"
    ) in human.stdout
    # the liked item's own explanation: its closest liked item is itself, said in words
    own = run("explain", "ada", ids[0], "--all", "--db", path).stdout
    assert "liked: you liked this item itself (" in own
    assert f"nearest [{ids[0]}]" not in own
    doc = json.loads(run("explain", "ada", ids[1], "--json", "--db", path).stdout)
    assert doc["ok"] and doc["item_id"] == ids[1] and "components" in doc["explanation"]
    missing = run("explain", "ada", 999, "--db", path)
    assert missing.exit_code == 1 and "unknown item 999" in missing.stderr


def test_item_ids_must_be_numbers(world):
    _, path, _ = world
    result = run("like", "ada", "abc", "--db", path)
    assert result.exit_code == 1 and result.stderr.startswith("error: ")
    assert "(see `hermes like --help`)" in result.stderr


def test_a_read_item_leaves_the_feed_the_digest_and_says_so_when_explained(world):
    """The feed and the digest rank unread items (their messages say so); an item read at
    the terminal leaves both, and explaining it names why instead of giving it a rank."""
    db, path, ids = world
    feed = json.loads(run("feed", "ada", "--all", "--below-bar", "--json", "--db", path).stdout)
    assert ids[0] in [i["id"] for i in feed["items"]]
    assert run("read", "ada", ids[0], "--db", path).exit_code == 0
    feed = json.loads(run("feed", "ada", "--all", "--below-bar", "--json", "--db", path).stdout)
    assert ids[0] not in [i["id"] for i in feed["items"]] and len(feed["items"]) == 3
    digest = json.loads(run("digest", "ada", "--days", "36500", "--below-bar", "--json", "--db", path).stdout)
    listed = [i["id"] for t in digest["topics"] for i in t["items"]]
    listed += [i["id"] for i in digest["unclustered"] + digest["below_bar"]["items"]]
    assert ids[0] not in listed and ids[1] in listed
    explained = run("explain", "ada", ids[0], "--all", "--db", path)
    assert explained.exit_code == 0, explained.output
    assert (
        "Not among the unread items in the whole archive (you have read it or written on it (a note or highlight))"
    ) in explained.stdout
    # a note alone leaves the unread feed too, and is not called reading
    assert run("note", "ada", ids[1], "a thought", "--db", path).exit_code == 0
    noted = run("explain", "ada", ids[1], "--all", "--db", path).stdout
    assert "written on it (a note or highlight)" in noted and "(you have read it)" not in noted


def test_explain_lists_rated_keyphrases_apart_as_not_counted(world):
    """A keyphrase topic the persona has rated is shown, but apart from the tags the ranking
    counts: the preference component leaves keyphrases out."""
    db, path, ids = world
    db.execute(
        'UPDATE items SET tags = \'["quant-ph", "surface code"]\', '
        "keyphrases = '[\"surface code\"]' WHERE id IN (?, ?)",
        [ids[0], ids[1]],
    )
    run("like", "ada", ids[0], "--db", path)
    out = run("explain", "ada", ids[1], "--all", "--db", path).stdout
    rated = out.split("  rated: ")[1].splitlines()[0]
    assert "quant-ph (+0.33)" in rated and "surface code" not in rated
    assert "topics you rated (not counted in the ranking): surface code (+" in out


@pytest.mark.parametrize("text", ["--- text", "-1 is where the bound breaks", "--json is its own word"])
def test_a_note_or_highlight_that_starts_with_a_dash_is_text(world, text):
    db, path, ids = world
    note = run("note", "ada", ids[0], text, "--db", path)
    assert note.exit_code == 0, note.output
    hl = run("highlight", "ada", ids[1], text, "--note", text, "--db", path)
    assert hl.exit_code == 0, hl.output
    assert db.execute("SELECT text FROM corpus_notes").fetchone()[0] == text
    assert db.execute("SELECT text, note FROM corpus_highlights").fetchone() == (text, text)


def test_a_mistyped_option_after_a_note_is_still_an_error(world):
    _, path, ids = world
    result = run("note", "ada", ids[0], "a thought", "--jsno", "--db", path)
    assert result.exit_code == 1 and result.stderr.startswith("error: ")
