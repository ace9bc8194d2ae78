"""Digest speed: a persona's digest over 10k and 100k items in the window.

Synthetic archive, written straight into SQLite (no feed parsing, no model):
- tags: 40 topics, each with 150 tags of Zipf-like popularity; an item takes 2–5 tags from
  its topic, one from a neighbouring topic 15% of the time, and a tag of its own (a
  singleton, like a rare keyphrase) 30% of the time;
- embeddings: 384-d, the item's topic centroid plus noise, unit norm (model name of the
  hash embedder, so ranking needs no model);
- a persona with 10 likes and 5 dislikes (the classifier is active).

Timings (median of ``--runs``): the tag graph built from scratch; the first digest of a
process (graph built and persisted, matrix loaded); a warm digest (graph and matrix in
memory); a digest whose graph comes from the persisted table (in-memory graph dropped, as
in a fresh CLI process); and the ranking call alone (``rank()`` of the whole window, which
the digest makes before grouping), to show what the digest adds on top of ranking.

    .venv/bin/python benchmarks/bench_digest.py            # 10k and 100k
    .venv/bin/python benchmarks/bench_digest.py --sizes 10000 --runs 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

N_TOPICS = 40
TAGS_PER_TOPIC = 150
DIM = 384


def synthesize(db, n_items: int, seed: int = 0) -> None:
    from hermes.storage.transactions import write_transaction

    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, TAGS_PER_TOPIC + 1) ** 1.1
    zipf /= zipf.sum()
    centroids = rng.normal(size=(N_TOPICS, DIM)).astype(np.float32)
    now = datetime.now(UTC)
    db.execute("INSERT INTO feeds (url, title) VALUES ('https://bench.example/feed', 'bench')")
    topics = rng.integers(0, N_TOPICS, size=n_items)
    vecs = centroids[topics] + rng.normal(scale=1.2, size=(n_items, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = []
    for i in range(n_items):
        t = int(topics[i])
        k = int(rng.integers(2, 6))
        picks = rng.choice(TAGS_PER_TOPIC, size=k, replace=False, p=zipf)
        tags = [f"topic{t:02d}-tag{p:03d}" for p in picks]
        if rng.random() < 0.15:
            other = (t + int(rng.integers(1, 3))) % N_TOPICS
            tags.append(f"topic{other:02d}-tag{int(rng.choice(TAGS_PER_TOPIC, p=zipf)):03d}")
        if rng.random() < 0.3:
            tags.append(f"rare-{i}")
        published = (now - timedelta(days=float(rng.uniform(0, 6.5)))).isoformat(timespec="seconds")
        rows.append(
            (
                1,
                f"bench-{i}",
                f"Item {i} about topic {t}",
                "",
                published,
                json.dumps(tags),
                vecs[i].tobytes(),
                "hermes/hash-384",
                i + 1,
            )
        )
    with write_transaction(db):
        db.conn.executemany(
            "INSERT INTO items (feed_id, guid, title, summary, published, tags, embedding, "
            "embedding_model, embed_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def persona(db):
    from hermes.storage.clicks import record_click
    from hermes.storage.records import create_user

    user = create_user(db, "bench", "items about topic 3 and topic 7")
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id LIMIT 15")]
    for k, item_id in enumerate(ids):
        record_click(db, user["id"], item_id, k < 10, "agent")
    return user


def median_ms(fn, runs: int) -> tuple[tuple[float, float], object]:
    """Median (wall ms, CPU ms) over ``runs`` calls, and the last result. CPU time is shown
    beside wall time because shared machines make wall time noisy."""
    wall, cpu, out = [], [], None
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return (statistics.median(wall), statistics.median(cpu)), out


def fmt(t: tuple[float, float]) -> str:
    return f"{t[0]:,.0f} ms ({t[1]:,.0f})"


def bench(n_items: int, runs: int, workdir: Path) -> dict:
    from hermes_digest.tools import digest

    from hermes.contract import CandidateQuery
    from hermes.ranking import matrix
    from hermes.ranking.rank import rank
    from hermes.storage.db import get_db
    from hermes.topics import tag_graph

    db = get_db(workdir / f"bench-{n_items}.db")
    t0 = time.perf_counter()
    synthesize(db, n_items)
    user = persona(db)
    setup_s = time.perf_counter() - t0

    build_ms, graph = median_ms(lambda: tag_graph.build_graph(db), max(3, runs // 2))
    tag_graph.clear_cache()
    matrix.clear_cache()
    first_ms, first = median_ms(lambda: digest(db, "bench", days=7), 1)
    assert first["ok"], first["message"]
    warm_ms, result = median_ms(lambda: digest(db, "bench", days=7), runs)

    def from_table():
        tag_graph.clear_cache()
        return digest(db, "bench", days=7)

    table_ms, _ = median_ms(from_table, runs)
    # The ranking call the digest makes (the whole window ranked, then cut to `limit`).
    rank_ms, _ = median_ms(lambda: rank(db, user, CandidateQuery(since_days=7), limit=None), runs)
    clustered = sum(t["n_total"] for t in result["topics"])
    db.conn.close()
    return {
        "items": n_items,
        "setup_s": setup_s,
        "graph_build_ms": build_ms,
        "first_ms": first_ms,
        "warm_ms": warm_ms,
        "table_ms": table_ms,
        "rank_ms": rank_ms,
        "nodes": graph.n_nodes,
        "edges": graph.n_edges,
        "left_out": graph.left_out,
        "communities": len(graph.communities),
        "topics": len(result["topics"]),
        "clustered": clustered,
        "n_items": result["n_items"],
        "in_window": result["n_in_window"],
        "classifier": result["ranking_quality"]["classifier_active"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated item counts")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per figure (median)")
    args = parser.parse_args()
    if args.runs < 5:
        parser.error("--runs must be at least 5")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HERMES_HOME"] = tmp
        os.environ["HERMES_EMBEDDER"] = "hash"
        os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
        rows = [bench(int(n), args.runs, Path(tmp)) for n in args.sizes.split(",")]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"digest(user, days=7, per_topic=3, limit=30); median of {args.runs} runs, wall time "
        f"(CPU time in brackets); Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {load}\n"
    )
    print(
        "| items in window | graph: nodes / edges / left out / communities | graph build | "
        "first digest (build + persist) | digest, warm | digest, graph from table | rank() alone | "
        "clustered of 30 | classifier |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['in_window']:,} | {r['nodes']:,} / {r['edges']:,} / {r['left_out']:,} / "
            f"{r['communities']} | {fmt(r['graph_build_ms'])} | {fmt(r['first_ms'])} | "
            f"{fmt(r['warm_ms'])} | {fmt(r['table_ms'])} | {fmt(r['rank_ms'])} | "
            f"{r['clustered']}/{r['n_items']} in {r['topics']} topics | "
            f"{'active' if r['classifier'] else 'inactive'} |"
        )


if __name__ == "__main__":
    main()
