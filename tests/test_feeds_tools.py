"""The feeds tools through their functions (seed 000's Testing list and more)."""

from __future__ import annotations

import socket

import pytest
from feeds_support import SAMPLE_ENTRIES, CannedServer, rss

from hermes.storage.clicks import record_click
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools

FEEDS_TOOLS = {
    "list_feed",
    "record_feedback",
    "remove_feedback",
    "explain_item",
    "add_feed",
    "preview_feed",
    "list_feeds",
    "remove_feed",
    "suggest_feeds",
    "rename_feed",
}


def tool(db, name, /, **arguments) -> dict:
    """Call a tool the way the MCP server does."""
    return call_tool(db, collect_tools()[name], arguments)


def snapshot(db) -> dict:
    tables = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    return {t: sorted(map(repr, db.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}


@pytest.fixture
def items(add_items):
    return add_items(
        [
            {
                "title": "Quantum error correction with surface codes",
                "summary": "Qubits and logical error rates.",
                "tags": ["quant-ph"],
                "content_type": "paper",
                "days_ago": 1,
            },
            {
                "title": "Entanglement in quantum computing",
                "summary": "Quantum qubits entangled.",
                "tags": ["quant-ph"],
                "content_type": "paper",
                "days_ago": 2,
            },
            {
                "title": "Sourdough baking at home",
                "summary": "Flour, water and patience.",
                "tags": ["cooking"],
                "days_ago": 1,
            },
            {
                "title": "Quantum error correction, the archive classic",
                "summary": "Old paper on qubits.",
                "tags": ["quant-ph"],
                "content_type": "paper",
                "days_ago": 400,
            },
        ]
    )


@pytest.fixture
def ann(db):
    return create_user(db, "ann", "quantum error correction and qubits")


@pytest.fixture
def private_allowed(monkeypatch):
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")


def test_group_registers_every_tool_with_truthful_annotations():
    tools = collect_tools({"feeds"})
    assert set(tools) == FEEDS_TOOLS
    # record_feedback is the core's click tool (clicks work with every group disabled)
    assert {n: t.plugin for n, t in tools.items() if t.plugin != "feeds"} == {
        "record_feedback": "signals",
        "remove_feedback": "signals",
    }
    read_only = {n for n, t in tools.items() if t.read_only}
    # explain_item stores its explanation (the explanations table): not read-only
    assert read_only == {"list_feed", "preview_feed", "list_feeds", "suggest_feeds"}
    # what loses what no other call gives back: a removed feed (a like, its removal and a
    # rename are undone by the next call; tests/test_mcp_contract.py's ANNOTATIONS)
    assert {n for n, t in tools.items() if t.destructive} == {"remove_feed"}
    assert {n for n, t in tools.items() if t.open_world} == {"add_feed", "preview_feed"}
    for name in ("list_feed", "preview_feed", "list_feeds", "explain_item"):
        assert tools[name].untrusted
    for t in tools.values():
        assert t.description and t.empty, t.name


# --- list_feed ------------------------------------------------------------------------------


def test_list_feed_pages_with_offset_and_keeps_each_item_s_rank(db, items, ann):
    whole = tool(db, "list_feed", user="ann", limit=10, since_days=None, below_bar=True)
    order = [i["id"] for i in whole["items"]]
    assert len(order) == 4
    page = tool(db, "list_feed", user="ann", limit=2, since_days=None, below_bar=True, offset=2)
    assert page["ok"], page["message"]
    assert [i["id"] for i in page["items"]] == order[2:]
    assert [i["rank"] for i in page["items"]] == [3, 4]  # their place in the whole feed
    assert page["message"].startswith(
        "3 items from the whole archive clear ann's bar (ranks "
        "3–4 shown), best first; 1 more item below the bar (1 of "
        "them on this page)."
    )
    past = tool(db, "list_feed", user="ann", limit=2, since_days=None, offset=10)
    assert past["ok"] and past["items"] == []
    assert past["message"].startswith(
        "Nothing from rank 11 on: ann's feed over the whole archive has 3 items that clear the bar."
    )
    assert "Use a smaller offset" in past["message"]
    everything = tool(db, "list_feed", user="ann", since_days=None, below_bar=True, offset=10)
    assert everything["message"].startswith("Nothing from rank 11 on: ann's feed over the whole archive has 4 items.")
    bad = tool(db, "list_feed", user="ann", offset=-1)
    assert not bad["ok"] and "offset" in bad["message"]


def test_list_feed_ranks_recent_unclicked_items_with_reasons(db, items, ann):
    result = tool(db, "list_feed", user="ann", limit=10, detail=True)
    assert result["ok"], result["message"]
    ids = [i["id"] for i in result["items"]]
    assert items[3] not in ids  # 400 days old: outside the default 7-day window
    assert set(ids) == set(items[:2])  # the quantum items clear the bar; sourdough does not
    assert result["above_bar"] == 2 and result["below_bar"] == 1
    assert "1 more item below the bar (below_bar=true lists them)" in result["message"]
    top = result["items"][0]
    assert top["rank"] == 1 and top["source"] == "Test feed" and top["match"] == "strong"
    assert top["reason"].startswith(
        "Strong match: matches your interest “quantum error correction and qubits” closely (similarity "
    )
    assert set(top["components"]) >= {"profile"}
    assert top["evidence"]["interest"]["clause"] == "quantum error correction and qubits"
    record_click(db, ann["id"], ids[0], True, "ui")
    again = [i["id"] for i in tool(db, "list_feed", user="ann")["items"]]
    assert ids[0] not in again  # clicked items leave the feed


def test_the_default_feed_is_compact_and_detail_gives_the_rest(db, items, ann):
    """A trial's agent got 36 kB for 20 items (issue 34: at most 10 kB whatever the clicks);
    the default keeps what choosing needs, detail=true what explain_item gives."""
    import json

    full = tool(db, "list_feed", user="ann", limit=10, detail=True)
    brief = tool(db, "list_feed", user="ann", limit=10)
    assert [i["id"] for i in brief["items"]] == [i["id"] for i in full["items"]]
    for short, whole in zip(brief["items"], full["items"]):
        kept = {
            k: v
            for k, v in whole.items()
            if k not in ("summary", "evidence", "components", "tags", "date_source", "enclosure")
        }
        assert {**kept, "published": whole["published"][:10]} == short
    assert len(json.dumps(brief)) < len(json.dumps(full))
    assert brief["message"] == full["message"]


def test_below_bar_lists_the_rest_after_the_fold(db, items, ann):
    result = tool(db, "list_feed", user="ann", limit=10, below_bar=True)
    assert [i["id"] for i in result["items"]][-1] == items[2] and len(result["items"]) == 3
    sourdough = result["items"][-1]
    assert sourdough["match"] == "none" and sourdough["rank"] == 3
    assert sourdough["reason"].startswith("No match: not close to any of your interests")
    assert "1 more item below the bar (listed after them)" in result["message"]


def test_a_page_full_above_the_bar_says_where_the_items_below_it_start(db, items, ann):
    """A trial: `hermes feed --below-bar` with its default limit used up above the bar listed
    nothing under the fold and said nothing of where those items were."""
    result = tool(db, "list_feed", user="ann", limit=2, below_bar=True)
    assert len(result["items"]) == 2 and all(i["match"] in ("strong", "good") for i in result["items"])
    assert (
        "1 more item below the bar (this page holds no room for them: offset=2 with below_bar=true lists them)"
        in result["message"]
    )
    rest = tool(db, "list_feed", user="ann", limit=2, below_bar=True, offset=2)
    assert [i["id"] for i in rest["items"]] == [items[2]]


def test_when_nothing_clears_the_bar_list_feed_says_so(db, items):
    create_user(db, "bea", "medieval church architecture")
    result = tool(db, "list_feed", user="bea")
    assert result["ok"] and result["items"] == []
    assert result["above_bar"] == 0 and result["below_bar"] == 3
    assert result["message"].startswith(
        "Nothing in the last 7 days clears bea's bar: none of the 3 unread items there is a strong or good match"
    )
    closest = tool(db, "list_feed", user="bea", below_bar=True)
    assert len(closest["items"]) == 3 and {i["match"] for i in closest["items"]} <= {"weak", "none"}


def test_behaviour_weighing_nothing_despite_clicks_says_why(db, items, ann):
    """Rated items leave the unread feed; with one item left in the window there is nothing
    for behaviour to tell apart, and "3 clicks; behaviour weighs 0%" must say why."""
    record_click(db, ann["id"], items[0], True, "ui")
    record_click(db, ann["id"], items[2], False, "ui")
    several = tool(db, "list_feed", user="ann", since_days=1000)  # two unread items left
    assert "behaviour weighs 0%" not in several["message"]
    assert "does not tell these items apart" not in several["message"]
    record_click(db, ann["id"], items[1], True, "ui")
    one = tool(db, "list_feed", user="ann", since_days=1000)  # one unread item left
    assert "3 clicks so far; behaviour weighs 0% (what you rated does not tell these items apart" in one["message"]


def test_list_feed_since_days_null_is_the_whole_archive(db, items, ann):
    ids = [i["id"] for i in tool(db, "list_feed", user="ann", since_days=None)["items"]]
    assert set(ids) == {items[0], items[1], items[3]}
    everything = tool(db, "list_feed", user="ann", since_days=None, below_bar=True)["items"]
    assert {i["id"] for i in everything} == set(items)
    assert len(tool(db, "list_feed", user="ann", limit=2, since_days=None)["items"]) == 2


def test_list_feed_empty_window_says_what_to_do(db, ann):
    result = tool(db, "list_feed", user="ann")
    assert result["ok"] and result["items"] == [] and "since_days" in result["message"]


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({"user": "nobody"}, "unknown persona"),
        ({"user": "ann", "since_days": 0}, "since_days"),
        ({"user": "ann", "limit": "ten"}, "limit"),
    ],
)
def test_list_feed_bad_input_is_ok_false_and_writes_nothing(db, items, ann, args, fragment):
    before = snapshot(db)
    result = tool(db, "list_feed", **args)
    assert result["ok"] is False and fragment in result["message"]
    assert result["items"] == [] and result["user"] == args["user"]  # the persona asked for
    assert snapshot(db) == before


