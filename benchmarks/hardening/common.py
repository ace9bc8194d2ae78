"""Shared pieces of the hardening scripts: synthetic feeds, a loopback feed server, running
``hermes`` as a child process, and the database invariants every trial checks.

Nothing here reaches the network: feeds are local files or served on 127.0.0.1.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO / "tests"))  # the ingest tests' loopback server, process helpers

from ingest_server import FeedServer, Route  # noqa: E402,F401
from process_support import child_env, free_port, hermes_command, wait_for_port  # noqa: E402,F401

WORDS = (
    "quantum graph neural network protein folding lattice gauge spin glass entropy "
    "transformer attention sparse matrix boson fermion topology manifold sampling "
    "inference causal reinforcement policy gradient kernel diffusion flow galaxy halo "
    "cosmology dark matter turbulence plasma catalyst polymer enzyme genome"
).split()


def hermes(args: list[str], home: Path, timeout: float = 300, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*hermes_command(), *args], env=child_env(home, **env), capture_output=True, text=True, timeout=timeout
    )


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_feeds(n_feeds: int, items_per_feed: int, seed: int = 7, cross_listed: float = 0.2) -> tuple[list[bytes], int]:
    """RSS bodies of arXiv-like listings; about ``cross_listed`` of each feed's papers also
    appear in the next feed (the same paper in two listings must be stored once).

    Returns the bodies and how many distinct items they hold.
    """
    rng = random.Random(seed)
    bodies, distinct = [], set()
    next_id = 1
    previous: list[tuple[str, str, str]] = []
    for f in range(n_feeds):
        papers = []
        for _ in range(items_per_feed):
            papers.append((f"2401.{next_id:05d}", _text(rng, 8).capitalize(), _text(rng, 120)))
            next_id += 1
        shared = previous[: int(len(previous) * cross_listed)]
        entries = papers + shared
        previous = papers
        out = [
            f'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
            f"<title>Listing {f}</title><link>http://example.org/{f}</link>"
        ]
        for aid, title, abstract in entries:
            distinct.add(aid)
            out.append(
                f"<item><title>{escape(title)}</title>"
                f"<link>http://arxiv.org/abs/{aid}v1</link>"
                f"<guid>oai:arXiv.org:{aid}v1</guid>"
                f"<description>{escape(abstract)}</description>"
                f"<category>cat{f % 5}</category>"
                f"<pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>"
            )
        out.append("</channel></rss>")
        bodies.append("".join(out).encode())
    return bodies, len(distinct)


def integrity(path: Path) -> str:
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def invariants(path: Path) -> dict:
    """What must hold after a completed run: no duplicates, everything embedded, the
    full-text index in step with the items."""
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        q = lambda sql: conn.execute(sql).fetchone()[0]
        out = {
            "integrity": q("PRAGMA integrity_check"),
            "items": q("SELECT count(*) FROM items"),
            "dup_guid": q("SELECT count(*) FROM (SELECT guid FROM items GROUP BY guid HAVING count(*) > 1)"),
            "dup_arxiv": q(
                "SELECT count(*) FROM (SELECT arxiv_id FROM items WHERE arxiv_id "
                "IS NOT NULL GROUP BY arxiv_id HAVING count(*) > 1)"
            ),
            "unembedded": q("SELECT count(*) FROM items WHERE embedding IS NULL"),
            "feeds_failing": q("SELECT count(*) FROM feeds WHERE last_error IS NOT NULL"),
        }
        try:
            conn.execute("INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
            out["fts"] = "ok"
        except sqlite3.DatabaseError as exc:
            out["fts"] = f"{exc}"
        return out
    finally:
        conn.close()


def table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines)


def dump(obj) -> str:
    return json.dumps(obj, indent=2, default=str)
