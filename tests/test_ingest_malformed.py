"""A malformed document is no feed (the user trial's malformed.xml): XML broken so badly that
no entry can be read. feedparser's lenient parser still pieces a channel title together from
the wreck ("Brokenoops"); hermes refuses it instead of subscribing it, reporting it as
"unchanged", or listing it as ok. A bozo feed that still yields entries keeps working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from feeds_support import SAMPLE_ENTRIES, CannedServer, rss
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.ingest.parse import ParseError, parse_feed
from hermes.tools import call_tool, collect_tools

MALFORMED = (Path(__file__).parent / "fixtures" / "malformed-no-entries.xml").read_bytes()
URL = "https://example.org/feed.xml"


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


def tool(db, name, /, **arguments) -> dict:
    return call_tool(db, collect_tools()[name], arguments)


def test_broken_xml_without_entries_is_no_feed():
    with pytest.raises(
        ParseError,
        match=r"malformed feed: line 1, column \d+: mismatched tag, "
        r"and no entries could be read",
    ):
        parse_feed(MALFORMED, url=URL)


def test_bozo_feeds_that_still_read_keep_working():
    # A broken end after a readable entry: stored, with the problem as a warning.
    body = rss("Truncated", SAMPLE_ENTRIES[:1]).replace(b"</channel></rss>", b"<item><title>x</ti")
    feed = parse_feed(body, url=URL)
    assert [i["title"] for i in feed.items] == [SAMPLE_ENTRIES[0]["title"]] and feed.warning
    # Well-formed and empty, with only a note about how it was served: a quiet feed.
    quiet = parse_feed(
        b'<rss version="2.0"><channel><title>Quiet</title></channel></rss>',
        url=URL,
        headers={"Content-Type": "text/plain"},
    )
    assert quiet.title == "Quiet" and quiet.items == [] and quiet.warning
    # An HTML entity XML does not define: feedparser reads it right (most of its own test
    # corpus is such documents), so a quiet feed with one is still a feed.
    entity = parse_feed(b'<rss version="2.0"><channel><title>Caf&eacute;&nbsp;news</title></channel></rss>', url=URL)
    assert entity.title == "Caf\u00e9 news" and entity.items == [] and "undefined entity" in entity.warning


@pytest.fixture
def server():
    with CannedServer() as canned:
        canned.routes["/malformed.xml"] = (200, {"Content-Type": "application/xml"}, MALFORMED)
        canned.routes["/good.xml"] = (200, {}, rss("Good", SAMPLE_ENTRIES))
        yield canned


def test_feeds_add_refuses_it_and_says_nothing_was_subscribed(db_path, server):
    result = run("feeds", "add", server.url("/malformed.xml"), "--db", db_path)
    assert result.exit_code == 1, result.output
    assert "is not a usable feed: malformed feed: line 1, column" in result.output
    assert "mismatched tag" in result.output and "nothing was subscribed" in result.output
    assert "Brokenoops" not in result.output and "Subscribed" not in result.output
    preview = run("feeds", "preview", server.url("/malformed.xml"))
    assert preview.exit_code == 1 and "mismatched tag" in preview.output
    listed = run("feeds", "list", "--json", "--db", db_path)
    assert listed.exit_code != 0 or json.loads(listed.stdout)["feeds"] == []


def test_add_feed_and_preview_feed_refuse_it(db, server, monkeypatch):
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")
    added = tool(db, "add_feed", url=server.url("/malformed.xml"))
    assert added["ok"] is False and added["feed"] == {}
    assert "mismatched tag" in added["message"] and "nothing was subscribed" in added["message"]
    previewed = tool(db, "preview_feed", url=server.url("/malformed.xml"))
    assert previewed["ok"] is False and "mismatched tag" in previewed["message"]
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 0


def test_ingest_marks_a_subscription_that_broke_failed(db_path, server):
    # Subscribed while it was fine; the server then sends the broken document.
    server.routes["/feed.xml"] = (200, {}, rss("Was fine", SAMPLE_ENTRIES[:1]))
    for path in ("/feed.xml", "/good.xml"):
        assert run("feeds", "add", server.url(path), "--db", db_path).exit_code == 0
    server.routes["/feed.xml"] = (200, {}, MALFORMED)
    result = run("ingest", "--db", db_path)
    assert result.exit_code == 1, result.output
    failed = next(line for line in result.output.splitlines() if "#1" in line)
    assert failed.split()[0] == "failed" and "mismatched tag" in failed, failed
    assert "unchanged" not in result.output.split("#1")[1].splitlines()[0]
    assert "1 feed failed: #1" in result.output and "the other feeds were stored" in result.output
    feeds = {f["id"]: f for f in json.loads(run("feeds", "list", "--json", "--db", db_path).stdout)["feeds"]}
    assert "mismatched tag" in feeds[1]["last_error"] and feeds[1]["item_count"] == 0
    assert feeds[2]["last_error"] is None and feeds[2]["item_count"] == 3


# A trial's feedparser case (entry_contributor_multiple.xml): its one entry has contributors
# but no title, link or text. Its first ingest said "unchanged" and `feeds list` "0 items · ok".
SHELL_ONLY = b"""<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Shells</title>
<entry><contributor><name>Contributor 1</name></contributor></entry>
</feed>"""


def test_entries_without_title_link_or_text_are_counted_with_their_reason():
    from hermes.ingest.parse import skipped_note

    parsed = parse_feed(SHELL_ONLY, url=URL)
    assert parsed.items == [] and skipped_note(parsed.skipped) == "1 entry skipped: no title, link or text"
    twice = rss("Twice", SAMPLE_ENTRIES[:1] * 2)
    assert skipped_note(parse_feed(twice, url=URL).skipped) == "1 entry skipped: listed twice in the feed"
    assert (
        skipped_note({"no title, link or text": 2, "listed twice in the feed": 1})
        == "3 entries skipped: 2 with no title, link or text, 1 listed twice in the feed"
    )
    assert parse_feed(rss("Fine", SAMPLE_ENTRIES[:2]), url=URL).skipped == {}


def test_a_first_ingest_that_kept_nothing_says_which_entries_it_skipped_and_why(tmp_path, db_path):
    path = tmp_path / "shells.xml"
    path.write_bytes(SHELL_ONLY)
    assert run("feeds", "add", path, "--db", db_path).exit_code == 0
    result = run("ingest", "--db", db_path)
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if "#1" in line)
    assert line.split()[0] == "fetched" and "unchanged" not in line, line
    assert "1 entry skipped: no title, link or text" in line
    assert result.stdout.splitlines()[-1].endswith("; 1 entry skipped: no title, link or text")
    doc = json.loads(run("ingest", "--db", db_path, "--json").stdout)  # a second fetch: unchanged
    assert doc["feeds"][0]["status"] == "unchanged" and doc["feeds"][0]["first_fetch"] is False
    listed = run("feeds", "list", "--db", db_path).stdout
    assert "read with a warning: 1 entry skipped: no title, link or text" in listed, listed
    from hermes.storage.db import get_db

    feeds = tool(get_db(db_path), "list_feeds")["feeds"]
    assert feeds[0]["last_warning"] == "1 entry skipped: no title, link or text"
