"""Issue 12, item 1: stored SSRF through ``add_feed`` -> ``hermes ingest``.

A feed an agent subscribes while it is public can later redirect, or re-resolve, to a private
address. Ingest must fetch such a feed through the same guard as ``add_feed`` (every hop,
every DNS answer), store nothing a private service answered, and tell the agent only
"refused: private address" — the same words whatever listens there, so ``list_feeds`` is no
port scanner. Who subscribed a feed is recorded (``user`` / ``agent``); a person can trust an
agent's feed (``hermes feeds trust``), and ``[fetch] allow_private`` still opens everything.
"""

from __future__ import annotations

import json
import logging
import socket
import sqlite3

import pytest
from ingest_server import FeedServer, rss
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.ingest import guard
from hermes.ingest.pipeline import add_feeds, run_ingest, seed_feeds
from hermes.storage.db import get_db
from hermes.tools import call_tool, collect_tools

PUBLIC = rss([{"title": "A public post", "link": "http://example.org/1", "guid": "urn:public"}])
SECRET = rss([{"title": "Secret internal item", "link": "http://intranet.example/1", "guid": "urn:secret"}])
HOST = "feeds.example.test"


def tool(db, name, **arguments):
    return call_tool(db, collect_tools()[name], arguments)  # as the MCP server calls it


def cli(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


def stored_titles(db) -> set[str]:
    return {r[0] for r in db.execute("SELECT title FROM items")}


def feed_row(db, feed_id=1) -> dict:
    cur = db.execute("SELECT * FROM feeds WHERE id = ?", [feed_id])
    return dict(zip([c[0] for c in cur.description], cur.fetchone()))


@pytest.fixture
def pretend_public(monkeypatch):
    """``feeds.example.test`` stands for a public server: it resolves to the loopback test
    server and the guard lets it through; every other name and address meets the real guard."""
    real = guard.checked_addresses
    real_getaddrinfo = socket.getaddrinfo

    async def checked(host, port):
        return ["127.0.0.1"] if host == HOST else await real(host, port)

    def dns(host, port, *args, **kwargs):
        if host in (HOST, HOST.encode()):  # (anyio asks with the IDNA-encoded bytes)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(guard, "checked_addresses", checked)
    monkeypatch.setattr(socket, "getaddrinfo", dns)


def test_a_feed_that_later_redirects_to_a_private_address_is_refused_by_ingest(db, pretend_public):
    with FeedServer() as server:
        server.add("/feed.xml", body=PUBLIC)
        server.add("/secret", body=SECRET)
        added = tool(db, "add_feed", url=f"http://{HOST}:{server.port}/feed.xml")
        assert added["ok"] is True and added["feed"]["subscribed_by"] == "agent", added
        for status in (301, 302, 307, 308):
            server.add("/feed.xml", status=status, headers={"Location": server.url("/secret")})
            db.execute("UPDATE feeds SET retry_after = NULL")
            summary = run_ingest(db)
            assert summary[0]["status"] == "failed", summary
            assert summary[0]["error"].startswith("refused: private address")
            # a retry cannot succeed: the message does not promise one
            assert "retrying" not in summary[0]["error"]
        assert "refused on every try until the feed is trusted" in summary[0]["error"]
        assert server.hits("/secret") == 0  # the internal service never saw a request
    assert stored_titles(db) == set()
    listed = tool(db, "list_feeds")["feeds"][0]
    assert listed["last_error"].startswith("refused: private address")
    assert listed["subscribed_by"] == "agent"


def test_a_feed_whose_name_re_resolves_to_a_private_address_is_refused(db, monkeypatch):
    """DNS rebinding between add_feed and ingest: the name answered a public address (a
    server on 127.0.0.2, counted as public here), then loopback, where a service waits."""
    real_refused = guard.is_refused
    monkeypatch.setattr(guard, "is_refused", lambda a: a != "127.0.0.2" and real_refused(a))
    answer = {"now": "127.0.0.2"}
    real_getaddrinfo = socket.getaddrinfo

    def dns(host, port, *args, **kwargs):
        if host in (HOST, HOST.encode()):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer["now"], port))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", dns)
    with FeedServer(host="127.0.0.2") as public:
        with FeedServer(host="127.0.0.1", port=public.port) as internal:
            public.add("/feed.xml", body=PUBLIC)
            internal.add("/feed.xml", body=SECRET)
            url = f"http://{HOST}:{public.port}/feed.xml"
            assert tool(db, "add_feed", url=url)["ok"] is True
            answer["now"] = "127.0.0.1"
            summary = run_ingest(db)
            assert internal.hits("/feed.xml") == 0
    assert summary[0]["status"] == "failed"
    assert summary[0]["error"].startswith("refused: private address")
    assert stored_titles(db) == set()


