"""The database is the user's memory: hermes marks its files, refuses to touch anyone
else's, creates one only where a command is meant to start one (and says so), names the
file in its errors, and gives every new database the starter feeds by one rule."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.errors import HermesError
from hermes.storage import dbfile
from hermes.storage.db import get_db


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


def zotero_like(path):
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE items (itemID INTEGER PRIMARY KEY, key TEXT);"
        "CREATE TABLE itemData (itemID INT, fieldID INT, valueID INT);"
        "CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, lastName TEXT);"
        "CREATE TABLE collections (collectionID INTEGER PRIMARY KEY);"
        "INSERT INTO items VALUES (1, 'ABCD');"
    )
    conn.commit()
    conn.close()
    return path


def test_a_hermes_database_is_marked(db):
    assert db.execute("PRAGMA application_id").fetchone()[0] == dbfile.APPLICATION_ID == 0x48524D53
    assert db.execute("PRAGMA user_version").fetchone()[0] == dbfile.FORMAT


def test_another_applications_database_is_refused_named_and_untouched(tmp_path):
    path = zotero_like(tmp_path / "zotero.sqlite")
    before = path.read_bytes()
    with pytest.raises(dbfile.ForeignDatabase) as refused:
        get_db(path)
    assert "a Zotero library" in str(refused.value) and str(path) in str(refused.value)
    assert path.read_bytes() == before  # not even the journal mode changed
    assert not (tmp_path / "zotero.sqlite-wal").exists()

    result = run("persona", "list", "--db", path)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "is a Zotero library" in result.stderr
    assert "itemData" in result.stderr  # says what it holds
    assert path.read_bytes() == before


def test_an_unknown_sqlite_file_is_described_by_its_tables_and_application_id(tmp_path):
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.executescript("PRAGMA application_id = 1234; CREATE TABLE notes (x); CREATE TABLE tasks (y);")
    conn.close()
    with pytest.raises(
        HermesError,
        match=r"another application \(application_id 0x000004d2, "
        r"tables: notes, tasks\)",
    ):
        get_db(path)


def test_an_old_unmarked_hermes_database_is_adopted_and_marked(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT UNIQUE, interests TEXT);"
        "INSERT INTO users (name, interests) VALUES ('ann', 'x');"
    )
    conn.close()
    db = get_db(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == dbfile.APPLICATION_ID
    assert db.execute("SELECT name FROM users").fetchall() == [("ann",)]
    db.conn.close()


@pytest.mark.parametrize(
    "args",
    [
        ["feed", "ann"],
        ["digest", "ann"],
        ["persona", "list"],
        ["feeds", "list"],
        ["like", "ann", "1"],
        ["corpus", "show", "ann"],
        ["topics"],
        ["feeds", "export-opml"],
    ],
)
def test_a_mistyped_path_creates_nothing_for_commands_that_read(tmp_path, args):
    typo = tmp_path / "hemres.db"
    result = run(*args, "--db", typo)
    assert result.exit_code == 1
    assert f"no hermes database at {typo} (from --db); nothing was created" in result.stderr
    assert "hermes persona create" in result.stderr
    assert not typo.exists() and not (tmp_path / "hemres.db-wal").exists()


def test_no_database_but_the_demos_says_how_to_use_that(tmp_path):
    """After `hermes demo`, `hermes feed demo` has no hermes.db to read: name the demo's."""
    from hermes import config

    assert "demo's database" not in run("feed", "demo").stderr
    demo = config.home() / "demo.db"
    get_db(demo).conn.close()
    result = run("feed", "demo")
    assert result.exit_code == 1
    assert f"The demo's database is {demo}: add --db {demo} to use it." in result.stderr


def test_commands_that_start_a_database_say_so(tmp_path):
    path = tmp_path / "new.db"
    result = run("persona", "create", "ann", "--interests", "graph neural networks", "--db", path)
    assert result.exit_code == 0, result.output
    assert f"created a new hermes database at {path}" in result.stderr
    assert path.exists()
    again = run("persona", "create", "bob", "--interests", "x", "--db", path)
    assert "created a new" not in again.stderr  # only the first time