# --- record_feedback ------------------------------------------------------------------------


def test_record_feedback_writes_an_agent_click(db, items, ann):
    result = tool(db, "record_feedback", user="ann", item_id=items[2], liked=False)
    assert result["ok"] and result["n_clicks"] == 1
    assert result["click"]["source"] == "agent" and result["click"]["label"] == "dislike"
    rows = db.execute("SELECT user_id, item_id, label, source FROM clicks").fetchall()
    assert rows == [(ann["id"], items[2], "dislike", "agent")]
    # a new answer replaces the old one
    tool(db, "record_feedback", user="ann", item_id=items[2], liked=True)
    assert db.execute("SELECT label, source FROM clicks").fetchall() == [("like", "agent")]


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({"user": "nobody", "item_id": 1, "liked": True}, "unknown persona"),
        ({"user": "ann", "item_id": 999, "liked": True}, "unknown item"),
        ({"user": "ann", "item_id": 1, "liked": "yes"}, "liked must be true or false"),
        (
            {"user": "ann", "item_id": "1", "liked": True},
            'item_id must be a whole number of at least 1 or a list of 1 to 50 (a whole number of at least 1 each), got "1"',
        ),
    ],
)
def test_record_feedback_refusals_write_nothing(db, items, ann, args, fragment):
    before = snapshot(db)
    result = tool(db, "record_feedback", **args)
    assert result["ok"] is False and fragment in result["message"]
    assert result["click"] == {} and result["n_clicks"] == 0
    assert snapshot(db) == before