@pytest.mark.parametrize("internal", ["html page", "feed", "closed port", "500 with a body"])
def test_what_an_agent_reads_about_its_feed_says_nothing_of_the_private_service(db, pretend_public, internal):
    """Whatever answers at the private address — a web page, a feed, nothing at all, an
    error page — the agent reads the same words: no port-scan oracle."""
    with FeedServer() as server:
        server.add("/feed.xml", body=PUBLIC)
        assert tool(db, "add_feed", url=f"http://{HOST}:{server.port}/feed.xml")["ok"] is True
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed = probe.getsockname()[1]
        target = {
            "html page": server.add(
                "/t", body=b"<html><body>admin console</body></html>", headers={"Content-Type": "text/html"}
            ),
            "feed": server.add("/t", body=SECRET),
            "closed port": f"http://127.0.0.1:{closed}/t",
            "500 with a body": server.add("/t", status=500, body=b"stack trace: db password"),
        }[internal]
        server.add("/feed.xml", status=302, headers={"Location": target})
        run_ingest(db)
        assert server.hits("/t") == 0
    listed = tool(db, "list_feeds")
    assert [f["last_error"] for f in listed["feeds"]] == ["refused: private address"]
    assert "127.0.0.1" not in json.dumps(listed)


def test_an_agents_feed_on_a_public_server_reports_failures_by_class_only(db, pretend_public):
    with FeedServer() as server:
        server.add("/feed.xml", body=PUBLIC)
        assert tool(db, "add_feed", url=f"http://{HOST}:{server.port}/feed.xml")["ok"] is True
        server.add("/feed.xml", status=503, body=b"maintenance until 10:00, ask bob")
        run_ingest(db)
    error = tool(db, "list_feeds")["feeds"][0]["last_error"]
    assert error == "HTTP 503"  # not the server's reason phrase


def test_a_persons_feed_keeps_the_detail_and_may_reach_the_lan(db):
    with FeedServer() as server:
        url = server.add("/feed.xml", body=PUBLIC)
        add_feeds(db, [(url, None)])  # the CLI, OPML and feeds.toml path: subscribed_by user
        assert run_ingest(db)[0]["status"] == "new"
        server.add("/feed.xml", status=404)
        db.execute("UPDATE feeds SET etag = NULL, last_modified = NULL")
        assert run_ingest(db)[0]["error"].startswith("HTTP 404 Not Found")
    assert stored_titles(db) == {"A public post"}
    assert feed_row(db)["subscribed_by"] == "user"


def test_allow_private_lets_ingest_fetch_an_agents_feed(db, monkeypatch):
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")
    with FeedServer() as server:
        server.add("/secret", body=SECRET)
        url = server.add("/feed.xml", status=302, headers={"Location": server.url("/secret")})
        assert tool(db, "add_feed", url=url)["feed"]["subscribed_by"] == "agent"
        summary = run_ingest(db)
        assert summary[0]["status"] == "new", summary
    assert stored_titles(db) == {"Secret internal item"}


# --- who subscribed ------------------------------------------------------------------------------


