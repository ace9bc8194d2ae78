"""``hermes ingest``: per-feed lines for people, one JSON document with --json, seeding
from feeds.toml on a new database, clear errors."""

from __future__ import annotations

import json

import pytest
from ingest_server import rss
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.storage.db import get_db


@pytest.fixture
def feeds_dir(tmp_path, monkeypatch):
    """A HERMES_HOME whose feeds.toml lists a good local feed and a missing one."""
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "good.xml").write_bytes(
        rss([{"title": f"Post {k}", "link": f"https://e.org/{k}"} for k in range(4)], title="Good feed")
    )
    (home / "feeds.toml").write_text(
        '[[feeds]]\nurl = "good.xml"\n\n[[feeds]]\nurl = "gone.xml"\ntitle = "Gone"\n', encoding="utf-8"
    )
    return home


def invoke(*args):
    return CliRunner().invoke(build_app(), ["ingest", *args])


def test_ingest_json_is_one_document(feeds_dir, tmp_path):
    db = str(tmp_path / "h.db")
    result = invoke("--db", db, "--json")
    assert result.exit_code == 1, result.output  # one feed failed: named, the other stored
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["new_items"] == 4 and doc["embedded"] == 4
    assert doc["feeds_by_status"] == {"new": 1, "unchanged": 0, "failed": 1, "skipped": 0}
    by_status = {f["status"]: f for f in doc["feeds"]}
    assert by_status["new"]["new"] == 4 and by_status["new"]["title"] == "Good feed"
    assert "file not found" in by_status["failed"]["error"]

    again = json.loads(invoke("--db", db, "--json").stdout)
    assert again["embedded"] == 0 and again["new_items"] == 0
    assert again["feeds_by_status"]["unchanged"] == 1


def test_ingest_human_output_has_a_line_per_feed_and_no_progress_bar(feeds_dir, tmp_path):
    result = invoke("--db", str(tmp_path / "h.db"))
    assert result.exit_code == 1  # a feed failed
    lines = result.stdout.splitlines()
    assert any("new" in l and "Good feed: 4 new" in l for l in lines)
    assert any("failed" in l and "Gone: file not found" in l for l in lines)
    assert "4 new items from 2 feeds" in lines[-1]
    assert "\r" not in result.output and "Fetching" not in result.output  # not a terminal
    errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and "1 feed failed: #2" in errors[0] and "gone.xml" in errors[0]
    assert "the other feeds were stored" in errors[0]


def test_every_line_on_stdout_and_stderr_ends_with_a_newline(feeds_dir, tmp_path):
    """A trial saw stderr's "created a new hermes database" run into stdout's last line on a
    terminal: each stream's every line ends with a newline, the last one too."""
    result = invoke("--db", str(tmp_path / "fresh.db"))
    assert result.stdout.endswith("\n") and result.stderr.endswith("\n")
    assert "created a new hermes database at" in result.stderr.splitlines()[0]
    for stream in (result.stdout, result.stderr):
        assert all(line.endswith("\n") for line in stream.splitlines(keepends=True))


def test_feed_option_and_unknown_feed(feeds_dir, tmp_path):
    db = str(tmp_path / "h.db")
    invoke("--db", db, "--json")
    conn = get_db(db)
    good = conn.execute("SELECT id FROM feeds WHERE url LIKE '%good.xml'").fetchone()[0]
    conn.conn.close()
    doc = json.loads(invoke("--db", db, "--feed", str(good), "--json").stdout)
    assert [f["feed_id"] for f in doc["feeds"]] == [good]
    bad = invoke("--db", db, "--feed", "999")
    assert bad.exit_code == 1 and "unknown feed id(s): 999" in bad.output
    assert "Traceback" not in bad.output


