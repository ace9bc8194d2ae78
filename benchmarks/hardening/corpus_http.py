"""feedparser's test corpus (../shared/data/feedparser-tests, 2,123 files) served over a
loopback HTTP server with the ``Header:`` lines each file declares, through hermes's ingest.

    .venv/bin/python benchmarks/hardening/corpus_http.py [--sample N] [--no-pages]

Every file is a feed of its own, fetched over HTTP (``application/xml`` when a file declares
no Content-Type, as feedparser's own harness does). Checks and figures:

- no unhandled exception: every feed ends ``new`` / ``unchanged`` / ``failed``, and no failure
  comes from the pipeline's last-resort nets ("parser failed:", "fetch failed:", "could not
  store items:");
- entries stored where feedparser yields them: for every file from which feedparser itself
  reads an entry with a title or link, the feed did not fail and every item hermes's parser
  makes of it is in the database (by guid or arXiv id: corpus files share ids, stored once);
- a failure only where feedparser's own expectation says the file is ill-formed ("bozo") or
  feedparser finds no readable entry;
- nothing stored would run script when shown: no markup or ``javascript:`` in any stored
  title, summary, author or tag, only http(s) URLs; and every stored item rendered on the web
  UI's feed page (200 at a time) passes the web tests' audit (no script, frame, handler,
  style or script URL).

Prints a markdown table; exit status 1 on any violation.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SHARED_DATA, FeedServer, Route, table

CORPUS = SHARED_DATA / "feedparser-tests"
SAFETY_NET = ("parser failed:", "fetch failed:", "could not store items:")
MARKUP = re.compile(r"<[a-z/!?]|javascript:|vbscript:|\bon[a-z]+\s*=", re.I)


def corpus_files(sample: int | None = None) -> list[Path]:
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name not in ("LICENSE", "MANIFEST.tsv"))
    if sample and sample < len(files):
        step = len(files) / sample
        files = [files[int(k * step)] for k in range(sample)]
    return files


def declared_headers(body: bytes) -> dict:
    head = body[:4096].decode("latin-1")
    out = {}
    for line in re.findall(r"^Header:\s*(.+?)\s*$", head, re.M):
        name, _, value = line.partition(":")
        out[name.strip()] = value.strip()
    return out


def expected_bozo() -> set[str]:
    out = set()
    for line in (CORPUS / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) > 2 and re.search(r"(?<!not )\bbozo\b", cols[2]):
            out.add(cols[0])
    return out


def serve_headers(path: Path, body: bytes) -> dict:
    headers = declared_headers(body)
    if not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/xml"
    return headers


def readable_entries(body: bytes, headers: dict) -> int:
    import feedparser

    parsed = feedparser.parse(io.BytesIO(body), response_headers={k.lower(): v for k, v in headers.items()})
    return sum(1 for e in parsed.entries if e.get("title") or e.get("link"))


def run(sample: int | None = None, pages: bool = True, out=print) -> dict:
    from hermes.config import Settings
    from hermes.ingest.parse import ParseError, parse_feed
    from hermes.ingest.pipeline import add_feeds, run_ingest
    from hermes.storage.db import get_db

    files = corpus_files(sample)
    bozo = expected_bozo()
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, FeedServer() as server:
        db_path = Path(tmp) / "corpus.db"
        db = get_db(db_path)
        served = {}
        for n, path in enumerate(files):
            body = path.read_bytes()
            headers = serve_headers(path, body)
            url = server.add(f"/{n}/{path.name}", Route(body=body, headers=headers))
            served[url] = (path, body, headers)
        add_feeds(db, [(u, None) for u in served])
        start = time.perf_counter()
        summary = run_ingest(db, settings=Settings(fetch_concurrency=16, fetch_timeout=30))
        wall = time.perf_counter() - start

        statuses = Counter(s["status"] for s in summary)
        failed_why = Counter()
        feedparser_entries = hermes_items = missing = dropped_by_hermes = 0
        for s in summary:
            path, body, headers = served[s["url"]]
            name = path.relative_to(CORPUS).as_posix()
            if s["status"] not in ("new", "unchanged", "failed"):
                problems.append(f"{name}: status {s['status']}")
            readable = readable_entries(body, headers)
            feedparser_entries += readable
            if s["status"] == "failed":
                err = s["error"] or ""
                if err.startswith(SAFETY_NET):
                    problems.append(f"{name}: unhandled exception caught by a safety net: {err}")
                if readable and name not in bozo:
                    problems.append(f"{name}: failed although feedparser reads {readable} entries: {err}")
                failed_why[re.sub(r"\(.*", "", err).split(":")[0].strip()[:60]] += 1
                continue
            try:
                items = parse_feed(body, url=s["url"], headers={k.lower(): v for k, v in headers.items()}).items
            except ParseError:
                items = []
            hermes_items += len(items)
            dropped_by_hermes += max(0, readable - len(items))
            for item in items:
                key, value = ("arxiv_id", item["arxiv_id"]) if item["arxiv_id"] else ("guid", item["guid"])
                if not db.execute(f"SELECT 1 FROM items WHERE {key} = ?", [value]).fetchone():
                    missing += 1
                    problems.append(f"{name}: entry {value!r} not stored")

        stored = db.execute("SELECT count(*) FROM items").fetchone()[0]
        markup = 0
        for title, summary_text, author, tags, url, enclosure in db.execute(
            "SELECT title, summary, author, tags, url, enclosure FROM items"
        ):
            for text in (title, summary_text, author or "", *json.loads(tags)):
                if MARKUP.search(text):
                    markup += 1
                    problems.append(f"markup stored: {text[:120]!r}")
            if url is not None and not re.match(r"https?://", url):
                markup += 1
                problems.append(f"non-web URL stored: {url[:120]!r}")
            if enclosure and not re.match(r"https?://", json.loads(enclosure)["url"]):
                markup += 1
                problems.append(f"non-web enclosure stored: {enclosure[:120]!r}")
        rendered, audit_problems = render_all(db, db_path) if pages else (0, [])
        problems.extend(audit_problems)
        failing_rows = db.execute("SELECT count(*) FROM feeds WHERE last_error IS NOT NULL").fetchone()[0]
        if failing_rows != statuses["failed"]:
            problems.append(f"{statuses['failed']} failed feeds but {failing_rows} feed rows with an error")
        db.conn.close()

    figures = {
        "files served over HTTP": len(files),
        "with declared Header: lines": sum(1 for p, b, h in served.values() if declared_headers(b)),
        "ingest wall time (s), concurrency 16": f"{wall:.1f}",
        "feeds new / unchanged / failed": f"{statuses['new']} / {statuses['unchanged']} / {statuses['failed']}",
        "entries feedparser reads (title or link)": feedparser_entries,
        "items hermes's parser makes of the non-failed feeds": hermes_items,
        "of those missing from the database": missing,
        "items stored (after cross-file dedupe by guid / arXiv id)": stored,
        "failures from a last-resort net (unhandled exception)": sum(
            1 for s in summary if (s["error"] or "").startswith(SAFETY_NET)
        ),
        "failures where feedparser reads entries and expects no bozo": sum(
            1 for p in problems if "failed although" in p
        ),
        "stored texts / URLs with markup or a script URL": markup,
        "items rendered on feed pages and audited": rendered,
        "audit findings (script, frame, handler, style, script URL)": len(audit_problems),
    }
    out(table([{"figure": k, "value": v} for k, v in figures.items()], ["figure", "value"]))
    out("\nwhy feeds failed (reason, count):\n")
    out(table([{"reason": k, "feeds": v} for k, v in failed_why.most_common()], ["reason", "feeds"]))
    out(
        f"\nentries feedparser reads that hermes's parser does not keep: {dropped_by_hermes} (a "
        "title that is only an <img> and nothing else to show, or the same entry twice in one "
        "feed)"
    )
    out(f"\n{len(problems)} problems")
    for p in problems[:20]:
        out(f"  {p}")
    return {"figures": figures, "problems": problems, "summary": summary}


def render_all(db, db_path: Path) -> tuple[int, list[str]]:
    """Show every stored item on the feed page, 200 per page, and audit the HTML."""
    from starlette.testclient import TestClient
    from test_web_security import audit

    from hermes.storage.records import create_user
    from hermes.web.app import create_app

    user = create_user(db, "auditor", "feeds entries titles")
    problems, shown = [], set()
    with TestClient(create_app(str(db_path), secret=b"audit-" + b"x" * 40)) as client:
        while True:
            html = client.get("/feed", params={"user": "auditor", "days": "all", "limit": "200", "below": "1"}).text
            found = audit(html)
            problems.extend(f"feed page: {f}" for f in found)
            ids = [int(i) for i in re.findall(r'name="item_id" value="(\d+)"', html)]
            fresh = [i for i in dict.fromkeys(ids) if i not in shown]
            if not fresh:
                break
            shown.update(fresh)
            # Mark them clicked so the next page shows the next 200 (the feed hides clicked items).
            db.conn.executemany(
                "INSERT INTO clicks (user_id, item_id, label, source, created) VALUES (?, ?, 'like', 'ui', datetime())",
                [(user["id"], i) for i in fresh],
            )
    return len(shown), problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, help="only every k-th file, N files in all")
    ap.add_argument("--no-pages", action="store_true", help="skip rendering the feed pages")
    args = ap.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"feedparser's corpus is not at {CORPUS} (it ships with the shared test data)")
        return 2
    os.environ.setdefault("HERMES_EMBEDDER", "hash")
    os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
    os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="hermes-corpus-home-"))
    result = run(args.sample, not args.no_pages)
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