def test_a_failed_start_leaves_no_database_behind(tmp_path):
    path = tmp_path / "new.db"
    result = run("persona", "create", "", "--interests", "x", "--db", path)
    assert result.exit_code == 1 and "NAME must be a non-empty string" in result.stderr
    assert "created a new" not in result.stderr and not path.exists()
    missing = run("feeds", "add", tmp_path / "nope.xml", "--db", path)
    assert missing.exit_code == 1 and not path.exists()


def test_a_missing_folder_in_db_is_not_created(tmp_path):
    path = tmp_path / "no-such-folder" / "hermes.db"
    result = run("persona", "create", "ann", "--interests", "x", "--db", path)
    assert result.exit_code == 1
    assert "the folder" in result.stderr and "does not exist" in result.stderr
    assert not path.parent.exists()


def test_errors_name_the_database_file(db, db_path):
    result = run("feed", "astro", "--db", db_path)
    assert result.exit_code == 1
    assert f"unknown persona 'astro' in {db_path}; no personas exist yet" in result.stderr
    # the advice keeps the --db given
    assert f"hermes --db {db_path} persona create NAME --interests TEXT" in " ".join(result.stderr.split())


def test_db_is_accepted_before_or_after_the_command(db, db_path):
    from hermes.storage.records import create_user

    create_user(db, "ann", "x")
    for args in (["--db", db_path, "persona", "list"], ["persona", "list", "--db", db_path]):
        result = run(*args)
        assert result.exit_code == 0 and "ann" in result.stdout, result.output
    other = db_path.with_name("other.db")
    get_db(other).conn.close()
    # The command's own --db wins over the one before it.
    result = run("--db", db_path, "persona", "list", "--db", other)
    assert "no personas yet" in result.stdout


def test_hermes_db_environment_still_works(db, db_path, monkeypatch):
    monkeypatch.setenv("HERMES_DB", str(db_path))
    result = run("persona", "list")
    assert result.exit_code == 0 and str(db_path) in result.stdout
    monkeypatch.setenv("HERMES_DB", str(db_path.with_name("typo.db")))
    result = run("persona", "list")
    assert result.exit_code == 1 and "(from HERMES_DB)" in result.stderr


# --- starter feeds: one rule, announced ----------------------------------------------------


@pytest.fixture
def starters(tmp_path):
    home = tmp_path / "home"
    (home / "a.xml").write_text("<rss version='2.0'><channel><title>A</title></channel></rss>")
    (home / "feeds.toml").write_text('[[feeds]]\nurl = "a.xml"\n\n[[feeds]]\nurl = "b.xml"\n')
    return home


@pytest.mark.parametrize(
    "first",
    [
        ["persona", "create", "ann", "--interests", "x"],
        ["ingest", "--json"],
    ],
)
def test_every_new_database_starts_with_the_starter_feeds_whichever_command_comes_first(starters, tmp_path, first):
    path = tmp_path / "h.db"
    feed = tmp_path / "mine.xml"
    feed.write_text(
        "<rss version='2.0'><channel><title>Mine</title><item><title>x</title>"
        "<link>https://e.org/x</link></item></channel></rss>"
    )
    result = run(*[str(feed) if a == "FEED" else a for a in first], "--db", path)
    assert "subscribed to 2 starter feeds from" in result.stderr, result.output
    assert f"`hermes --db {path} feeds remove ID --yes` drops one" in " ".join(result.stderr.split())
    listed = json.loads(run("feeds", "list", "--json", "--db", path).stdout)
    urls = {f["url"] for f in listed["feeds"]}
    assert {str(starters / "a.xml"), str(starters / "b.xml")} <= urls
    removed = run("feeds", "remove", "1", "--yes", "--db", path)
    assert removed.exit_code == 0
    again = run("ingest", "--json", "--db", path)
    assert "starter" not in again.stderr  # a removed starter feed never comes back
    assert str(starters / "a.xml") not in {f["url"] for f in json.loads(again.stdout)["feeds"]}


