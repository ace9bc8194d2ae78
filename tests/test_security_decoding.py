"""Issue 12, item 2: stacked ``Content-Encoding`` and decompression bombs.

hermes decodes response bodies itself (:mod:`hermes.ingest.decode`): one content coding at
most, gzip or deflate, inflated a bounded step at a time and counted against the size cap
before the next step. Covered on every path that fetches a URL: ``hermes ingest``,
``add_feed``, ``preview_feed`` and the web UI's add-feed form. Peak memory of real processes
is measured by ``benchmarks/hardening/bombs.py`` (docs/reliability.md); here allocations are
traced in-process, which is deterministic.
"""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest
from ingest_server import FeedServer, Route, rss

from hermes.ingest.decode import STEP, decoder_for
from hermes.ingest.fetch import FetchError, fetch
from hermes.ingest.pipeline import add_feeds, run_ingest
from hermes.tools import call_tool, collect_tools

FEED = rss([{"title": "Layered", "link": "http://example.org/1", "guid": "urn:layered"}])
XML = {"Content-Type": "application/rss+xml"}


def gz(data: bytes, times: int = 1) -> bytes:
    for _ in range(times):
        data = gzip.compress(data)
    return data


def bomb(megabytes: int, wbits: int = 31) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = b"\0" * (1 << 20)
    return b"".join(comp.compress(block) for _ in range(megabytes)) + comp.flush()


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")  # the loopback server (not the guard here)
    with FeedServer() as s:
        yield s


def stacked(server, path="/stacked.xml", coding="gzip, gzip") -> str:
    return server.add(path, body=gz(FEED, coding.count(",") + 1), headers={**XML, "Content-Encoding": coding})


# --- stacked codings, every fetch path --------------------------------------------------------


@pytest.mark.parametrize("coding", ["gzip, gzip", "gzip, gzip, gzip", "deflate, gzip"])
def test_the_fetcher_refuses_more_than_one_content_coding(server, coding):
    body = FEED
    for c in (s.strip() for s in coding.split(",")):
        body = zlib.compress(body) if c == "deflate" else gzip.compress(body)
    url = server.add("/f", body=body, headers={**XML, "Content-Encoding": coding})
    with pytest.raises(FetchError, match="more than one content coding"):
        fetch(url)


def test_two_content_encoding_headers_count_as_two_codings(server):
    class Twice(Route):
        def serve(self, h, stop):
            body = gz(FEED, 2)
            h.send_response(200)
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

    url = server.add("/twice", Twice())
    with pytest.raises(FetchError, match="more than one content coding"):
        fetch(url)


def test_ingest_refuses_a_stacked_coding(db, server):
    add_feeds(db, [(stacked(server), None)])
    summary = run_ingest(db)
    assert summary[0]["status"] == "failed"
    assert "more than one content coding" in summary[0]["error"]
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 0


@pytest.mark.parametrize("name", ["add_feed", "preview_feed"])
def test_the_tools_refuse_a_stacked_coding(db, server, name):
    result = call_tool(db, collect_tools()[name], {"url": stacked(server)})
    assert result["ok"] is False and "more than one content coding" in result["message"]
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 0


def test_the_web_form_refuses_a_stacked_coding(db, db_path, server):
    from web_support import client, token

    with client(db_path) as web:
        answer = web.post("/feeds", data={"url": stacked(server), "csrf_token": token(web, "/feeds")})
    assert answer.status_code == 400 and "more than one content coding" in answer.text
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 0


# --- single codings still work, and stay bounded ---------------------------------------------


@pytest.mark.parametrize(
    "coding, body",
    [
        ("gzip", gzip.compress(FEED)),
        ("x-gzip", gzip.compress(FEED)),
        ("deflate", zlib.compress(FEED)),
        ("identity", FEED),
        ("gzip, identity", gzip.compress(FEED)),
    ],
)
def test_one_coding_is_decoded(server, coding, body):
    url = server.add("/one", body=body, headers={**XML, "Content-Encoding": coding})
    assert fetch(url).body == FEED


def test_the_fetcher_asks_only_for_what_it_decodes(server):
    url = server.add("/plain", body=FEED)
    fetch(url)
    assert server.log[-1][1]["accept-encoding"] == "gzip, deflate"


def test_an_unsupported_or_broken_coding_is_a_clean_failure(server):
    url = server.add("/br", body=b"\x0b\x02\x80hello\x03", headers={"Content-Encoding": "br"})
    with pytest.raises(FetchError, match="unsupported content coding 'br'"):
        fetch(url)
    url = server.add("/bad", body=b"not gzip at all", headers={"Content-Encoding": "gzip"})
    with pytest.raises(FetchError, match="undecodable response body"):
        fetch(url)


@pytest.mark.parametrize("wbits, coding", [(31, "gzip"), (15, "deflate"), (-15, "deflate")])
def test_a_bomb_stops_at_the_cap_without_inflating_past_it(server, wbits, coding):
    """200 MB of zeros in ~200 kB: with a 1 MB cap, the fetch allocates about the cap plus
    one decoding step. (httpx inflated each 64 kB network read in one go, ~64 MB.)"""
    url = server.add("/bomb", body=bomb(200, wbits), headers={**XML, "Content-Encoding": coding})
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match="size cap"):
            fetch(url, max_bytes=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * (1 << 20), f"peak {peak / 2**20:.1f} MB"


def test_the_decoder_yields_bounded_pieces_however_the_body_is_cut():
    data = bytes(range(256)) * 4000 + b"\0" * 5_000_000
    for cut in (1, 1000, 65536):
        for coding, encoded in (
            ("gzip", gzip.compress(data) + gzip.compress(b"tail")),
            ("deflate", zlib.compress(data)),
        ):
            decoder, out = decoder_for([coding]), bytearray()
            if cut == 1:
                encoded = encoded[:5000]  # byte by byte: a prefix is enough
            for k in range(0, len(encoded), cut):
                for piece in decoder.decode(encoded[k : k + cut]):
                    assert len(piece) <= STEP
                    out += piece
            for piece in decoder.finish():
                out += piece
            expected = data + b"tail" if coding == "gzip" else data
            assert bytes(out) == expected[: len(out)] and (cut == 1 or len(out) == len(expected))
