"""Where a feed lives: an HTML page is followed to the feed it links, one feed is one
subscription however it is spelled, and an OPML export of local feeds imports back."""

from __future__ import annotations

import json

import pytest
from feeds_support import SAMPLE_ENTRIES, CannedServer, rss
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.tools import call_tool, collect_tools

PAGE = b"""<!doctype html><html><head><title>A blog</title>
<link rel="stylesheet" href="/style.css">
<link rel="alternate" type="application/feed+json" href="/feed.json">
<link rel="alternate" type="application/atom+xml" title="Atom" href="/feed.xml">
</head><body>Hello</body></html>"""


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


def tool(db, name, /, **arguments):
    return call_tool(db, collect_tools()[name], arguments)


@pytest.fixture
def private_allowed(monkeypatch):
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")


@pytest.fixture
def blog():
    with CannedServer() as server:
        server.routes["/"] = (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)
        server.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss("Blog", SAMPLE_ENTRIES))
        yield server


def test_add_feed_follows_an_html_pages_alternate_link(db, private_allowed, blog):
    result = tool(db, "add_feed", url=blog.url("/"))
    assert result["ok"], result["message"]
    assert result["feed"]["url"] == blog.url("/feed.xml")  # the feed, not the page; RSS/Atom first
    assert result["feed"]["found_on_page"] == blog.url("/")
    assert "is a web page; its feed is" in result["message"]
    again = tool(db, "add_feed", url=blog.url("/feed.xml"))
    # found done, not an error (issue 34)
    assert again["already_subscribed"] and "already subscribed" in again["message"]
    page_again = tool(db, "add_feed", url=blog.url("/"))
    assert page_again["already_subscribed"] and "Already subscribed" in page_again["message"]


def test_preview_and_cli_add_follow_the_page_too(db, db_path, blog):
    preview = run("feeds", "preview", blog.url("/"), "--json")
    doc = json.loads(preview.stdout)
    assert doc["feed"]["url"] == blog.url("/feed.xml") and doc["feed"]["found_on_page"] == blog.url("/")
    added = run("feeds", "add", blog.url("/"), "--db", db_path)
    assert added.exit_code == 0, added.output
    assert f"its feed is {blog.url('/feed.xml')}" in added.stdout


def test_a_page_linking_no_feed_or_a_local_file_is_refused(db, private_allowed):
    with CannedServer() as server:
        server.routes["/plain"] = (200, {"Content-Type": "text/html"}, b"<html><head></head></html>")
        server.routes["/sneaky"] = (
            200,
            {"Content-Type": "text/html"},
            b'<html><head><link rel="alternate" type="application/rss+xml" href="file:///etc/passwd"></head></html>',
        )
        plain = tool(db, "add_feed", url=server.url("/plain"))
        sneaky = tool(db, "add_feed", url=server.url("/sneaky"))
    assert plain["ok"] is False and "links no feed" in plain["message"]
    # Defence in depth: a page cannot point hermes at a local file.
    assert sneaky["ok"] is False and "links no feed" in sneaky["message"]
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 0


def test_feed_links_resolves_relative_hrefs_and_prefers_rss_and_atom():
    from hermes_feeds.discover import feed_links

    links = feed_links(PAGE, "https://blog.example/posts/1")
    assert links == ["https://blog.example/feed.xml", "https://blog.example/feed.json"]
    assert feed_links(b"<html>no head", "https://x.example/") == []


def test_one_feed_is_one_subscription_however_spelled(db, db_path, tmp_path, monkeypatch):
    feed = tmp_path / "f.xml"
    feed.write_bytes(rss("Local", SAMPLE_ENTRIES))
    monkeypatch.chdir(tmp_path)
    first = run("feeds", "add", "f.xml", "--db", db_path)
    assert first.exit_code == 0, first.output
    for spelling in (str(feed), feed.as_uri(), "./f.xml", f"file://{tmp_path}/../{tmp_path.name}/f.xml"):
        again = run("feeds", "add", spelling, "--db", db_path)
        assert again.exit_code == 1 and "already subscribed: feed 1" in again.stderr, spelling
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 1


def test_web_urls_differing_only_in_case_port_or_fragment_are_one_feed(db, private_allowed):
    from hermes.ingest.feedlist import canonical_location

    with CannedServer() as server:
        server.routes["/f"] = (200, {}, rss("Blog", SAMPLE_ENTRIES))
        url = server.url("/f")
        assert tool(db, "add_feed", url=url)["ok"]
        shouting = url.replace("http://127.0.0.1", "HTTP://127.0.0.1") + "#top"
        dup = tool(db, "add_feed", url=shouting)
    assert dup["already_subscribed"] and "already subscribed" in dup["message"]
    assert canonical_location("https://Example.org:443/feed") == "https://example.org/feed"
    assert canonical_location("http://example.org") == "http://example.org/"


