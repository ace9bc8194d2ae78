"""Ranking speed and scale: ``list_feed`` over 10k, 100k and 1M synthetic items.

Synthetic archive written through the real schema (so the FTS triggers index every text),
embeddings filed under the real model's name (MiniLM) without running it:
- 64 topics; an item's vector is its topic centroid plus noise (384-d, unit norm), its
  title (8 words) and summary (100 words) are drawn Zipf-like from a topic-skewed
  vocabulary of 20,000 pseudo-words, its tags 2–5 of its topic's 40;
- every item published within the last 6.5 days: ``list_feed``'s default 7-day window
  keeps them all (the worst case: every item is a candidate);
- persona ``bench``: a four-clause interests text whose vectors are stored on its row (as a
  previous run would have left them), 20 likes and 10 dislikes — every component active
  (clause profile + BM25, preference, affinity, classifier); persona ``new``: no clicks.

Each size runs in a fresh process, which reports: the first ``list_feed`` call (database
opened, matrix loaded from SQLite, BM25 computed — and whether torch was imported), the
warm median of ``list_feed`` and of ``rank_items``, a bare numpy baseline over the same
in-memory matrix (``M @ q`` + top-20 by argpartition), the ratio, and peak RSS.

    .venv/bin/python benchmarks/bench_rank.py                   # 10k and 100k
    .venv/bin/python benchmarks/bench_rank.py --sizes 1000000   # builds a ~2.5 GB database once
    .venv/bin/python benchmarks/bench_rank.py --write           # update results/ranking.md
    .venv/bin/python benchmarks/bench_rank.py --matrix int8     # force the storage (default auto)

In int8 storage (``--matrix``, or ``auto`` at 1M) the floor is still numpy's float32
product: its matrix is loaded after the RSS reading, so it does not count in it.

Databases are kept in benchmarks/.cache/ (gitignored) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
N_TOPICS, DIM, VOCAB, TAGS = 64, 384, 20_000, 40
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
INTERESTS_TOPICS = (3, 17, 29, 41)
FORMAT = 1  # bump when the synthetic archive changes


def words(rng: np.random.Generator, n: int) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(4, 10, size=n)
    return ["".join(rng.choice(letters, size=k)) for k in lengths]


def build(path: Path, n: int, seed: int = 0) -> None:
    os.environ["HERMES_LOAD_ENTRYPOINTS"] = "0"
    from hermes.ranking.interests import interest_clauses, interests_key
    from hermes.storage.clicks import record_click
    from hermes.storage.db import get_db
    from hermes.storage.records import create_user
    from hermes.storage.transactions import write_transaction

    tmp = path.with_suffix(".tmp")
    for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        stale.unlink(missing_ok=True)
    db = get_db(tmp)
    rng = np.random.default_rng(seed)
    vocab = np.array(words(rng, VOCAB))
    zipf = 1.0 / np.arange(1, VOCAB + 1) ** 1.05
    zipf /= zipf.sum()
    shuffles = [rng.permutation(VOCAB) for _ in range(N_TOPICS)]  # each topic's favourite words
    centroids = rng.normal(size=(N_TOPICS, DIM)).astype(np.float32)
    now = datetime.now(UTC)
    for f in range(20):
        db.execute("INSERT INTO feeds (url, title) VALUES (?, ?)", [f"https://bench.example/{f}", f"feed {f}"])
    types = np.array(["paper", "article", "podcast"])
    chunk = 20_000
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        topics = rng.integers(0, N_TOPICS, size=m)
        vecs = centroids[topics] + rng.normal(scale=1.0, size=(m, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        draws = rng.choice(VOCAB, size=(m, 108), p=zipf)
        rows = []
        for k in range(m):
            t = int(topics[k])
            text = vocab[shuffles[t][draws[k]]]
            tags = [f"t{t}-{x}" for x in rng.choice(TAGS, size=int(rng.integers(2, 6)), replace=False)]
            published = (now - timedelta(days=float(rng.uniform(0, 6.5)))).isoformat(timespec="seconds")
            i = start + k
            rows.append(
                (
                    1 + i % 20,
                    f"bench-{i}",
                    " ".join(text[:8]),
                    " ".join(text[8:]),
                    str(types[i % 3]),
                    published,
                    json.dumps(tags),
                    vecs[k].tobytes(),
                    MODEL,
                    i + 1,
                )
            )
        with write_transaction(db):
            db.conn.executemany(
                "INSERT INTO items (feed_id, guid, title, summary, content_type, published, tags, "
                "embedding, embedding_model, embed_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        print(f"  {start + m:,} items", file=sys.stderr, flush=True)
    # The persona writes about four topics in those topics' own frequent words.
    clauses = [" ".join(vocab[shuffles[t][:4]]) for t in INTERESTS_TOPICS]
    text = ", ".join(clauses)
    assert interest_clauses(text) == clauses
    vectors = np.vstack([centroids[list(INTERESTS_TOPICS)].mean(axis=0), centroids[list(INTERESTS_TOPICS)]])
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    for name, clicks in (("bench", 30), ("new", 0)):
        user = create_user(db, name, text)
        db.execute(
            "UPDATE users SET interests_key = ?, interests_vec = ? WHERE id = ?",
            [interests_key(MODEL, text), vectors.tobytes(), user["id"]],
        )
        ids = rng.choice(n, size=clicks, replace=False) + 1
        for k, item_id in enumerate(ids.tolist()):
            record_click(db, user["id"], item_id, k < 20, "ui")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    tmp.rename(path)


PROBE = r"""
import json, resource, statistics, sys, time
t0 = time.perf_counter()
from hermes.storage.db import get_db
from hermes.tools import call_tool, collect_tools
db = get_db(sys.argv[1])
list_feed = collect_tools()["list_feed"]
t1 = time.perf_counter()
first = call_tool(db, list_feed, {"user": "bench", "limit": 20})
t2 = time.perf_counter()
assert first["ok"] and len(first["items"]) == 20, first["message"]
torch = "torch" in sys.modules

