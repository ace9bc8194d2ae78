"""feedparser's own test corpus (../shared/data/feedparser-tests, 2,000+ files: sanitiser,
encoding, ill-formed, podcast and entity cases) through hermes's ingest: nothing crashes,
what parses is stored, what does not is a recorded failure, no stored text carries markup."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ingest_server import FeedServer, Route

from hermes.config import Settings
from hermes.ingest.pipeline import add_feeds, run_ingest

# Resolved: from a worktree, ../shared is a symlink, and the files' own paths come resolved.
CORPUS = (Path(__file__).resolve().parents[2] / "shared" / "data" / "feedparser-tests").resolve()
pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(),
    reason=f"feedparser's test corpus is not at {CORPUS} (it ships with the shared test data, not with hermes)",
)

# These errors mean an exception escaped fetch/parse/store and was caught by the pipeline's
# last-resort net: a bug, even though the run survived it.
SAFETY_NET = ("parser failed:", "fetch failed:", "could not store items:")
MARKUP = re.compile(r"<[a-z/!?]|javascript:|vbscript:|\bon[a-z]+\s*=", re.I)


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name not in ("LICENSE", "MANIFEST.tsv"))


def assert_clean(db) -> int:
    rows = db.execute("SELECT title, summary, author, tags, url, enclosure FROM items").fetchall()
    for title, summary, author, tags, url, enclosure in rows:
        for text in (title, summary, author or "", *json.loads(tags)):
            assert not MARKUP.search(text), text[:200]
        assert url is None or re.match(r"https?://", url), url
        if enclosure:
            assert re.match(r"https?://", json.loads(enclosure)["url"])
    return len(rows)


def check_summary(summary, expected: int):
    assert len(summary) == expected
    for s in summary:
        assert s["status"] in ("new", "unchanged", "failed"), s
        if s["status"] == "failed":
            assert s["error"] and not s["error"].startswith(SAFETY_NET), s


@pytest.mark.slow
def test_every_corpus_file_through_ingest(db):
    files = corpus_files()
    assert len(files) > 2000
    add_feeds(db, [(str(p), None) for p in files])
    summary = run_ingest(db, settings=Settings(fetch_concurrency=16))
    check_summary(summary, len(files))
    stored = assert_clean(db)
    failed = [s for s in summary if s["status"] == "failed"]
    # Many corpus files reuse the same entry ids, which dedupe stores once.
    assert stored == sum(s["new"] for s in summary) > 100
    assert len(failed) < 50, [s["error"] for s in failed][:20]
    for s in failed:
        path = Path(s["url"])
        if path.suffix == ".json":  # JSON Feed: feedparser 6 reads XML only
            assert "JSON Feed is not supported" in s["error"]
        else:
            assert_rightly_failed(path, {}, s["error"])
    # What could not be read is on its feed row with the reason.
    rows = db.execute("SELECT count(*) FROM feeds WHERE last_error IS NOT NULL").fetchone()[0]
    assert rows == len(failed)
    assert db.execute("SELECT count(*) FROM items WHERE embedding IS NULL").fetchone()[0] == 0


def declared_headers(body: bytes) -> dict:
    """The ``Header:`` lines of a corpus file's comment (simulated HTTP response headers)."""
    head = body[:4096].decode("latin-1")
    out = {}
    for line in re.findall(r"^Header:\s*(.+?)\s*$", head, re.M):
        name, _, value = line.partition(":")
        out[name.strip()] = value.strip()
    return out


def test_corpus_files_with_http_headers_over_loopback(db):
    with_headers = [(p, declared_headers(p.read_bytes())) for p in corpus_files()]
    with_headers = [(p, h) for p, h in with_headers if h]
    assert len(with_headers) > 50
    with FeedServer() as server:
        feeds = []
        for n, (path, headers) in enumerate(with_headers):
            url = server.add(f"/{n}/{path.name}", Route(body=path.read_bytes(), headers=headers))
            feeds.append((url, None))
        add_feeds(db, feeds)
        summary = run_ingest(db, settings=Settings(fetch_concurrency=8, fetch_timeout=10))
    check_summary(summary, len(with_headers))
    assert assert_clean(db) > 0
    # Only files feedparser itself expects to be ill-formed may fail (e.g. served as text/plain).
    served = {url: item for (url, _), item in zip(feeds, with_headers)}
    for s in summary:
        if s["status"] == "failed":
            assert_rightly_failed(*served[s["url"]], s["error"])


def assert_rightly_failed(path: Path, headers: dict, error: str) -> None:
    """A corpus file may fail only if feedparser's own expectation calls it ill-formed, or
    if feedparser itself finds no entry in it: hermes never drops what feedparser can read."""
    import io

    import feedparser

    name = path.relative_to(CORPUS).as_posix()
    parsed = feedparser.parse(
        io.BytesIO(path.read_bytes()), response_headers={k.lower(): v for k, v in headers.items()}
    )
    readable = [e for e in parsed.entries if e.get("title") or e.get("link")]
    assert name in expected_bozo() or not readable, (name, error)


def expected_bozo() -> set[str]:
    """Corpus files whose feedparser expectation says the feed is ill-formed ("bozo")."""
    out = set()
    for line in (CORPUS / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) > 2 and re.search(r"(?<!not )\bbozo\b", cols[2]):
            out.add(cols[0])
    return out
