"""run_ingest end to end over loopback HTTP and local files: conditional GET, per-feed
failures, Retry-After, dedupe, crash recovery, seeding."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from ingest_server import FeedServer, rss

from hermes.config import Settings
from hermes.embed import HashEmbedder
from hermes.errors import HermesError, NotFound
from hermes.ingest.pipeline import add_feeds, retry_at, run_ingest, seed_feeds

FAST = Settings(fetch_timeout=1.0, max_feed_bytes=1024 * 1024, fetch_concurrency=4)


class CountingEmbedder(HashEmbedder):
    def __init__(self, fail: bool = False):
        self.calls = 0
        self.texts = 0
        self.fail = fail

    def embed_tokens(self, texts):  # embed() and the tagging pass both come through here
        self.calls += 1
        self.texts += len(texts)
        if self.fail:
            raise RuntimeError("model exploded")
        return super().embed_tokens(texts)


def papers(*ids, prefix="p"):
    return [
        {
            "title": f"Paper {i}",
            "link": f"https://arxiv.org/abs/{i}v1",
            "guid": f"oai:arXiv.org:{i}v1",
            "description": f"Abstract of {i}",
            "categories": ["quant-ph"],
        }
        for i in ids
    ]


def articles(n, prefix="a"):
    return [
        {"title": f"{prefix} post {k}", "link": f"https://blog.example.org/{prefix}/{k}", "description": f"Text {k}"}
        for k in range(n)
    ]


@pytest.fixture
def server():
    with FeedServer() as s:
        yield s


def feed_id(db, url):
    return db.execute("SELECT id FROM feeds WHERE url = ?", [url]).fetchone()[0]


def feed_row(db, url):
    cols = [
        "last_error",
        "error_count",
        "etag",
        "last_modified",
        "retry_after",
        "last_fetched",
        "last_warning",
        "title",
    ]
    row = db.execute(f"SELECT {', '.join(cols)} FROM feeds WHERE url = ?", [url]).fetchone()
    return dict(zip(cols, row))


def count(db, where="1"):
    return db.execute(f"SELECT count(*) FROM items WHERE {where}").fetchone()[0]


def test_second_run_gets_304s_and_embeds_nothing(db, server):
    a = server.add("/a.xml", body=rss(articles(5, "a")), etag='"a1"')
    b = server.add("/b.xml", body=rss(articles(3, "b")), last_modified="Mon, 02 Apr 2007 00:00:00 GMT")
    add_feeds(db, [(a, None), (b, "My B")])
    emb = CountingEmbedder()
    first = run_ingest(db, embedder=emb, settings=FAST)
    assert [(s["status"], s["new"]) for s in first] == [("new", 5), ("new", 3)]
    assert first.embedded == 8 and emb.texts == 8
    assert count(db, "embedding IS NULL") == 0
    assert first[0]["title"] == "Test feed" and first[1]["title"] == "My B"
    assert feed_row(db, a)["etag"] == '"a1"'

    emb2 = CountingEmbedder()
    second = run_ingest(db, embedder=emb2, settings=FAST)
    assert [(s["status"], s["new"]) for s in second] == [("unchanged", 0), ("unchanged", 0)]
    assert second.embedded == 0 and emb2.calls == 0
    assert count(db) == 8
    sent_a = [h for p, h in server.log if p == "/a.xml"][-1]
    sent_b = [h for p, h in server.log if p == "/b.xml"][-1]
    assert sent_a["if-none-match"] == '"a1"'
    assert sent_b["if-modified-since"] == "Mon, 02 Apr 2007 00:00:00 GMT"


def test_server_without_validators_reparses_but_inserts_and_embeds_nothing(db, server):
    url = server.add("/plain.xml", body=rss(articles(4)))
    add_feeds(db, [(url, None)])
    run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    emb = CountingEmbedder()
    again = run_ingest(db, embedder=emb, settings=FAST)
    assert again[0]["status"] == "unchanged" and again[0]["new"] == 0 and emb.calls == 0


def test_broken_feeds_are_recorded_and_never_stop_the_good_one(db, server, tmp_path):
    bad_encoding = (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        "<title>Latin</title><item><title>Caf\xe9</title><guid>tag:x,1:c</guid>"
        "</item></channel></rss>"
    ).encode("latin-1")
    urls = {
        "good": server.add("/good.xml", body=rss(articles(3))),
        "404": server.url("/gone.xml"),
        "timeout": server.add("/slow.xml", body=rss(articles(1)), sleep=30),
        "html": server.add(
            "/page.html", body=b"<!doctype html><html><body>Hi</body></html>", headers={"Content-Type": "text/html"}
        ),
        "huge": server.add("/huge.xml", stream_bytes=50 * 1024 * 1024),
        "malformed": server.add("/bad.xml", body=b'<?xml version="1.0"?><rss version="2.0"><channel><<<>>>'),
        "garbage": server.add("/garbage.xml", body=b"\x00\xff\xfe\x00" * 100),
        "missing": str(tmp_path / "no-such-feed.xml"),
        "encoding": server.add("/latin.xml", body=bad_encoding),
    }
    add_feeds(db, [(u, None) for u in urls.values()])
    summary = {s["url"]: s for s in run_ingest(db, embedder=CountingEmbedder(), settings=FAST)}
    expect = {
        "404": "HTTP 404",
        "timeout": "timeout after 1 s",
        "html": "HTML page",
        "huge": "size cap",
        "malformed": "malformed",
        "garbage": "not a feed",
        "missing": "file not found",
    }
    for name, reason in expect.items():
        s = summary[urls[name]]
        assert s["status"] == "failed" and reason in s["error"], (name, s)
        row = feed_row(db, urls[name])
        assert reason in row["last_error"] and row["error_count"] == 1 and row["last_fetched"]
    assert summary[urls["good"]]["status"] == "new" and summary[urls["good"]]["new"] == 3
    # A mis-encoded feed that still reads is stored, with the problem kept as a warning.
    enc = summary[urls["encoding"]]
    assert enc["status"] == "new" and "declared as utf-8" in enc["warning"]
    assert "declared as utf-8" in feed_row(db, urls["encoding"])["last_warning"]
    assert db.execute("SELECT title FROM items WHERE guid = 'tag:x,1:c'").fetchone()[0] == "Café"
    assert feed_row(db, urls["good"])["last_error"] is None

    again = {s["url"]: s for s in run_ingest(db, embedder=CountingEmbedder(), settings=FAST)}
    assert feed_row(db, urls["404"])["error_count"] == 2
    assert again[urls["good"]]["status"] == "unchanged"


def test_success_clears_the_error(db, server):
    url = server.add("/flaky.xml", status=500, body=b"oops")
    add_feeds(db, [(url, None)])
    run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert feed_row(db, url)["error_count"] == 1
    server.add("/flaky.xml", body=rss(articles(2)))
    out = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert out[0]["status"] == "new"
    row = feed_row(db, url)
    assert row["last_error"] is None and row["error_count"] == 0


def test_failed_parse_does_not_store_the_etag(db, server):
    # Otherwise the next run would get a 304 for a version it never read.
    url = server.add("/x.xml", body=b"<html><body>maintenance</body></html>", etag='"m"')
    add_feeds(db, [(url, None)])
    run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert feed_row(db, url)["etag"] is None


def test_retry_after_is_honoured(db, server):
    url = server.add("/busy.xml", status=429, headers={"Retry-After": "3600"})
    other = server.add("/ok.xml", body=rss(articles(1)))
    add_feeds(db, [(url, None), (other, None)])
    first = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert first[0]["status"] == "failed" and "HTTP 429" in first[0]["error"]
    until = datetime.fromisoformat(feed_row(db, url)["retry_after"])
    assert timedelta(minutes=59) < until - datetime.now(UTC) <= timedelta(hours=1)

    second = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert second[0]["status"] == "skipped" and "wait until" in second[0]["error"]
    assert server.hits("/busy.xml") == 1  # not asked again
    assert second[1]["status"] == "unchanged"

    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat(timespec="seconds")
    db.execute("UPDATE feeds SET retry_after = ? WHERE url = ?", [past, url])
    server.add("/busy.xml", body=rss(articles(2, "busy")))
    third = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert third[0]["status"] == "new" and feed_row(db, url)["retry_after"] is None


def test_retry_after_parsing():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_at("120", 503, now) == "2026-01-01T00:02:00+00:00"
    assert retry_at("Thu, 01 Jan 2026 01:00:00 GMT", 503, now) == "2026-01-01T01:00:00+00:00"
    assert retry_at(None, 429, now) == "2026-01-01T00:30:00+00:00"  # polite default
    assert retry_at(None, 503, now) is None and retry_at("soon", 503, now) is None
    assert retry_at("99999999", 429, now) == "2026-01-08T00:00:00+00:00"  # capped at a week


def test_same_paper_in_two_listings_is_one_item(db, server):
    a = server.add("/quant-ph.xml", body=rss(papers("0704.0001", "0704.0002")))
    cross = papers("0704.0002", "0704.0003")
    cross[0]["link"] = "http://arxiv.org/abs/0704.0002v2"  # a later version in the other listing
    cross[0]["guid"] = "oai:arXiv.org:0704.0002v2"
    b = server.add("/cond-mat.xml", body=rss(cross))
    add_feeds(db, [(a, None), (b, None)])
    emb = CountingEmbedder()
    out = run_ingest(db, embedder=emb, settings=FAST)
    assert sum(s["new"] for s in out) == 3 and emb.texts == 3
    assert count(db, "arxiv_id = '0704.0002'") == 1
    # the listing stored second (they are fetched at once) is one short, and says why
    assert sorted((s["new"], s["known_elsewhere"]) for s in out) == [(1, 1), (2, 0)]
    emb2 = CountingEmbedder()
    again = run_ingest(db, embedder=emb2, settings=FAST)
    assert sum(s["new"] for s in again) == 0 and emb2.calls == 0
    assert [s["known_elsewhere"] for s in again] == [0, 0]  # said on a feed's first fetch only


def test_one_feed_under_two_addresses_keeps_its_items_when_the_first_is_removed(db, server):
    # The same posts and papers at two addresses: stored once, under the address fetched
    # first. Removing that one must not leave the other, still subscribed, without them.
    from hermes.ingest.feedlist import forget_feed
    from hermes.storage.clicks import record_click
    from hermes.storage.records import create_user
    from hermes.storage.transactions import write_transaction

    entries = rss(articles(3) + papers("0704.0001"))
    first = server.add("/feed.xml", body=entries)
    add_feeds(db, [(first, None)])
    run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    second = server.add("/rss/all.xml", body=entries)
    add_feeds(db, [(second, None)])
    out = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert [(s["new"], s["known_elsewhere"]) for s in out if s["url"] == second] == [(0, 4)]
    user = create_user(db, "ana", "posts")
    liked = db.execute("SELECT id FROM items ORDER BY id LIMIT 1").fetchone()[0]
    record_click(db, user["id"], liked, True, "ui")
    seq = db.execute("SELECT max(embed_seq) FROM items").fetchone()[0]
    with write_transaction(db):
        forget_feed(db, feed_id(db, first))

    again = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert [(s["new"], s["adopted"], s["known_elsewhere"]) for s in again] == [(0, 4, 0)]
    assert count(db, f"feed_id = {feed_id(db, second)}") == 4 and count(db) == 4
    # the ranking re-reads their source; the like stays on its item
    assert count(db, f"embed_seq > {seq}") == 4
    assert db.execute("SELECT item_id FROM clicks").fetchall() == [(liked,)]
    # once home, they stay: the next fetch adopts nothing
    assert [s["adopted"] for s in run_ingest(db, embedder=CountingEmbedder(), settings=FAST)] == [0]


def test_a_feed_still_subscribed_keeps_the_items_it_stored(db, server):
    entries = rss(articles(2))
    first, second = server.add("/a.xml", body=entries), server.add("/b.xml", body=entries)
    add_feeds(db, [(first, None)])
    run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    add_feeds(db, [(second, None)])
    out = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert [s["adopted"] for s in out] == [0, 0]
    assert count(db, f"feed_id = {feed_id(db, first)}") == 2


def test_crash_while_embedding_is_completed_by_the_next_run(db, server):
    url = server.add("/feed.xml", body=rss(articles(70)), etag='"v1"')
    add_feeds(db, [(url, None)])
    with pytest.raises(HermesError, match="embedding failed.*next `hermes ingest` embeds them") as info:
        run_ingest(db, embedder=CountingEmbedder(fail=True), settings=FAST)
    assert info.value.summary[0]["new"] == 70
    assert count(db) == 70 and count(db, "embedding IS NULL") == 70
    emb = CountingEmbedder()
    out = run_ingest(db, embedder=emb, settings=FAST)
    assert out[0]["status"] == "unchanged"  # a 304: the items were already stored
    assert out.embedded == 70 and emb.texts == 70 and emb.calls == 2  # batches of 64
    assert count(db, "embedding IS NULL") == 0


def test_items_and_validators_commit_together(db, server, monkeypatch):
    # A crash while storing must not leave the ETag of a version whose items are missing.
    from hermes.ingest import pipeline

    url = server.add("/feed.xml", body=rss(articles(3)), etag='"v1"')
    add_feeds(db, [(url, None)])

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "store_items", boom)
    with pytest.raises(KeyboardInterrupt):
        run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert feed_row(db, url)["etag"] is None and count(db) == 0
    monkeypatch.undo()
    assert run_ingest(db, embedder=CountingEmbedder(), settings=FAST)[0]["new"] == 3


def test_local_paths_and_file_urls(db, tmp_path):
    one = tmp_path / "one.xml"
    one.write_bytes(rss(articles(2, "one")))
    two = tmp_path / "two.xml"
    two.write_bytes(rss(articles(3, "two")))
    add_feeds(db, [(str(one), None), (two.as_uri(), None)])
    out = run_ingest(db, embedder=CountingEmbedder())
    assert [s["new"] for s in out] == [2, 3]
    emb = CountingEmbedder()
    assert [s["status"] for s in run_ingest(db, embedder=emb)] == ["unchanged", "unchanged"]
    assert emb.calls == 0


def test_feed_ids_select_and_unknown_ids_are_refused(db, tmp_path):
    paths = []
    for k in range(2):
        p = tmp_path / f"f{k}.xml"
        p.write_bytes(rss(articles(1, f"f{k}")))
        paths.append(str(p))
    add_feeds(db, [(p, None) for p in paths])
    only = run_ingest(db, feed_ids=[feed_id(db, paths[1])], embedder=CountingEmbedder())
    assert [s["url"] for s in only] == [paths[1]]
    with pytest.raises(NotFound, match="unknown feed id"):
        run_ingest(db, feed_ids=[999], embedder=CountingEmbedder())


def test_private_guard_applies_to_an_agents_feed(db, server):
    url = server.add("/feed.xml", body=rss(articles(1)))
    add_feeds(db, [(url, None)], subscribed_by="agent")
    out = run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    assert out[0]["status"] == "failed" and out[0]["error"] == "refused: private address"
    assert server.hits("/feed.xml") == 0


def test_seed_feeds_runs_once_and_resolves_relative_paths(db, tmp_path):
    (tmp_path / "local.xml").write_bytes(rss(articles(1)))
    toml = tmp_path / "feeds.toml"
    toml.write_text(
        '[[feeds]]\nurl = "local.xml"\ntitle = "Local"\n\n[[feeds]]\nurl = "https://example.org/feed.xml"\n',
        encoding="utf-8",
    )
    assert len(seed_feeds(db, toml)) == 2
    urls = [r[0] for r in db.execute("SELECT url FROM feeds ORDER BY id")]
    assert urls == [str(tmp_path / "local.xml"), "https://example.org/feed.xml"]
    db.execute("DELETE FROM feeds WHERE url = ?", [urls[1]])
    assert seed_feeds(db, toml) == []  # the database is the truth: a removed feed stays removed
    db.execute("DELETE FROM feeds")
    assert seed_feeds(db, toml) == []


def test_seed_feeds_skips_a_database_that_already_has_feeds(db, tmp_path):
    add_feeds(db, [("https://mine.example.org/rss", None)])
    toml = tmp_path / "feeds.toml"
    toml.write_text('[[feeds]]\nurl = "https://example.org/feed.xml"\n', encoding="utf-8")
    assert seed_feeds(db, toml) == []


def test_seed_feeds_rejects_a_broken_file_and_retries_later(db, tmp_path):
    toml = tmp_path / "feeds.toml"
    toml.write_text("[[feeds]]\ntitle = 'no url'\n", encoding="utf-8")
    with pytest.raises(HermesError, match="has no url"):
        seed_feeds(db, toml)
    toml.write_text('[[feeds]]\nurl = "https://example.org/feed.xml"\n', encoding="utf-8")
    assert len(seed_feeds(db, toml)) == 1


def test_default_feeds_toml_is_valid_and_points_at_the_web():
    from hermes import config
    from hermes.ingest.feedlist import read_feeds_toml

    feeds = read_feeds_toml(config.PACKAGE_DATA / "feeds.toml")
    assert feeds and all(url.startswith("https://") for url, _ in feeds)


def test_every_sample_the_default_feeds_toml_names_exists():
    """Its comments tell a person which files to uncomment: each must be a real sample."""
    import re

    from hermes import config

    toml = config.PACKAGE_DATA / "feeds.toml"
    named = set(re.findall(r"[\w-]+\.xml", toml.read_text(encoding="utf-8")))
    assert named
    assert all((config.PACKAGE_DATA / "samples" / name).is_file() for name in named), named


def test_sample_feeds_ingest_with_dedupe(db):
    from hermes.ingest.pipeline import sample_feed_paths

    paths = sample_feed_paths()
    assert len(paths) == 5
    add_feeds(db, [(str(p), None) for p in paths])
    out = run_ingest(db, embedder=CountingEmbedder())
    assert all(s["status"] == "new" and not s["warning"] for s in out), out
    listed = sum(s["new"] for s in out)
    assert count(db) == listed
    kinds = dict(db.execute("SELECT content_type, count(*) FROM items GROUP BY 1").fetchall())
    assert kinds["podcast"] == 5 and kinds["article"] == 7 and kinds["paper"] == 288
    # Every paper appears once although 42 are cross-listed in two sample listings.
    assert (
        count(db, "arxiv_id IS NOT NULL")
        == db.execute("SELECT count(DISTINCT arxiv_id) FROM items").fetchone()[0]
        == 288
    )
    tags = json.loads(db.execute("SELECT tags FROM items WHERE arxiv_id IS NOT NULL LIMIT 1").fetchone()[0])
    assert tags and all(t == t.lower() for t in tags)


def test_nothing_new_never_loads_the_model(db, server):
    from hermes.embed import MiniLMEmbedder

    url = server.add("/feed.xml", body=rss(articles(2)), etag='"v1"')
    add_feeds(db, [(url, None)])
    run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    db.execute("UPDATE items SET embedding_model = ?", [MiniLMEmbedder.name])  # as if MiniLM made them
    model = MiniLMEmbedder()
    out = run_ingest(db, embedder=model, settings=FAST)
    assert out[0]["status"] == "unchanged" and out.embedded == 0
    assert model._model is None  # torch was never imported for a no-op run


def test_a_web_client_is_made_only_for_the_kind_of_feed_that_needs_one(db, server, tmp_path, monkeypatch):
    """Each httpx client builds a TLS context (~30 ms of CPU): an ingest of local files made
    two and used none."""
    from hermes.ingest import pipeline

    made = []
    real = pipeline.new_client
    monkeypatch.setattr(
        pipeline,
        "new_client",
        lambda *a, allow_private: made.append(allow_private) or real(*a, allow_private=allow_private),
    )
    local = tmp_path / "local.xml"
    local.write_bytes(rss(articles(2, "l")))
    add_feeds(db, [(str(local), None)])
    run_ingest(db, embedder=HashEmbedder(), settings=FAST)
    assert made == [] and count(db) == 2
    url = server.add("/blog.xml", body=rss(articles(3, "b")))
    add_feeds(db, [(url, None)])
    run_ingest(db, embedder=HashEmbedder(), settings=FAST)
    assert made == [True] and count(db) == 5  # the person's web feed: the open client only


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('[[feed]]\nurl = "https://e.org/a.xml"\n', "unknown key(s) feed; each feed is a [[feeds]]"),
        ('[[feeds]]\nurl = "https://e.org/a.xml"\ntitel = "A"\n', "feed #1 has unknown key(s) titel"),
    ],
)
def test_a_typo_in_feeds_toml_is_refused_not_skipped(tmp_path, text, fragment):
    """`[[feed]]` (singular) quietly dropped its feed, and `titel` its title."""
    from hermes.ingest.feedlist import read_feeds_toml

    path = tmp_path / "feeds.toml"
    path.write_text(text)
    with pytest.raises(HermesError, match=re.escape(fragment)):
        read_feeds_toml(path)


def test_a_fetch_records_the_feeds_own_site_once(db, server):
    """The channel's <link> is the feed's site (OPML's htmlUrl, the feeds page's link); one
    set by hand or by an OPML import is kept."""
    url = server.add("/site.xml", body=rss(articles(2, "s")))
    mine = server.add("/mine.xml", body=rss(articles(2, "m")))
    add_feeds(db, [(url, None), (mine, None)])
    db.execute("UPDATE feeds SET site_url = 'https://mine.example/' WHERE url = ?", [mine])
    run_ingest(db, embedder=CountingEmbedder(), settings=FAST)
    sites = dict(db.execute("SELECT url, site_url FROM feeds").fetchall())
    assert sites == {url: "http://example.org/", mine: "https://mine.example/"}