def test_remove_feedback_takes_one_rating_back_as_the_agent(db, items, ann, pm):
    """An agent's undo of one click (reset_feedback forgets them all): the click goes, the
    change log keeps a tombstone from source agent, the others stay."""
    tool(db, "record_feedback", user="ann", item_id=items[0], liked=True)
    tool(db, "record_feedback", user="ann", item_id=items[1], liked=False)
    result = tool(db, "remove_feedback", user="ann", item_id=items[1])
    assert result["ok"] and result["removed"] == "dislike" and result["n_clicks"] == 1
    assert "Took back ann's dislike of item" in result["message"]
    assert db.execute("SELECT item_id FROM clicks").fetchall() == [(items[0],)]
    again = tool(db, "remove_feedback", user="ann", item_id=items[1])
    assert again["ok"] and again["removed"] is None and "nothing changed" in again["message"]
    assert tool(db, "list_feed", user="ann", since_days=None, below_bar=True, limit=10)["ok"]


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({"user": "nobody", "item_id": 1}, "unknown persona"),
        ({"user": "ann", "item_id": 999}, "unknown item"),
    ],
)
def test_remove_feedback_refusals_write_nothing(db, items, ann, args, fragment):
    tool(db, "record_feedback", user="ann", item_id=items[0], liked=True)
    before = snapshot(db)
    result = tool(db, "remove_feedback", **args)
    assert result["ok"] is False and fragment in result["message"]
    assert snapshot(db) == before


