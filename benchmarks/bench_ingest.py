"""Ingest throughput on the bundled sample feeds with the real model, and the cost of
re-ingesting unchanged feeds over loopback HTTP.

    .venv/bin/python benchmarks/bench_ingest.py [--runs 3] [--feeds 50]

Prints a markdown table. Each sample run starts from a fresh database; the model is loaded
once before timing (its load time is reported on its own line), so items/s is the
steady-state rate of fetch + parse + store + embed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the loopback server

from hermes.config import Settings
from hermes.embed import HashEmbedder, MiniLMEmbedder
from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths
from hermes.storage.db import get_db


class TimedEmbedder:
    """Wraps an embedder and adds up the time spent inside the model."""

    def __init__(self, inner):
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
        self.seconds = 0.0

    def embed(self, texts):
        start = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - start


def bench_samples(runs: int) -> dict:
    model = MiniLMEmbedder()
    start = time.perf_counter()
    model.embed(["warm up"])
    load = time.perf_counter() - start
    rows = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            db = get_db(Path(tmp) / "bench.db")
            add_feeds(db, [(str(p), None) for p in sample_feed_paths()])
            timed = TimedEmbedder(model)
            start = time.perf_counter()
            summary = run_ingest(db, embedder=timed)
            wall = time.perf_counter() - start
            items = sum(s["new"] for s in summary)
            assert summary.embedded == items and all(s["status"] == "new" for s in summary)
            rows.append((wall, timed.seconds, items))
            db.conn.close()
    wall = statistics.median(r[0] for r in rows)
    embed = statistics.median(r[1] for r in rows)
    items = rows[0][2]
    return {"load": load, "wall": wall, "embed": embed, "items": items,
            "share": statistics.median(r[1] / r[0] for r in rows),
            "rate": statistics.median(r[2] / r[0] for r in rows),
            "feeds": len(sample_feed_paths())}


def bench_unchanged(n_feeds: int, runs: int) -> dict:
    from ingest_server import FeedServer, Route

    body = sample_feed_paths()[0].read_bytes()
    with FeedServer() as server, tempfile.TemporaryDirectory() as tmp:
        urls = [server.add(f"/feed{k}.xml", Route(body=body, etag=f'"v{k}"')) for k in range(n_feeds)]
        db = get_db(Path(tmp) / "bench.db")
        add_feeds(db, [(u, None) for u in urls])
        run_ingest(db, embedder=HashEmbedder())  # first fetch: not timed
        times = []
        for _ in range(runs):
            before = len(server.log)
            start = time.perf_counter()
            summary = run_ingest(db, embedder=HashEmbedder(), settings=Settings())
            times.append(time.perf_counter() - start)
            assert all(s["status"] == "unchanged" for s in summary)
            assert len(server.log) - before == n_feeds  # one conditional GET per feed
        db.conn.close()
    return {"feeds": n_feeds, "wall": statistics.median(times), "min": min(times), "max": max(times)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--feeds", type=int, default=50)
    args = ap.parse_args(argv)
    s = bench_samples(args.runs)
    u = bench_unchanged(args.feeds, max(5, args.runs))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"median of {args.runs} runs, fresh database each; load average after: {load}\n")
    print("| measure | value |")
    print("| --- | --- |")
    print(f"| sample feeds ingested | {s['feeds']} feeds, {s['items']} distinct items "
          "(arXiv abstracts, blog posts, podcast episodes) |")
    print(f"| ingest wall time (fetch, parse, store, embed) | {s['wall']:.2f} s |")
    print(f"| throughput | {s['rate']:.1f} items/s |")
    print(f"| time in the embedding model | {s['embed']:.2f} s ({s['share']:.0%} of ingest) |")
    print(f"| everything else (read, parse, normalise, store) | {s['wall'] - s['embed']:.2f} s |")
    print(f"| model load, once per process (torch import + weights) | {s['load']:.2f} s |")
    print(f"| re-ingest of {u['feeds']} unchanged feeds over loopback (all 304, nothing parsed "
          f"or embedded) | {u['wall'] * 1000:.0f} ms (min {u['min'] * 1000:.0f}, max {u['max'] * 1000:.0f}) |")


if __name__ == "__main__":
    main()