def test_exit_status_is_1_when_every_feed_failed(tmp_path):
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "feeds.toml").write_text('[[feeds]]\nurl = "nope.xml"\n', encoding="utf-8")
    result = invoke("--db", str(tmp_path / "h.db"), "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["ok"] is False


def test_no_feeds_says_what_to_do(tmp_path):
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "feeds.toml").write_text("# nothing yet\n", encoding="utf-8")
    result = invoke("--db", str(tmp_path / "h.db"))
    assert result.exit_code == 0 and "hermes feeds add" in result.output


def test_embedding_failure_is_one_line_and_the_next_run_completes(feeds_dir, tmp_path, pm):
    from hermes.hookspecs import hookimpl

    class Broken:
        name, dimension = "broken", 384

        def embed(self, texts):
            raise RuntimeError("no model")

    class Plugin:
        @hookimpl(tryfirst=True)
        def hermes_embedder(self):
            return Broken()

    db = str(tmp_path / "h.db")
    plugin = Plugin()
    pm.register(plugin, name="broken-embedder")
    result = invoke("--db", db)
    assert result.exit_code == 1 and "embedding failed" in result.output
    assert "Traceback" not in result.output
    pm.unregister(plugin)
    pm.embedder = None
    doc = json.loads(invoke("--db", db, "--json").stdout)
    assert doc["embedded"] == 4 and doc["new_items"] == 0


def test_ctrl_c_says_what_was_stored_and_that_embedding_resumes(feeds_dir, tmp_path, monkeypatch):
    from hermes.ingest import pipeline

    db = str(tmp_path / "h.db")
    original = pipeline.embed_new

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "embed_new", interrupted)
    result = invoke("--db", db)
    assert result.exit_code == 130
    assert (
        "interrupted: 4 new items from 1 feed stored; 4 not embedded yet — the next `hermes ingest` embeds them"
    ) in result.stderr
    monkeypatch.setattr(pipeline, "embed_new", original)
    resumed = json.loads(invoke("--db", db, "--json").stdout)
    assert resumed["embedded"] == 4 and resumed["new_items"] == 0


def stored(path) -> int:
    """Items in the database at ``path`` so far (0 while it does not exist or is locked)."""
    import sqlite3
    from contextlib import closing

    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1)) as conn:
            return conn.execute("SELECT count(*) FROM items").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_ctrl_c_on_a_terminal_stops_a_hanging_fetch(tmp_path):
    """A real SIGINT while one feed hangs: the feed that answered is kept, the person is told."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    pexpect = pytest.importorskip("pexpect")
    from process_support import child_env, hermes_command, sigint_as_on_a_terminal

    release = threading.Event()

    class Slow(BaseHTTPRequestHandler):
        def do_GET(self):
            release.wait(30)
            self.send_response(503)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = tmp_path / "home"
    (home / "good.xml").write_bytes(
        rss([{"title": f"Post {k}", "link": f"https://e.org/{k}"} for k in range(3)], title="Good feed")
    )
    (home / "feeds.toml").write_text(
        f'[[feeds]]\nurl = "good.xml"\n\n[[feeds]]\nurl = "http://127.0.0.1:{server.server_address[1]}/slow"\n'
    )
    cmd = hermes_command()
    child = pexpect.spawn(
        cmd[0],
        [*cmd[1:], "ingest", "--db", str(tmp_path / "h.db")],
        env=child_env(home),
        encoding="utf-8",
        timeout=60,
        preexec_fn=sigint_as_on_a_terminal,
    )
    try:
        child.expect("starter feeds")
        # Interrupt once the local feed is stored and the other one hangs (a fixed sleep
        # could interrupt a loaded machine's child before it fetches at all).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and stored(tmp_path / "h.db") < 3:
            time.sleep(0.1)
        time.sleep(0.3)
        child.sendintr()
        child.expect("interrupted: 3 new items from 1 feed stored; 3 not embedded yet", timeout=20)
        child.expect(pexpect.EOF, timeout=20)
        child.close()
        assert child.exitstatus == 130
    finally:
        release.set()
        server.shutdown()
        server.server_close()
