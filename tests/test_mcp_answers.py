"""What an agent reads back: compact answers, a true word on when a new feed's items arrive,
and the one refusal wording for a private address, whichever tool fetched."""

from __future__ import annotations

import json
import sys

import pytest
from feeds_support import SAMPLE_ENTRIES, CannedServer, rss

from hermes.ingest.refresher import Refresher
from hermes.tools import call_tool, collect_tools


def tool(db, name, /, **arguments) -> dict:
    return call_tool(db, collect_tools()[name], arguments, face="mcp")


# --- the text block is the structured content, compact ---------------------------------------


@pytest.mark.anyio
async def test_the_text_block_is_the_structured_content_as_compact_json(db_path, db):
    """The spec's text copy of structured content, without indentation or spaces: the
    indent-2 copy was half as large again, and a host often puts both in the context."""
    from mcp import Client

    from hermes.mcp_server import build_server
    from hermes.storage.records import create_user

    create_user(db, "ann", "entanglement witnesses — “quoted”")
    async with Client(build_server(str(db_path))) as client:
        for name, args in (
            ("list_users", {}),
            ("list_feeds", {}),
            ("list_feed", {"user": "ann"}),
            ("digest", {"user": "nobody"}),
        ):
            result = await client.call_tool(name, args)
            text = result.content[0].text
            assert json.loads(text) == result.structured_content
            assert text == json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")), name
            assert "\n" not in text


# --- add_feed says when the items arrive, for the process it runs in ---------------------------


@pytest.fixture
def private_allowed(monkeypatch):
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")


def _add(db) -> dict:
    with CannedServer() as server:
        server.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss("Quantum blog", SAMPLE_ENTRIES))
        result = tool(db, "add_feed", url=server.url("/feed.xml"))
    assert result["ok"], result["message"]
    return result


def test_without_a_background_refresh_add_feed_points_at_hermes_ingest(db, private_allowed):
    message = _add(db)["message"]
    assert "no background refresh runs in this server" in message
    assert "the person running hermes runs `hermes ingest`" in message


def test_under_a_background_refresh_add_feed_says_it_fetches_the_feed(db, db_path, private_allowed):
    """Under `hermes serve` / `hermes web` this process's refresh fetches the feed: an agent,
    which has no ingest tool, must not be sent to `hermes ingest`."""
    idle = Refresher(
        db_path,
        3600,
        start_delay=3600,  # never runs its child during the test
        command=lambda *args, **kwargs: [sys.executable, "-c", "pass"],
    ).start()
    try:
        message = _add(db)["message"]
    finally:
        idle.stop()
    assert "hermes ingest" not in message
    assert "the background refresh of this process (every 3600 s) fetches it at its next run" in message
    assert "list_feeds then shows its item_count" in message


# --- save_item's refusal of a private address: add_feed's words, both ways out ----------------


def test_save_item_refuses_a_private_address_in_add_feeds_words(db):
    from hermes.storage.records import create_user

    create_user(db, "ann", "essays")
    with CannedServer() as server:
        server.routes["/index.html"] = (200, {"Content-Type": "text/html"}, b"<title>x</title>")
        page, feed = server.url("/index.html"), server.url("/feed.xml")
        saved = tool(db, "save_item", user="ann", ref=page)
        added = tool(db, "add_feed", url=feed)
        assert server.requests == []  # refused before any connection
    assert saved["ok"] is False and saved["item_id"] is None
    assert saved["message"].startswith(f"did not fetch {page!r}: refused: private address")
    assert f"or save it at the terminal: hermes save ann {page}); nothing was stored" in saved["message"]
    # the same sentence as add_feed's, apart from the address and the terminal command
    words = "HERMES_ALLOW_PRIVATE=1, or "
    assert saved["message"].split(page, 1)[1].split(words)[0] == added["message"].split(feed, 1)[1].split(words)[0]
    assert "[fetch] allow_private = true in " in saved["message"]
