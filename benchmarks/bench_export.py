"""Export and vault-sync speed over a large corpus, and what the incremental sync saves.

Synthetic items go straight into SQLite (no feeds, no model); the corpus signals go through
the real write path. Then, per format, a full export; then ``hermes corpus sync`` into an
empty folder (full), again with nothing changed, and again after a handful of signals —
each compared with a forced full pass (``rebuild``) in the same run.

    .venv/bin/python benchmarks/bench_export.py                    # 3,000 corpus items
    .venv/bin/python benchmarks/bench_export.py --corpus 10000 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.setdefault("HERMES_EMBEDDER", "hash")


def median_ms(fn, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=int, default=3000, help="items in the persona's corpus")
    ap.add_argument("--changes", type=int, default=10, help="signals before the incremental sync")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hermes-export-bench-"))
    (tmp / "home").mkdir()
    os.environ["HERMES_HOME"] = str(tmp / "home")
    from hermes_corpus import export as ex
    from hermes_corpus import signals as cs
    from hermes_corpus import sync as vault

    from hermes.storage.db import get_db
    from hermes.storage.records import require_user

    db = get_db(str(tmp / "bench.db"))
    rng = random.Random(0)
    db.conn.execute("BEGIN")
    for k in range(1, args.corpus + 1):
        db.execute(
            "INSERT INTO items (guid, url, title, summary, author, published, content_type, tags, arxiv_id) "
            "VALUES (?, ?, ?, ?, ?, ?, 'paper', ?, ?)",
            [
                f"arxiv:2401.{k:05d}",
                f"https://arxiv.org/abs/2401.{k:05d}",
                f"Paper {k} on topic {k % 97}",
                "An abstract of about forty words. " * 6,
                "Ana Lopez, Bo Chen and Carla Diaz",
                f"2024-01-{1 + k % 28:02d}T00:00:00+00:00",
                json.dumps([f"topic-{k % 97}", "astro-ph.ga"]),
                f"2401.{k:05d}",
            ],
        )
    db.conn.execute("COMMIT")
    db.execute("INSERT INTO users (name) VALUES ('bench')")
    for k in range(1, args.corpus + 1):
        op = rng.random()
        if op < 0.5:
            cs.record_progress(db, "bench", k, 1.0)
        elif op < 0.8:
            cs.add_highlight(db, "bench", k, "A passage worth keeping.", note="why")
        else:
            cs.favorite(db, "bench", k)
    user = require_user(db, "bench")

    print(f"# Export and sync, {args.corpus} corpus items, median of {args.runs}\n")
    print("| format | full export | size |\n| --- | ---: | ---: |")
    for fmt in ex.FORMATS:
        ms, r = median_ms(lambda fmt=fmt: ex.export(db, user["id"], fmt), args.runs)
        print(f"| {fmt} | {ms:.0f} ms | {len(r.text.encode()) / 1e6:.1f} MB |")

    folder = tmp / "vault"
    t = time.perf_counter()
    first = vault.sync(db, user, folder)
    first_ms = (time.perf_counter() - t) * 1000
    rebuild_ms, _ = median_ms(lambda: vault.sync(db, user, folder, rebuild=True), args.runs)
    idle_ms, idle = median_ms(lambda: vault.sync(db, user, folder), args.runs)

    def change_then_sync():
        for _ in range(args.changes):
            k = rng.randint(1, args.corpus)
            cs.add_highlight(db, "bench", k, "Another passage.") if rng.random() < 0.7 else cs.favorite(
                db, "bench", k, on=rng.random() < 0.5
            )
        t = time.perf_counter()
        r = vault.sync(db, user, folder)
        return (time.perf_counter() - t) * 1000, r

    incremental = [change_then_sync() for _ in range(args.runs)]
    inc_ms = statistics.median(ms for ms, _ in incremental)
    written = statistics.median(len(r.written) + len(r.removed) for _, r in incremental)
    print("\n| vault sync | time | notes written | vs. full pass |\n| --- | ---: | ---: | ---: |")
    print(f"| first sync (empty folder) | {first_ms:.0f} ms | {len(first.written)} | — |")
    print(f"| full pass, nothing changed (`--rebuild`) | {rebuild_ms:.0f} ms | 0 | 1.00× |")
    print(f"| incremental, nothing changed | {idle_ms:.0f} ms | {len(idle.written)} | {idle_ms / rebuild_ms:.2f}× |")
    print(
        f"| incremental after {args.changes} signals | {inc_ms:.0f} ms | {written:.0f} | {inc_ms / rebuild_ms:.2f}× |"
    )


if __name__ == "__main__":
    main()