# --- explain_item ---------------------------------------------------------------------------


def test_explain_item_explains_a_ranked_item(db, items, ann):
    record_click(db, ann["id"], items[1], True, "ui")
    result = tool(db, "explain_item", user="ann", item_id=items[0])
    assert result["ok"], result["message"]
    assert result["user"] == "ann" and result["item_id"] == items[0]
    explanation = result["explanation"]
    assert explanation["item_id"] == items[0] and result["reason"] == explanation["reason"]
    assert "profile" in explanation["components"] and explanation["n_clicks"] == 1
    # strong by the interests text alone; the one like does not confirm it (match.CONFIRMED_BY_CLICKS)
    assert result["match"] == explanation["match"] == "good"
    assert explanation["evidence"]["interest"]["unconfirmed"] is True
    # the reason is said in `reason` (and the explanation's), not a third time in the message
    assert result["message"] == "Ranks 1 of 2 unread items of the last 7 days: a good match ('reason' says why)."


@pytest.mark.parametrize("since_days", [7, None])
def test_list_feed_and_explain_item_give_the_same_reason_and_rank(db, items, ann, since_days):
    record_click(db, ann["id"], items[1], True, "ui")
    listed = tool(db, "list_feed", user="ann", since_days=since_days, below_bar=True)["items"]
    for entry in listed:
        result = tool(db, "explain_item", user="ann", item_id=entry["id"], since_days=since_days)
        e = result["explanation"]
        assert (e["reason"], e["match"], e["rank"]) == (entry["reason"], entry["match"], entry["rank"])
        assert e["window_days"] == since_days


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({"user": "nobody", "item_id": 1}, "unknown persona"),
        ({"user": "ann", "item_id": 999}, "unknown item"),
    ],
)
def test_explain_item_refusals(db, items, ann, args, fragment):
    result = tool(db, "explain_item", **args)
    assert result["ok"] is False and fragment in result["message"] and result["explanation"] == {}


# --- add_feed -------------------------------------------------------------------------------


def test_add_feed_registers_and_the_next_ingest_picks_it_up(db, private_allowed):
    from hermes.ingest.pipeline import run_ingest

    with CannedServer() as server:
        server.routes["/feed.xml"] = (200, {"Content-Type": "application/rss+xml"}, rss("Quantum blog", SAMPLE_ENTRIES))
        url = server.url("/feed.xml")
        result = tool(db, "add_feed", url=url)
        assert result["ok"], result["message"]
        assert "`hermes ingest`" in result["message"]  # no background refresh in this process
        feed = result["feed"]
        assert feed["title"] == "Quantum blog" and feed["n_entries"] == 3 and feed["url"] == url
        assert server.requests == ["/feed.xml"]  # one fetch, no ingest
        assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 0
        summary = run_ingest(db)
    [entry] = [s for s in summary if s["feed_id"] == feed["id"]]
    assert entry["status"] == "new" and entry["new"] == 3
    titles = {r[0] for r in db.execute("SELECT title FROM items WHERE feed_id = ?", [feed["id"]])}
    assert "Surface codes below threshold" in titles
    listed = tool(db, "list_feeds")["feeds"]
    assert listed[0]["item_count"] == 3 and listed[0]["last_fetched"]


def test_add_feed_takes_the_given_title(db, private_allowed):
    with CannedServer() as server:
        server.routes["/f"] = (200, {}, rss("Own title", SAMPLE_ENTRIES[:1]))
        result = tool(db, "add_feed", url=server.url("/f"), title="  My   name ")
    assert result["ok"] and result["feed"]["title"] == "My name"