@pytest.mark.parametrize("first", [["feeds", "add", "FEED"], ["feeds", "import-opml", "OPML"]])
def test_a_database_started_with_your_own_feeds_gets_no_starter_feeds(starters, tmp_path, first):
    """Seen in a user trial: `hermes feeds add` as the first command also subscribed four
    internet feeds, whose failures then made every offline ingest exit 1."""
    path = tmp_path / "h.db"
    feed = tmp_path / "mine.xml"
    feed.write_text(
        "<rss version='2.0'><channel><title>Mine</title><item><title>x</title>"
        "<link>https://e.org/x</link></item></channel></rss>"
    )
    opml = tmp_path / "mine.opml"
    opml.write_text(f'<opml version="2.0"><body><outline type="rss" text="Mine" xmlUrl="{feed}"/></body></opml>')
    args = [str(feed) if a == "FEED" else str(opml) if a == "OPML" else a for a in first]
    result = run(*args, "--db", path)
    assert result.exit_code == 0, result.output
    assert "created a new hermes database" in result.stderr and "starter" not in result.stderr
    urls = [f["url"] for f in json.loads(run("feeds", "list", "--json", "--db", path).stdout)["feeds"]]
    assert urls == [str(feed)]
    # and later starting commands do not add them either: the database was started once
    assert "starter" not in run("ingest", "--json", "--db", path).stderr


def test_a_database_whose_start_was_interrupted_gets_them_from_the_next_starting_command(starters, tmp_path):
    """A kill -9 during creation leaves a file that was never given its starter feeds: the
    next command that starts databases finishes the start (a reading command does not)."""
    path = tmp_path / "h.db"
    get_db(path).conn.close()  # created, migrated, never started
    listed = run("feeds", "list", "--json", "--db", path)
    assert json.loads(listed.stdout)["feeds"] == [] and "starter" not in listed.stderr
    result = run("ingest", "--json", "--db", path)
    assert "subscribed to 2 starter feeds" in result.stderr and "created a new" not in result.stderr
    again = run("ingest", "--json", "--db", path)
    assert "starter" not in again.stderr


def test_ingest_says_when_a_new_feed_lists_papers_the_archive_holds(tmp_path):
    """Cross-listed arXiv papers are stored once: the second listing's count is short of its
    entries, and the line for it says why (seen in a user trial: "110 entries" then "92 new")."""
    from pathlib import Path

    samples = Path(__file__).parents[1] / "hermes" / "data" / "samples"
    path = tmp_path / "h.db"
    for name in ("arxiv-quantum-physics.xml", "arxiv-condensed-matter.xml"):
        assert run("feeds", "add", str(samples / name), "--db", path).exit_code == 0
    out = run("ingest", "--db", path).stdout
    # the two listings are fetched at once: whichever is stored second has the 18 shared
    lines = [row for row in out.splitlines() if "arXiv.org" in row]
    assert len(lines) == 2
    assert sum("18 already in the archive (stored once: listed by another feed too" in row for row in lines) == 1


def test_every_command_a_tool_s_message_names_keeps_the_db_given(tmp_path):
    """A trial on the demo's database: the advice "add feeds with `hermes feeds add URL` and
    run `hermes ingest`" sent the person to hermes.db. The CLI's one tool caller writes
    every `hermes …` a message names with the --db given, before or after the command."""
    path = tmp_path / "mine.db"
    assert run("persona", "create", "ann", "--interests", "graphs", "--db", path).exit_code == 0
    for args in (["feed", "ann", "--db", path], ["--db", path, "feed", "ann"]):
        result = run(*args)
        said = " ".join(result.output.split())
        assert f"`hermes --db {path} feeds add URL`" in said, said
        assert "`hermes feeds" not in said and "`hermes ingest" not in said