def test_opml_round_trips_local_feeds(db_path, tmp_path):
    feed = tmp_path / "local.xml"
    feed.write_bytes(rss("Local", SAMPLE_ENTRIES))
    assert run("feeds", "add", feed, "--db", db_path).exit_code == 0
    opml = tmp_path / "subs.opml"
    assert run("feeds", "export-opml", "-o", opml, "--db", db_path).exit_code == 0
    assert feed.as_uri() in opml.read_text()

    other = tmp_path / "other.db"
    imported = run("feeds", "import-opml", opml, "--db", other, "--json")
    assert imported.exit_code == 0, imported.output
    doc = json.loads(imported.stdout)
    assert doc["added"] == 1 and doc["skipped"] == []
    listed = json.loads(run("feeds", "list", "--json", "--db", other).stdout)
    assert [f["url"] for f in listed["feeds"]] == [str(feed)]
    # Importing it again changes nothing.
    again = json.loads(run("feeds", "import-opml", opml, "--db", other, "--json").stdout)
    assert again["added"] == 0 and again["already_subscribed"] == 1


def test_dot_segments_tracking_parameters_and_this_machine_s_names_are_one_feed(db, private_allowed):
    """A trial subscribed one feed four times: under localhost and 127.0.0.1, with /./ in
    the path and with ?utm_source=x; each said "0 items · ok"."""
    from hermes.ingest.feedlist import canonical_location

    with CannedServer() as server:
        server.routes["/mlblog.xml"] = (200, {}, rss("Blog", SAMPLE_ENTRIES))
        # an agent's add is fetched before it is compared: the spelling must answer too
        server.routes["/mlblog.xml?utm_source=x&utm_medium=rss"] = server.routes["/mlblog.xml"]
        url = server.url("/mlblog.xml")
        assert tool(db, "add_feed", url=url)["ok"]
        for spelling in (
            url.replace("127.0.0.1", "localhost"),
            url.replace("/mlblog", "/./mlblog"),
            url + "?utm_source=x&utm_medium=rss",
        ):
            dup = tool(db, "add_feed", url=spelling)
            assert dup["already_subscribed"] and "already subscribed: feed 1" in dup["message"], spelling
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 1
    assert canonical_location("https://example.org/a/./b/../feed") == "https://example.org/a/feed"
    # only compared, never fetched so: the stored address keeps what the person gave
    assert canonical_location("http://localhost/f?utm_source=x") == "http://localhost/f?utm_source=x"


def test_an_entry_is_stored_once_whatever_guid_another_copy_of_it_carries(db):
    """A podcast's bare guids ("ep-42") are unique only within a feed, so hermes prefixes
    them with the feed's address; the same feed under a second address then stored every
    episode again, and one already read came back unread at the top of the feed."""
    from hermes.ingest.store import insert_items

    db.execute("INSERT INTO feeds (url, title) VALUES ('http://127.0.0.1:8799/pod.xml', 'Pod')")
    db.execute("INSERT INTO feeds (url, title) VALUES ('http://localhost:8799/pod.xml', 'Pod')")
    episode = {"url": "https://pod.example/ep-42", "title": "Ep. 42: Grokking", "summary": "…"}
    first = insert_items(db, 1, [{**episode, "guid": "http://127.0.0.1:8799/pod.xml#ep-42"}])
    again = insert_items(db, 2, [{**episode, "guid": "http://localhost:8799/pod.xml#ep-42"}])
    assert len(first) == 1 and again == []
    other_episode = {**episode, "title": "Ep. 43: Circuits", "guid": "http://localhost:8799/pod.xml#ep-43"}
    assert len(insert_items(db, 2, [other_episode])) == 1  # same link, another title: another entry
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 2


def test_a_missing_path_that_reads_as_a_web_address_suggests_its_url(tmp_path, monkeypatch, db_path):
    # A trial typed `hermes feeds add 127.0.0.1:8911/blog.xml` and read only "file not found:
    # /work/trial-home/127.0.0.1:8911/blog.xml".
    monkeypatch.chdir(tmp_path)
    result = run("feeds", "add", "127.0.0.1:8911/blog.xml", "--db", db_path)
    assert result.exit_code != 0
    assert "did you mean the web feed http://127.0.0.1:8911/blog.xml?" in result.output, result.output
    assert "http://example.org/feed" in run("feeds", "add", "example.org/feed", "--db", db_path).output
    for typo in ("blog.xml", "feeds/blog.xml"):  # a missing file is a missing file
        assert "did you mean" not in run("feeds", "add", typo, "--db", db_path).output
    (tmp_path / "mirror.example.org").mkdir()  # a real folder of that name: a missing file in it
    assert "did you mean" not in run("feeds", "add", "mirror.example.org/gone.xml", "--db", db_path).output
