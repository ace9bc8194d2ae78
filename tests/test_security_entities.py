"""XML entity expansion (issue 33, case 1): no parser expands a feed's entity declarations,
on every path that hands remote bytes to feedparser (ingest, ``preview_feed``, the arXiv
answer of ``save_item``), and memory stays bounded by the body, not by its references.

Memory is traced with :mod:`tracemalloc` (deterministic), never timed. Before the guard the
flat case below allocated over 30 MB (100 kB × 300 references) and its arXiv twin as much."""

from __future__ import annotations

import base64
import tracemalloc

import pytest
from hermes_corpus import save as saving
from hermes_corpus.metadata import LookupFailed
from ingest_server import FeedServer

from hermes.ingest.parse import ParseError, parse_feed
from hermes.tools import call_tool, collect_tools

VALUE = "x" * 100_000
REFS = 300
# what the body may cost on top of itself (the guard's copy, feedparser's own state)
BOUND = 8 * 1024 * 1024


def rss(doctype: str, description: str, *, decl: str = '<?xml version="1.0"?>') -> str:
    return (
        f'{decl}\n{doctype}\n<rss version="2.0"><channel><title>Entities</title>'
        f"<link>https://example.org/</link><item><title>One</title><guid>urn:one</guid>"
        f"<description>{description}</description></item></channel></rss>"
    )


FLAT = rss(f'<!DOCTYPE rss [\n<!ENTITY a "{VALUE}">\n]>', "&a;" * REFS).encode()


def utf7(text: str) -> str:
    """``text`` in UTF-7 with every character base64-encoded (Python's encoder writes "<!"
    as is)."""
    return "+" + base64.b64encode(text.encode("utf-16-be")).decode().rstrip("=") + "-"


def peak_of(call) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_one_big_entity_referenced_many_times_is_not_expanded():
    parsed, peak = peak_of(lambda: parse_feed(FLAT, url="https://example.org/feed.xml"))
    assert peak < BOUND, f"parsing allocated {peak / 1e6:.1f} MB"
    [item] = parsed.items
    assert item["title"] == "One" and "xxxxxxxxxx" not in (item["summary"] or "")
    assert "hermes ignored them" in parsed.warning or "undefined entity" in parsed.warning


def test_nested_entities_and_external_ones_are_not_expanded():
    laughs = ['<!ENTITY lol0 "lollollollol">']
    laughs += [f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">' for i in range(1, 9)]
    body = rss("<!DOCTYPE rss [" + "".join(laughs) + '<!ENTITY x SYSTEM "file:///etc/passwd">]>', "&lol8; &x;").encode()
    parsed, peak = peak_of(lambda: parse_feed(body, url="https://example.org/feed.xml"))
    assert peak < BOUND
    assert "lollollollollol" not in (parsed.items[0]["summary"] or "")
    assert "root:" not in (parsed.items[0]["summary"] or "")


def test_a_declared_character_entity_still_reads_as_its_html_name():
    body = rss('<!DOCTYPE rss [\n  <!ENTITY nbsp "&#160;">\n]>', "a&nbsp;b").encode()
    parsed = parse_feed(body, url="https://example.org/feed.xml")
    assert parsed.items[0]["summary"] in ("a b", "a\xa0b")


@pytest.mark.parametrize(
    "body, headers",
    [
        # a declaration that feedparser's loose parser would read from a comment before the root
        (rss('<!--\n<!ENTITY a "' + VALUE + '">\n--><!DOCTYPE rss>', "&a;" * REFS).encode(), {}),
        # the same spelled in encodings that hide "<!ENTITY" from a byte search
        (FLAT.decode().encode("utf-16"), {"content-type": "application/xml; charset=utf-16"}),
        (
            rss(
                utf7(f'<!DOCTYPE rss [<!ENTITY a "{VALUE[:3000]}">]>'),
                "&a;" * REFS,
                decl='<?xml version="1.0" encoding="utf-7"?>',
            ).encode(),
            {"content-type": "application/xml; charset=utf-7"},
        ),
        # an internal subset that never ends
        (f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "{VALUE}"> <rss>{"&a;" * REFS}'.encode(), {}),
    ],
)
def test_a_declaration_that_cannot_be_removed_is_refused(body, headers):
    with pytest.raises(ParseError, match="declares XML entities"):
        parse_feed(body, url="https://example.org/feed.xml", headers=headers)


def test_an_ordinary_doctype_passes_unchanged():
    body = rss(
        '<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
        '"http://my.netscape.com/publish/formats/rss-0.91.dtd">',
        "plain",
    ).encode()
    parsed = parse_feed(body, url="https://example.org/feed.xml")
    assert parsed.items[0]["summary"] == "plain" and parsed.warning is None


def test_preview_feed_and_ingest_of_the_entity_feed_stay_bounded(db, monkeypatch):
    from hermes.ingest.pipeline import add_feeds, run_ingest

    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")
    with FeedServer() as srv:
        url = srv.add("/bomb.xml", body=FLAT, headers={"Content-Type": "application/rss+xml"})
        tool = collect_tools({"feeds"})["preview_feed"]
        answer, peak = peak_of(lambda: call_tool(db, tool, {"url": url}))
        assert answer["ok"] and peak < BOUND, (answer["message"], peak)
        add_feeds(db, [(url, None)])
        summary, peak = peak_of(lambda: run_ingest(db))
        assert summary[0]["status"] == "new" and peak < BOUND
    stored = db.execute("SELECT summary FROM items").fetchone()[0] or ""
    assert "xxxxxxxxxx" not in stored


def test_save_items_arxiv_answer_goes_through_the_guard(db, tmp_path):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    atom = (
        f'<?xml version="1.0"?>\n<!DOCTYPE feed [\n<!ENTITY a "{VALUE}">\n]>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>ArXiv Query</title>'
        "<id>http://arxiv.org/api/x</id><updated>2024-02-01T00:00:00Z</updated><entry>"
        "<id>http://arxiv.org/abs/2401.12345v2</id><published>2024-01-22T18:59:59Z</published>"
        f"<title>Paper</title><summary>{'&a;' * REFS}</summary></entry></feed>"
    ).encode()
    with FeedServer() as srv:
        (tmp_path / "home").mkdir(exist_ok=True)
        (tmp_path / "home" / "config.toml").write_text(f'[corpus]\narxiv_api = "{srv.url("/api/query")}"\n')
        srv.add(
            "/api/query?id_list=2401.12345&max_results=1", body=atom, headers={"Content-Type": "application/atom+xml"}
        )

        def save():
            try:
                return saving.save(db, "alice", "2401.12345", allow_private=True, source="ui")
            except LookupFailed as exc:
                return exc

        result, peak = peak_of(save)
    assert peak < BOUND, f"saving allocated {peak / 1e6:.1f} MB"
    if not isinstance(result, LookupFailed):
        stored = db.execute("SELECT summary FROM items").fetchone()[0] or ""
        assert "xxxxxxxxxx" not in stored
