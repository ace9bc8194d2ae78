"""Corpus speed: signal writes (one process, and several processes on one file) and the
read views over a persona with thousands of experienced items.

Synthetic items are written straight into SQLite (no feeds, no model). Each write goes
through the real path: validation, ``record_signal``'s ``BEGIN IMMEDIATE``, the membership
observer and the change log.

    .venv/bin/python benchmarks/bench_corpus.py                 # 10k items, 2k experienced
    .venv/bin/python benchmarks/bench_corpus.py --items 50000 --experienced 10000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.setdefault("HERMES_EMBEDDER", "hash")


def _writer(db_path: str, home: str, seed: int, n: int, n_items: int, barrier, out) -> None:
    os.environ["HERMES_HOME"] = home
    from hermes_corpus import signals as cs

    from hermes.storage.db import get_db

    db = get_db(db_path)
    rng = random.Random(seed)
    barrier.wait()
    start = time.perf_counter()
    for _ in range(n):
        item = rng.randint(1, n_items)
        op = rng.random()
        if op < 0.5:
            cs.record_progress(db, "writer", item, rng.random())
        elif op < 0.8:
            cs.add_highlight(db, "writer", item, "a passage")
        else:
            cs.favorite(db, "writer", item, on=rng.random() < 0.6)
    out.put(time.perf_counter() - start)
    db.conn.close()


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--experienced", type=int, default=2_000)
    ap.add_argument("--writes", type=int, default=500)
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hermes-corpus-bench-"))
    home = tmp / "home"
    home.mkdir()
    os.environ["HERMES_HOME"] = str(home)
    from hermes_corpus import signals as cs
    from hermes_corpus import tools as ct

    from hermes.storage.db import get_db

    db_path = str(tmp / "bench.db")
    db = get_db(db_path)
    rng = random.Random(0)
    tags = [f"topic-{k}" for k in range(200)]
    db.conn.execute("BEGIN")
    db.conn.executemany(
        "INSERT INTO items (guid, title, summary, tags) VALUES (?, ?, ?, ?)",
        [
            (f"g{k}", f"Item {k} on {rng.choice(tags)}", "words " * 40, json.dumps(rng.sample(tags, 3)))
            for k in range(args.items)
        ],
    )
    db.conn.execute("COMMIT")
    db.execute("INSERT INTO users (name) VALUES ('reader'), ('writer')")

    rows = []
    # Single-process writes that each change membership (a new experienced item).
    chosen = rng.sample(range(1, args.items + 1), args.experienced)
    t = time.perf_counter()
    for k, item in enumerate(chosen):
        if k % 3 == 0:
            cs.add_highlight(db, "reader", item, "a passage worth keeping")
        else:
            cs.record_progress(db, "reader", item, 0.5 + 0.5 * rng.random())
    elapsed = time.perf_counter() - t
    rows.append(("signal writes, 1 process (each adds an item)", f"{args.experienced / elapsed:,.0f} writes/s"))

    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(args.processes), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(db_path, str(home), s, args.writes, args.items, barrier, out))
        for s in range(args.processes)
    ]
    for p in procs:
        p.start()
    per = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    total = args.processes * args.writes
    rows.append(
        (f"signal writes, {args.processes} processes on one file (mixed)", f"{total / max(per):,.0f} writes/s overall")
    )

    since = max(0, ct.corpus(db, "reader")["revision"] - 100)
    views = {
        "corpus(user)": lambda: ct.corpus(db, "reader"),
        "corpus_items(experienced, 50)": lambda: ct.corpus_items(db, "reader", "experienced", 50),
        "corpus_changes(since=revision-100)": lambda: ct.corpus_changes(db, "reader", since, 200),
        "corpus_ranked(limit=10)": lambda: ct.corpus_ranked(db, "reader", 10),
        "corpus_entities(limit=20)": lambda: ct.corpus_entities(db, "reader", 20),
        "recall('topic-7')": lambda: ct.recall(db, "reader", "topic-7", 10),
    }
    for name, fn in views.items():
        assert fn()["ok"]
        rows.append((f"{name}, {args.experienced:,} experienced", f"{median_ms(fn, args.runs):.1f} ms"))

    print(f"Corpus benchmark: {args.items:,} items; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}\n")
    print("| measure | result |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