def median_ms(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000

import numpy as np
from hermes.embed import get_embedder
from hermes.ranking.matrix import get_matrix
from hermes.ranking.interests import interests_vectors
from hermes.ranking.rank import rank_items
from hermes.storage.records import require_user
runs = int(sys.argv[2])
user, new = require_user(db, "bench"), require_user(db, "new")
out = {"n": int(sys.argv[3]), "startup_s": t1 - t0, "first_s": t2 - t1, "torch_imported": torch}
out["list_feed_ms"] = median_ms(lambda: call_tool(db, list_feed, {"user": "bench", "limit": 20}), runs)
out["list_feed_new_ms"] = median_ms(lambda: call_tool(db, list_feed, {"user": "new", "limit": 20}), runs)
out["rank_items_ms"] = median_ms(lambda: rank_items(db, user, limit=20), runs)
# After each new click what it changed is updated (classifier refit and one blocked pass over
# the matrix with a new like's column; the click's keys in preference; affinity's top-k);
# the profile stays cached.
from hermes.storage.clicks import record_click
rng = np.random.default_rng(1)
n_items = int(sys.argv[3])
def click_then_list():
    record_click(db, user["id"], int(rng.integers(1, n_items + 1)), bool(rng.random() < 0.6), "ui")
    start = time.perf_counter()
    call_tool(db, list_feed, {"user": "bench", "limit": 20})
    return time.perf_counter() - start
out["after_click_ms"] = statistics.median(click_then_list() for _ in range(runs)) * 1000
embedder = get_embedder()
held = get_matrix(db, embedder.name, embedder.dimension)
out["storage"] = held.storage
out["matrix_mb"] = held.nbytes / 2**20
q = interests_vectors(db, user, embedder)[0]
if held.storage == "int8":
    # The floor is float32 numpy: its matrix is loaded after the RSS reading (it would
    # count in it), by the float32 storage's own load (chunks from SQLite; no snapshot
    # written for it).
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    import os
    from hermes.ranking import matrix as matrix_mod, matrix_store
    os.environ["HERMES_MATRIX"] = "float32"
    matrix_store.save_later = lambda *a, **k: None
    del held
    matrix_mod.clear_cache()
    M = get_matrix(db, embedder.name, embedder.dimension).vectors
else:
    M = held.vectors
    del held

def bare():
    s = M @ q
    top = np.argpartition(-s, 20)[:20]
    return top[np.argsort(-s[top])]

out["bare_ms"] = median_ms(bare, runs)
out.setdefault("peak_rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
out["torch_imported"] = out["torch_imported"] or "torch" in sys.modules
# The floor of a fresh process's first call: reading the snapshot's arrays alone (after the
# RSS reading: these copies would count in it).
from hermes.ranking import matrix_store
from hermes.ranking.matrix import db_file
snapshot = matrix_store.snapshot_path(db_file(db), embedder.name, out["storage"])
if snapshot is not None and snapshot.exists():
    del M
    reads = []
    for _ in range(3):  # the median of three: one read alone moved 0.13-1.1 s at 1M
        start = time.perf_counter()
        arrays = matrix_store.read_arrays(snapshot)
        reads.append(time.perf_counter() - start)
        del arrays
    out["snapshot_load_s"] = statistics.median(reads)
print(json.dumps(out))
"""


def measure(path: Path, n: int, runs: int, storage: str = "auto") -> dict:
    """Two fresh processes on a copy of the database (the probe adds clicks): the first
    with no matrix snapshot (reads every embedding from SQLite, then writes the snapshot),
    the second starting from that snapshot and from the database as the first left it — as
    the next command after the last one does (the score columns the first stored for its
    last clicks are there to read: hermes.ranking.column_store)."""
    import shutil

    env = {**os.environ, "HERMES_LOAD_ENTRYPOINTS": "0", "HERMES_HOME": str(CACHE / "home")}
    env.pop("HERMES_EMBEDDER", None)  # the real default: MiniLM (never loaded: vectors stored)
    env["HERMES_MATRIX"] = storage
    work = path.with_name(f"work-{path.name}")
    shutil.rmtree(f"{work}-matrix", ignore_errors=True)
    shutil.copyfile(path, work)
    results = []
    for _ in range(2):
        # the database copy's writeback would otherwise stall the probe's reads (imports
        # took 6-7 s instead of 1 in such runs)
        os.sync()
        _page_in(Path(f"{work}-matrix"))
        out = subprocess.run(
            [sys.executable, "-c", PROBE, str(work), str(runs), str(n)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode:
            raise SystemExit(out.stderr)
        results.append(json.loads(out.stdout))
    cold, warm = results
    warm["first_cold_s"] = cold["first_s"]
    warm["peak_rss_cold_mb"] = cold["peak_rss_mb"]
    warm["torch_imported"] = cold["torch_imported"] or warm["torch_imported"]
    for stale in (work, Path(f"{work}-wal"), Path(f"{work}-shm")):
        stale.unlink(missing_ok=True)
    shutil.rmtree(f"{work}-matrix", ignore_errors=True)
    return warm


def _page_in(folder: Path) -> None:
    """Read the snapshot once before the process that starts from it: its first call and
    its floor (reading the arrays, timed at the end of the same process) both find the file
    in the page cache. Copying the multi-GB database just before evicts it otherwise, and
    only the first call paid for the disk. The stored score columns too: the process that
    wrote them just left them in the page cache, as a user's previous command does."""
    for path in folder.rglob("*") if folder.exists() else ():
        if not path.is_file():
            continue
        with open(path, "rb") as f:
            while f.read(64 << 20):
                pass


def table(results: list[dict]) -> str:
    lines = [
        "| items | list_feed, warm (median) | right after a new click | persona without clicks | "
        "bare numpy `M @ q` + top-20 | warm / bare | after click / bare | first call, fresh "
        "process (snapshot) | reading the snapshot's arrays alone | first call / reading | "
        "first call, fresh process (no snapshot) | torch imported | matrix storage | peak RSS, "
        "from the snapshot / first load from SQLite |",
        "| --- |" + " --- |" * 13,
    ]
    for r in results:
        lines.append(
            f"| {r['n']:,} | {r['list_feed_ms']:.1f} ms | {r['after_click_ms']:.1f} ms | "
            f"{r['list_feed_new_ms']:.1f} ms | {r['bare_ms']:.1f} ms | "
            f"{r['list_feed_ms'] / r['bare_ms']:.1f}× | {r['after_click_ms'] / r['bare_ms']:.1f}× | "
            f"{r['first_s']:.2f} s (+{r['startup_s']:.2f} s imports) | "
            f"{r.get('snapshot_load_s', float('nan')):.2f} s | "
            f"{r['first_s'] / r.get('snapshot_load_s', float('nan')):.1f}× | "
            f"{r['first_cold_s']:.2f} s | {'yes' if r['torch_imported'] else 'no'} | "
            f"{r.get('storage', 'float32')} ({r.get('matrix_mb', float('nan')):.0f} MB) | "
            f"{r['peak_rss_mb']:.0f} MB / {r['peak_rss_cold_mb']:.0f} MB |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--write", action="store_true")
    ap.add_argument(
        "--matrix",
        default="auto",
        choices=("auto", "float32", "int8"),
        help="HERMES_MATRIX for the probes (the matrix storage; auto: by size)",
    )
    args = ap.parse_args(argv)
    CACHE.mkdir(exist_ok=True)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        path = CACHE / f"rank-{n}-v{FORMAT}.db"
        if not path.exists():
            print(f"building {path.name} …", file=sys.stderr, flush=True)
            build(path, n)
        results.append(measure(path, n, args.runs, args.matrix))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    text = table(results)
    print(text)
    if args.write:
        write_results(text, argv if argv is not None else sys.argv[1:])
    return 0


def write_results(text: str, argv: list[str]) -> None:
    path = HERE / "results" / "ranking.md"
    start, end = "<!-- speed:start -->", "<!-- speed:end -->"
    command = "python benchmarks/bench_rank.py " + " ".join(a for a in argv if a != "--write")
    block = f"{start}\nCommand: `{command.strip()}`\n\n{text}\n{end}"
    current = path.read_text() if path.exists() else f"# Ranking\n\n{start}\n{end}\n"
    if start not in current:
        current += f"\n{start}\n{end}\n"
    head, rest = current.split(start, 1)
    path.write_text(head + block + rest.split(end, 1)[1])


if __name__ == "__main__":
    raise SystemExit(main())
