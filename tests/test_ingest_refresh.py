"""Fresh feeds without cron: the refresh interval, when each feed is due (its ttl, a
server's Retry-After, backoff), one ingest per database across processes, ``hermes ingest
--due / --watch / --no-wait``, the background refresher and what ``list_feeds`` says."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from ingest_server import FeedServer, rss
from typer.testing import CliRunner

from hermes import config
from hermes.cli.app import build_app
from hermes.errors import HermesError
from hermes.ingest import runlock
from hermes.ingest.parse import parse_feed
from hermes.ingest.pipeline import add_feeds, run_ingest
from hermes.ingest.refresher import Refresher, refresh_state
from hermes.ingest.schedule import MAX_TTL, due_ids, next_due
from hermes.storage.db import get_db

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def iso(when: datetime) -> str:
    return when.isoformat(timespec="seconds")


# --- the interval -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("1h", 3600),
        ("30m", 1800),
        ("90s", 90),
        ("2d", 172800),
        ("1h30m", 5400),
        ("45", 45),
        (600, 600),
        ("off", 0),
        ("0", 0),
        ("10min", 600),
    ],
)
def test_durations(text, seconds):
    assert config.parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["soon", "1x", "-5", "", True, -3])
def test_bad_durations_say_how_to_write_one(bad):
    with pytest.raises(HermesError, match="duration|negative"):
        config.parse_duration(bad, "[ingest] every")


def test_every_comes_from_config_then_environment(monkeypatch):
    assert config.settings().ingest_every == 3600  # the default: an hour
    home = config.home()
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[ingest]\nevery = "15m"\n', encoding="utf-8")
    assert config.settings().ingest_every == 900
    monkeypatch.setenv("HERMES_INGEST_EVERY", "off")
    assert config.settings().ingest_every == 0
    (home / "config.toml").write_text('[ingest]\nevery = "whenever"\n', encoding="utf-8")
    monkeypatch.delenv("HERMES_INGEST_EVERY")
    with pytest.raises(HermesError, match=r"\[ingest\] every"):
        _ = config.settings().ingest_every


# --- when a feed is due ---------------------------------------------------------------------


def test_a_feed_is_due_every_interval_or_later_when_it_asks():
    hour = 3600
    assert next_due({"last_fetched": None}, hour) < NOW  # never fetched: due now
    fetched = {"last_fetched": iso(NOW)}
    assert next_due(fetched, hour) == NOW + timedelta(hours=1)
    # its own ttl (3 h) is longer than the interval: honoured
    assert next_due({**fetched, "ttl": 3 * hour}, hour) == NOW + timedelta(hours=3)
    # shorter than the interval: the interval wins (we never poll faster than configured)
    assert next_due({**fetched, "ttl": 60}, hour) == NOW + timedelta(hours=1)
    # a week-long ttl is capped at a day
    assert next_due({**fetched, "ttl": 7 * 86400}, hour) == NOW + MAX_TTL
    # Retry-After / failure backoff later than all that wins
    later = NOW + timedelta(hours=5)
    assert next_due({**fetched, "retry_after": iso(later)}, hour) == later


def test_feed_ttl_is_read_from_rss_ttl_and_syndication_module():
    body = rss([{"title": "a", "link": "https://e.org/a"}]).replace(
        b"<link>http://example.org/</link>", b"<link>http://example.org/</link><ttl>180</ttl>"
    )
    assert parse_feed(body, url="https://e.org/feed").ttl == 180 * 60
    sy = (
        b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://purl.org/rss/1.0/" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/">'
        b'<channel rdf:about="https://e.org/"><title>t</title><link>https://e.org/</link>'
        b"<description>d</description><sy:updatePeriod>daily</sy:updatePeriod>"
        b"<sy:updateFrequency>2</sy:updateFrequency></channel>"
        b'<item rdf:about="https://e.org/1"><title>one</title><link>https://e.org/1</link></item>'
        b"</rdf:RDF>"
    )
    assert parse_feed(sy, url="https://e.org/rdf").ttl == 43200
    plain = rss([{"title": "a", "link": "https://e.org/a"}])
    assert parse_feed(plain, url="https://e.org/feed").ttl is None


@pytest.fixture
def server():
    with FeedServer() as s:
        yield s


def test_a_scheduled_run_fetches_only_the_due_feeds_and_stores_their_ttl(db, server):
    body = rss([{"title": "a", "link": "https://e.org/a"}]).replace(b"</link>", b"</link><ttl>600</ttl>", 1)
    slow = server.add("/slow.xml", body=body)
    fast = server.add("/fast.xml", body=rss([{"title": "b", "link": "https://e.org/b"}]))
    add_feeds(db, [(slow, None), (fast, None)])
    first = run_ingest(db, due_every=60)
    assert sorted(s["status"] for s in first) == ["new", "new"] and first.not_due == 0
    assert db.execute("SELECT ttl FROM feeds WHERE url = ?", [slow]).fetchone()[0] == 36000
    # Pretend both were fetched two minutes ago: due with a 60 s interval, except the feed
    # whose ttl (10 h) says not yet.
    two_minutes_ago = iso(datetime.now(UTC) - timedelta(minutes=2))
    db.execute("UPDATE feeds SET last_fetched = ?", [two_minutes_ago])
    assert due_ids(db, 60) == [db.execute("SELECT id FROM feeds WHERE url = ?", [fast]).fetchone()[0]]
    again = run_ingest(db, due_every=60)
    assert [s["url"] for s in again] == [fast] and again.not_due == 1
    assert server.hits("/slow.xml") == 1 and server.hits("/fast.xml") == 2
    # A manual run (no interval) fetches every feed, as `hermes ingest` always did.
    assert len(run_ingest(db)) == 2


# --- one ingest per database ------------------------------------------------------------------

HOLDER = """
import sys
from hermes.storage.db import get_db
from hermes.ingest.runlock import ingest_run
db = get_db(sys.argv[1])
with ingest_run(db) as status:
    status.progress("fetch", 3, 8)
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def held_lock(db_path, db):
    """Another process holding the database's ingest lock until the test lets it go."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        if proc.poll() is None:
            proc.stdin.write("\n")
            proc.stdin.flush()
        proc.wait(timeout=20)


def test_a_second_ingest_says_which_one_runs_or_waits_for_it(db_path, db, held_lock, server):
    add_feeds(db, [(server.add("/f.xml", body=rss([{"title": "a", "link": "https://e.org/a"}])), None)])
    status = runlock.read_status(db_path)
    assert status["running"]["pid"] == held_lock.pid
    assert status["running"]["stage"] == "fetch" and status["running"]["done"] == 3

    result = CliRunner().invoke(build_app(), ["ingest", "--db", str(db_path), "--no-wait"])
    assert result.exit_code == 75
    assert "another hermes ingest is running" in result.output
    assert f"pid {held_lock.pid}, fetching feeds 3 of 8" in result.output
    assert server.hits("/f.xml") == 0  # nothing fetched

    told, done = [], threading.Event()

    def waiting_run():
        run_ingest(get_db(db_path), on_wait=told.append)  # its own connection, like a process
        done.set()

    worker = threading.Thread(target=waiting_run)
    worker.start()
    time.sleep(0.5)
    assert not done.is_set() and told and told[0]["pid"] == held_lock.pid  # it waits
    held_lock.stdin.write("\n")
    held_lock.stdin.flush()
    worker.join(timeout=30)
    assert done.is_set() and server.hits("/f.xml") == 1
    last = runlock.read_status(db_path)
    assert last["running"] is None
    assert last["last"]["ok"] is True and last["last"]["new_items"] == 1


def test_a_crashed_run_is_not_reported_as_running(db_path, db):
    runlock.status_path(db_path).write_text(
        json.dumps({"running": {"pid": 2**22 + 12345, "started": "x", "stage": "fetch"}, "last": None})
    )
    assert runlock.read_status(db_path)["running"] is None
    with runlock.ingest_run(db, wait=False):  # and the lock is free
        pass


def test_ingest_due_and_watch(db_path, db, server, monkeypatch):
    url = server.add("/f.xml", body=rss([{"title": "a", "link": "https://e.org/a"}]))
    add_feeds(db, [(url, None)])
    app = build_app()
    first = CliRunner().invoke(app, ["ingest", "--db", str(db_path), "--due", "--every", "1h", "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["new_items"] == 1
    second = CliRunner().invoke(app, ["ingest", "--db", str(db_path), "--due", "--every", "1h", "--json"])
    doc = json.loads(second.stdout)
    assert doc["feeds"] == [] and doc["not_due"] == 1 and server.hits("/f.xml") == 1
    bad = CliRunner().invoke(app, ["ingest", "--db", str(db_path), "--due", "--every", "sometime"])
    assert bad.exit_code == 1 and "--every" in bad.output

    sleeps = []

    def fake_sleep(seconds):
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", fake_sleep)
    db.execute("UPDATE feeds SET last_fetched = ?", [iso(datetime.now(UTC) - timedelta(minutes=1))])
    watched = CliRunner().invoke(app, ["ingest", "--db", str(db_path), "--watch", "--every", "2s"])
    assert watched.exit_code == 0, watched.output
    assert "stopped watching" in watched.output and "next check at" in watched.output
    assert server.hits("/f.xml") == 2  # due on the first pass (2 s interval), not the second
    assert all(1 <= s <= 2 for s in sleeps)


# --- the background refresher -----------------------------------------------------------------


def test_refresher_runs_due_feeds_in_a_child_and_list_feeds_says_when(db_path, db, server):
    from hermes.tools import call_tool, collect_tools

    url = server.add("/f.xml", body=rss([{"title": "a", "link": "https://e.org/a"}]))
    add_feeds(db, [(url, None)])
    list_feeds = collect_tools()["list_feeds"]
    before = call_tool(db, list_feeds, {})
    assert before["ok"] and before["refresh"]["background"] is False
    assert before["refresh"]["next"] is None and "hermes ingest" in before["message"]
    assert before["feeds"][0]["next_fetch"] is not None  # never fetched: due at once

    calls = []

    def command(database, every, *, due):
        calls.append(due)
        return [
            sys.executable,
            "-m",
            "hermes.cli",
            "ingest",
            "--db",
            database,
            "--json",
            "--no-wait",
            *(["--due", "--every", f"{every:g}s"] if due else []),
        ]

    refresher = Refresher(db_path, 3600, command=command, start_delay=0).start()
    try:
        deadline = time.monotonic() + 60
        while db.execute("SELECT count(*) FROM items").fetchone()[0] == 0:
            assert time.monotonic() < deadline, refresher.last_error
            time.sleep(0.1)
        while refresher.busy:
            time.sleep(0.1)
        state = call_tool(db, list_feeds, {})["refresh"]
        assert state["background"] is True and state["every"] == 3600
        assert state["last"]["new_items"] == 1 and state["last_refresh"]
        assert state["next"] > state["last_refresh"]  # an hour later
        assert calls == [True]  # a scheduled (due-only) run
        started, message = refresher.refresh_now()
        assert started and "Refresh started" in message
        deadline = time.monotonic() + 60
        while server.hits("/f.xml") < 2:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert calls == [True, False]  # "Refresh now" fetches every feed
    finally:
        refresher.stop()
    assert refresh_state(db)["background"] is False


def test_a_refresh_asked_for_stays_requested_until_its_child_runs(db_path, db, monkeypatch):
    """The web page polls while "Refresh now" starts; one answer of "nothing running and
    nothing asked" in between stopped its progress for good (seen when the loop's look at
    the schedule was slow). Every poll now reads requested or running until the end."""
    import threading
    from pathlib import Path

    release = threading.Event()
    child = (
        "import sys, time\nfrom pathlib import Path\n"
        "go = Path(sys.argv[1]).with_name('go')\n"
        "while not go.exists(): time.sleep(0.05)\n"
    )
    refresher = Refresher(
        db_path, 3600, start_delay=60, command=lambda database, every, due: [sys.executable, "-c", child, database]
    )
    slow = refresher._next_due

    def next_due():  # the schedule's look takes a while (a loaded machine)
        release.wait(5)
        return slow()

    monkeypatch.setattr(refresher, "_next_due", next_due)
    refresher.start()
    try:
        assert refresher.refresh_now()[0]
        seen = []
        for _ in range(10):  # polls while the loop is still looking at the schedule
            state = refresher.state()
            seen.append(bool(state["requested"] or refresher.busy))
            time.sleep(0.02)
        release.set()
        deadline = time.monotonic() + 30
        while refresher._child is None:
            assert time.monotonic() < deadline
            seen.append(bool(refresher.state()["requested"] or refresher.busy))
            time.sleep(0.01)
        assert all(seen), seen
    finally:
        (Path(db_path).with_name("go")).touch()
        refresher.stop()


def test_a_turn_skipped_for_another_ingest_is_no_failure(db_path, db, caplog):
    """The docs say the refresh skips its turn while another ingest runs; web.log said
    "the last refresh exited with status 75 …" as a warning, three times in 20 s."""
    from hermes.ingest.runlock import BUSY_EXIT

    def exits(code):
        return lambda database, every, due: [sys.executable, "-c", f"raise SystemExit({code})"]

    refresher = Refresher(db_path, 3600, command=exits(BUSY_EXIT), start_delay=60)
    refresher._run(due=True)
    assert refresher.last_error is None
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    refresher.command = exits(1)
    refresher._run(due=True)
    assert refresher.last_error and "status 1" in refresher.last_error
    assert [r for r in caplog.records if r.levelname == "WARNING"]


def test_an_unknown_feed_id_leaves_no_trace_in_the_refresh_status(db_path, db):
    """Trial finding: `hermes ingest --feed 42` rightly refused, then `hermes feeds list` and
    the web opened with "Refreshing fails: unknown feed id(s): 42". A usage error is no
    refresh that failed: the status keeps what the last refresh that ran said."""
    before = runlock.read_status(db_path)
    out = CliRunner().invoke(build_app(), ["ingest", "--feed", "42", "--db", str(db_path)])
    assert out.exit_code != 0 and "unknown feed id(s): 42" in out.output
    with pytest.raises(HermesError, match="unknown feed id"):
        run_ingest(db, feed_ids=[42])
    assert runlock.read_status(db_path) == before
    assert refresh_state(db)["failing"] is None