def test_every_way_of_subscribing_records_who(db, db_path, tmp_path, pretend_public):
    from web_support import client, token

    toml = tmp_path / "feeds.toml"
    toml.write_text('[[feeds]]\nurl = "https://toml.example.org/rss"\n', encoding="utf-8")
    seed_feeds(db, toml)
    opml = tmp_path / "subs.opml"
    opml.write_text(
        '<opml version="2.0"><body><outline xmlUrl="https://opml.example.org/rss"/></body></opml>', encoding="utf-8"
    )
    assert cli("feeds", "import-opml", opml, "--db", db_path).exit_code == 0
    with FeedServer() as server:
        server.add("/cli.xml", body=PUBLIC)
        server.add("/mcp.xml", body=PUBLIC)
        server.add("/web.xml", body=PUBLIC)
        assert cli("feeds", "add", server.url("/cli.xml"), "--db", db_path).exit_code == 0
        assert tool(db, "add_feed", url=f"http://{HOST}:{server.port}/mcp.xml")["ok"] is True
        with client(db_path) as web:
            answer = web.post(
                "/feeds",
                data={"url": f"http://{HOST}:{server.port}/web.xml", "csrf_token": token(web, "/feeds")},
                follow_redirects=False,
            )
            assert answer.status_code == 303, answer.text
    by = dict(db.execute("SELECT url, subscribed_by FROM feeds").fetchall())
    assert by == {
        "https://toml.example.org/rss": "user",
        "https://opml.example.org/rss": "user",
        server.url("/cli.xml"): "user",
        f"http://{HOST}:{server.port}/mcp.xml": "agent",
        f"http://{HOST}:{server.port}/web.xml": "agent",
    }


def test_existing_feeds_count_as_the_users_and_new_rows_default_to_agent(tmp_path):
    path = tmp_path / "old.db"
    db = get_db(path)
    db.execute("DELETE FROM _migrations WHERE name = 'core:m009_feed_subscriber'")
    db.execute("ALTER TABLE feeds DROP COLUMN subscribed_by")
    db.execute("ALTER TABLE feeds DROP COLUMN trusted_at")
    db.execute("INSERT INTO feeds (url) VALUES ('https://old.example.org/rss')")
    db.conn.close()
    db = get_db(path)
    assert feed_row(db)["subscribed_by"] == "user" and feed_row(db)["trusted_at"] is None
    db.execute("INSERT INTO feeds (url) VALUES ('https://new.example.org/rss')")  # says nothing
    assert feed_row(db, 2)["subscribed_by"] == "agent"  # so it is guarded
    with pytest.raises(ValueError):
        add_feeds(db, [("https://x.example.org/rss", None)], subscribed_by="someone")
    db.conn.close()


# --- hermes feeds trust ----------------------------------------------------------------------------


def test_feeds_trust_promotes_an_agents_feed_and_is_recorded(db, db_path, pretend_public, caplog):
    with FeedServer() as server:
        server.add("/feed.xml", body=PUBLIC)
        server.add("/lan", body=SECRET)
        assert tool(db, "add_feed", url=f"http://{HOST}:{server.port}/feed.xml")["ok"] is True
        server.add("/feed.xml", status=302, headers={"Location": server.url("/lan")})
        failed = cli("ingest", "--db", db_path)
        assert "refused: private address" in failed.output
        assert "hermes feeds trust 1" in failed.output  # the person is told what to do
        listed = cli("feeds", "list", "--db", db_path).output
        assert "added by an agent" in listed
        with caplog.at_level(logging.INFO, logger="hermes_feeds"):
            trusted = cli("feeds", "trust", "1", "--db", db_path)
        assert trusted.exit_code == 0 and "Trusted feed 1" in trusted.output, trusted.output
        assert any("trusted by the user" in r.getMessage() for r in caplog.records)
        row = feed_row(db)
        assert row["subscribed_by"] == "user" and row["trusted_at"]
        db.execute("UPDATE feeds SET retry_after = NULL")
        assert run_ingest(db)[0]["status"] == "new"  # now fetched like the user's own
    assert stored_titles(db) == {"Secret internal item"}
    again = cli("feeds", "trust", "1", "--db", db_path, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["changed"] is False
    unknown = cli("feeds", "trust", "99", "--db", db_path)
    assert unknown.exit_code == 1 and "unknown feed 99" in unknown.output


def test_feeds_add_of_an_agents_feed_points_at_trust(db, db_path, pretend_public):
    with FeedServer() as server:
        server.add("/feed.xml", body=PUBLIC)
        url = f"http://{HOST}:{server.port}/feed.xml"
        assert tool(db, "add_feed", url=url)["ok"] is True
        again = cli("feeds", "add", url, "--db", db_path)
    assert again.exit_code == 1 and "hermes feeds trust 1" in again.output


def test_the_migration_is_in_the_ledger(db):
    names = [r[0] for r in db.execute("SELECT name FROM _migrations")]
    assert "core:m009_feed_subscriber" in names
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO feeds (url, subscribed_by) VALUES ('https://n.example/', NULL)")