def test_add_feed_of_an_empty_feed_says_it_is_empty(db, private_allowed):
    with CannedServer() as server:
        server.routes["/empty"] = (200, {}, rss("New blog", []))
        result = tool(db, "add_feed", url=server.url("/empty"))
    assert result["ok"] and result["feed"]["n_entries"] == 0
    assert (
        "0 entries visible now (it is empty now: a new feed may not have published yet; "
        "each ingest checks it again)" in result["message"]
    )


@pytest.mark.parametrize(
    "status, body",
    [
        (200, b"<!doctype html><html><body>Just a web page</body></html>"),
        (200, b""),
        (200, b"<?xml version='1.0'?><note><to>not a feed</to></note>"),
        (200, b"just some text"),
        (200, b'{"json": true}'),
        (404, b"gone"),
        (500, b"oops"),
    ],
)
def test_add_feed_rejects_an_unparseable_url_without_inserting(db, private_allowed, status, body):
    before = snapshot(db)
    with CannedServer() as server:
        server.routes["/bad"] = (status, {"Content-Type": "text/html"}, body)
        result = tool(db, "add_feed", url=server.url("/bad"))
    assert result["ok"] is False and result["feed"] == {}
    assert any(
        why in result["message"]
        for why in ("not a usable feed", "could not fetch", "is an HTML page, not a feed, and it links no feed")
    )
    assert snapshot(db) == before


def test_add_feed_of_a_subscribed_url_is_the_work_found_done(db, private_allowed):
    """Nothing is added, and it is no error: an agent retrying after a time-out must not read
    a failure (issue 34); the person's CLI still refuses it."""
    with CannedServer() as server:
        server.routes["/f"] = (200, {}, rss("Blog", SAMPLE_ENTRIES))
        url = server.url("/f")
        first = tool(db, "add_feed", url=url)
        before = snapshot(db)
        second = tool(db, "add_feed", url=url)
    assert first["ok"] and second["ok"] is True and second["already_subscribed"] is True
    assert first["already_subscribed"] is False
    assert "already subscribed" in second["message"] and second["feed"]["id"] == first["feed"]["id"]
    assert snapshot(db) == before
    # an agent's duplicate is fetched first, through the guard (see the next test)
    assert server.requests == ["/f", "/f"]


def test_an_agent_does_not_learn_which_private_addresses_are_subscribed(db, monkeypatch):
    """add_feed answered "already subscribed: feed 3" for a LAN address a person had
    subscribed, before the private-address guard refused it: a map of the LAN's feeds."""
    from hermes.ingest.pipeline import add_feeds

    monkeypatch.delenv("HERMES_ALLOW_PRIVATE", raising=False)
    with CannedServer() as server:
        server.routes["/f"] = (200, {}, rss("Lab wiki", SAMPLE_ENTRIES))
        url = server.url("/f")
        add_feeds(db, [(url, None)])  # the person's own, on a loopback address
        result = tool(db, "add_feed", url=url)
    assert result["ok"] is False and "already subscribed" not in result["message"]
    assert result["feed"] == {} and "refused" in result["message"]


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "/etc/passwd",
        "feed.xml",
        "javascript:alert(1)",
        "ftp://example.org/f",
        "gopher://example.org/",
        "http://",
        "",
    ],
)
def test_add_feed_accepts_only_web_urls(db, url):
    before = snapshot(db)
    result = tool(db, "add_feed", url=url)
    assert result["ok"] is False and result["feed"] == {}
    assert snapshot(db) == before


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/feed.xml",
        "http://localhost:9/feed.xml",
        "http://[::1]:9/feed.xml",
        "http://10.1.2.3/feed.xml",
        "http://192.168.0.1/feed.xml",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0:9/",
    ],
)
@pytest.mark.parametrize("name", ["add_feed", "preview_feed"])
def test_private_addresses_are_refused_by_default(db, url, name):
    before = snapshot(db)
    result = tool(db, name, url=url)
    assert result["ok"] is False and "refused: private address" in result["message"]
    # a refusal, not a failed fetch: it says so, where the setting lives, and the CLI way
    assert result["message"].startswith("did not fetch") and "allow_private" in result["message"]
    from hermes.config import config_toml

    assert str(config_toml()) in result["message"] and "hermes feeds add URL" in result["message"]
    assert snapshot(db) == before


def test_a_redirect_to_loopback_is_refused(db, monkeypatch):
    """A public-looking host that redirects to 127.0.0.1 must not be followed."""
    from hermes.ingest import guard

    real = guard.checked_addresses

    async def pretend_public(host, port):
        # feeds.example.test stands for a public server (no network in tests): it "resolves"
        # to the loopback test server, and every later hop goes through the real guard.
        return ["127.0.0.1"] if host == "feeds.example.test" else await real(host, port)

    monkeypatch.setattr(guard, "checked_addresses", pretend_public)
    with CannedServer() as server:
        server.routes["/feed.xml"] = (302, {"Location": server.url("/secret")}, b"")
        server.routes["/secret"] = (200, {}, rss("Internal", SAMPLE_ENTRIES))
        result = tool(db, "add_feed", url=f"http://feeds.example.test:{server.port}/feed.xml")
    assert result["ok"] is False and "refused: private address" in result["message"]
    assert server.requests == ["/feed.xml"]  # the redirect target was never requested
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 0


def test_unresolvable_host_fails_cleanly(db, monkeypatch):
    def no_dns(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    result = tool(db, "add_feed", url="https://no-such-host.invalid/feed.xml")
    assert result["ok"] is False and "could not fetch" in result["message"]


# --- preview_feed ---------------------------------------------------------------------------


def test_preview_feed_shows_entries_and_stores_nothing(db, private_allowed):
    before = snapshot(db)
    with CannedServer() as server:
        server.routes["/f"] = (200, {}, rss("Quantum blog", SAMPLE_ENTRIES))
        result = tool(db, "preview_feed", url=server.url("/f"), limit=2)
    assert result["ok"], result["message"]
    assert result["feed"]["title"] == "Quantum blog" and result["feed"]["n_entries"] == 3
    assert result["feed"]["subscribed_as"] is None
    assert [e["title"] for e in result["entries"]] == [e["title"] for e in SAMPLE_ENTRIES[:2]]
    assert result["entries"][0]["tags"] == ["quant-ph"]
    assert snapshot(db) == before


def test_preview_feed_of_a_non_feed_is_ok_false(db, private_allowed):
    with CannedServer() as server:
        server.routes["/page"] = (200, {}, b"<html><body>hello</body></html>")
        result = tool(db, "preview_feed", url=server.url("/page"))
    assert result["ok"] is False and result["entries"] == [] and "HTML" in result["message"]


# --- list_feeds -----------------------------------------------------------------------------


def test_list_feeds_reports_counts_and_errors(db, items):
    assert tool(db, "list_feeds")["feeds"][0]["item_count"] == len(items)
    db.execute(
        "INSERT INTO feeds (url, title, last_error, error_count, last_fetched) "
        "VALUES ('https://broken.example/f', 'Broken', 'HTTP 500', 3, '2026-11-01T00:00:00+00:00')"
    )
    result = tool(db, "list_feeds")
    assert result["ok"] and len(result["feeds"]) == 2 and "1 failing" in result["message"]
    broken = result["feeds"][1]
    assert broken["last_error"] == "HTTP 500" and broken["error_count"] == 3 and broken["item_count"] == 0
    assert set(broken) >= {"id", "url", "title", "item_count", "last_fetched", "last_error", "error_count"}


def test_list_feeds_when_empty(db):
    result = tool(db, "list_feeds")
    assert result["ok"] and result["feeds"] == [] and "add_feed" in result["message"]


# --- remove_feed ----------------------------------------------------------------------------


def test_remove_feed_without_confirm_changes_nothing_and_names_what_would_go(db, items, ann):
    record_click(db, ann["id"], items[0], True, "ui")
    before = snapshot(db)
    for confirm in ("true", 1):  # strict: only the JSON literal true confirms
        result = tool(db, "remove_feed", feed_id=1, confirm=confirm)
        assert result["ok"] is False and result["removed"] is False
        assert result["message"].startswith("confirm must be true or false")
        assert snapshot(db) == before
    for arguments in ({"confirm": False}, {}):  # false, or left out: the preview
        result = tool(db, "remove_feed", feed_id=1, **arguments)
        assert result["ok"] is False and result["removed"] is False
        assert snapshot(db) == before
    # Named by id and URL; the title (feed text, untrusted) is in the payload only.
    assert "feed 1" in result["message"] and "https://example.org/test.xml" in result["message"]
    assert f"keep its {len(items)} items and 1 click" in result["message"]
    assert result["feed"] == {
        "id": 1,
        "url": "https://example.org/test.xml",
        "title": "Test feed",
        "item_count": len(items),
        "click_count": 1,
    }


def test_remove_feed_keeps_items_and_clicks(db, items, ann):
    record_click(db, ann["id"], items[0], True, "ui")
    record_click(db, ann["id"], items[2], False, "agent")
    clicks_before = db.execute("SELECT * FROM clicks ORDER BY id").fetchall()
    result = tool(db, "remove_feed", feed_id=1, confirm=True)
    assert result["ok"] and result["removed"] is True
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 0
    # orphaned, not cascaded: the items keep the dead feed id, every click survives
    assert db.execute("SELECT DISTINCT feed_id FROM items").fetchall() == [(1,)]
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == len(items)
    assert db.execute("SELECT * FROM clicks ORDER BY id").fetchall() == clicks_before
    # the orphaned items leave the feed, are ranked when asked, and list_feeds counts them
    assert tool(db, "list_feed", user="ann", since_days=None, below_bar=True)["items"] == []
    ranked = tool(db, "list_feed", user="ann", since_days=None, removed_feeds=True)["items"]
    assert items[1] in [i["id"] for i in ranked]
    assert tool(db, "list_feeds")["orphaned_items"] == len(items)
    again = tool(db, "remove_feed", feed_id=1, confirm=True)
    assert again["ok"] is False and "unknown feed 1" in again["message"]


# --- suggest_feeds --------------------------------------------------------------------------


def test_suggest_feeds_scores_liked_tags_and_skips_subscribed(db, items, ann):
    record_click(db, ann["id"], items[0], True, "agent")  # quant-ph liked
    record_click(db, ann["id"], items[2], False, "agent")  # cooking disliked
    result = tool(db, "suggest_feeds", user="ann")
    assert result["ok"], result["message"]
    top = result["suggestions"][0]
    assert top["url"] == "https://rss.arxiv.org/rss/quant-ph"
    assert "quant-ph" in top["reason"] and top["tag_score"] > 0
    scores = [s["score"] for s in result["suggestions"]]
    assert scores == sorted(scores, reverse=True)
    db.execute("INSERT INTO feeds (url, title) VALUES ('https://rss.arxiv.org/rss/quant-ph', 'q')")
    urls = [s["url"] for s in tool(db, "suggest_feeds", user="ann")["suggestions"]]
    assert "https://rss.arxiv.org/rss/quant-ph" not in urls


def test_suggest_feeds_uses_interests_before_any_click(db):
    create_user(db, "cal", "climate models and carbon emissions policy")
    result = tool(db, "suggest_feeds", user="cal", limit=3)
    assert result["ok"] and result["suggestions"]
    assert {s["area"] for s in result["suggestions"]} == {"climate"}
    assert "interests" in result["suggestions"][0]["reason"]


def test_suggest_feeds_with_nothing_to_match(db):
    create_user(db, "zed", "")
    result = tool(db, "suggest_feeds", user="zed")
    assert result["ok"] and result["suggestions"] == [] and "add_feed" in result["message"]
    assert tool(db, "suggest_feeds", user="nobody")["ok"] is False


def test_candidates_ship_as_package_data_and_are_well_formed():
    import tomllib
    import urllib.parse
    from pathlib import Path

    from hermes.config import PACKAGE_DATA

    path = PACKAGE_DATA / "candidates.toml"
    feeds = tomllib.loads(path.read_text())["feed"]
    assert len(feeds) >= 25
    assert len({f["url"] for f in feeds}) == len(feeds)
    for f in feeds:
        parts = urllib.parse.urlsplit(f["url"])
        assert parts.scheme == "https" and parts.hostname, f["url"]
        assert f["title"] and f["tags"] and f["area"] and f["content_type"] in {"paper", "article", "podcast"}
        assert all(t == t.lower() for t in f["tags"]), f["title"]
    assert len({f["area"] for f in feeds}) >= 8
    repo_link = Path(__file__).parents[1] / "candidates.toml"
    assert repo_link.resolve() == path.resolve()
