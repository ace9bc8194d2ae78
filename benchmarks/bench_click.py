"""A click at scale (issue 36): ``record_feedback`` followed by ``list_feed``, against the floor.

On the synthetic archives of benchmarks/bench_rank.py (built there and kept in
benchmarks/.cache/), in one process per size: the persona ``bench`` (20 likes, 10
dislikes, every component active) gets a new like or dislike through ``record_feedback``,
then ``list_feed`` (limit 20) is timed; the floor is a bare numpy ``M @ q`` + top-20 over
the same float32 matrix, timed in the same rounds (alternated with the clicks). Each figure
is a median over ``--runs`` rounds, in CPU seconds of the process (user + sys: the machine
is shared, wall time is not a measure there) and in wall seconds.

    .venv/bin/python benchmarks/bench_click.py --sizes 100000 --runs 15
    .venv/bin/python benchmarks/bench_click.py --sizes 100000 --profile   # where it goes
    .venv/bin/python benchmarks/bench_click.py --sizes 1000000 --matrix int8

``--full`` switches the incremental click path off (``score_cache.INCREMENTAL = False``): every
behaviour column recomputed over every row after a click, as before issue 36.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_rank import CACHE, FORMAT, build  # noqa: E402

PROBE = r"""
import cProfile, io, json, os, pstats, resource, statistics, sys, time
import numpy as np
from hermes.storage.db import get_db
from hermes.tools import call_tool, collect_tools
path, runs, n_items, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
from hermes.builtins import score_cache
if mode == "full":
    score_cache.INCREMENTAL = False
elif os.environ.get("BENCH_CLICK_OVERLAP") != "1":
    score_cache.DEFER = True  # timed apart: the exact scores' pass runs in settle() below
db = get_db(path)
tools = collect_tools()
list_feed, feedback = tools["list_feed"], tools["record_feedback"]
first = call_tool(db, list_feed, {"user": "bench", "limit": 20})
assert first["ok"] and len(first["items"]) == 20, first["message"]
for _ in range(2):
    call_tool(db, list_feed, {"user": "bench", "limit": 20})

from hermes.embed import get_embedder
from hermes.ranking.interests import interests_vectors
from hermes.ranking.matrix import get_matrix
from hermes.storage.records import require_user
embedder = get_embedder()
held = get_matrix(db, embedder.name, embedder.dimension)
user = require_user(db, "bench")
q = interests_vectors(db, user, embedder)[0]
if held.storage == "int8":
    M = np.vstack([held.approx_rows(np.arange(s, min(s + 50000, len(held))))
                   for s in range(0, len(held), 50000)])
else:
    M = held.vectors
del held

def bare():
    s = M @ q
    top = np.argpartition(-s, 20)[:20]
    return top[np.argsort(-s[top])]

def timed(fn):
    c, w = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c, time.perf_counter() - w

rng = np.random.default_rng(1)
clicked = set()
def click():
    while True:
        item = int(rng.integers(1, n_items + 1))
        if item not in clicked:
            clicked.add(item)
            break
    answer = call_tool(db, feedback, {"user": "bench", "item_id": item,
                                      "liked": bool(rng.random() < 0.6)})
    assert answer["ok"], answer

profile = cProfile.Profile(time.process_time) if mode == "profile" else None
after, floor, warm, background, overlap = [], [], [], [], []
for _ in range(runs):
    floor.append(timed(bare))
    click()
    if profile and os.environ.get("BENCH_CLICK_PROFILE") != "warm":
        profile.enable()
    after.append(timed(lambda: call_tool(db, list_feed, {"user": "bench", "limit": 20})))
    if profile:
        profile.disable()
    if profile and os.environ.get("BENCH_CLICK_PROFILE") == "warm":
        profile.enable()
    warm.append(timed(lambda: call_tool(db, list_feed, {"user": "bench", "limit": 20})))
    if profile:
        profile.disable()
    # the person reads the page: the exact scores computed after the ranking are done
    # before the next click (their CPU time, one pass, is reported on its own)
    c = time.process_time()
    score_cache.settle()
    background.append(time.process_time() - c)
    if mode == "incremental":
        shown = [i["id"] for i in call_tool(db, list_feed, {"user": "bench", "limit": 10})["items"]]
        stale, score_cache._STALE = score_cache._STALE, type(score_cache._STALE)()
        score_cache.INCREMENTAL = False
        exact = [i["id"] for i in call_tool(db, list_feed, {"user": "bench", "limit": 10})["items"]]
        score_cache.INCREMENTAL, score_cache._STALE = True, stale
        overlap.append(len(set(shown) & set(exact)))
med = lambda xs, k: statistics.median(x[k] for x in xs) * 1000
out = {"n": n_items, "mode": mode, "runs": runs,
       "after_cpu_ms": med(after, 0), "after_wall_ms": med(after, 1),
       "warm_cpu_ms": med(warm, 0), "warm_wall_ms": med(warm, 1),
       "floor_cpu_ms": med(floor, 0), "floor_wall_ms": med(floor, 1),
       "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
out["settle_cpu_ms"] = statistics.median(background) * 1000
if overlap:
    out["top10_overlap_mean"] = statistics.mean(overlap)
    out["top10_overlap_min"] = min(overlap)
out["after_ratio_cpu"] = out["after_cpu_ms"] / out["floor_cpu_ms"]
out["after_ratio_wall"] = out["after_wall_ms"] / out["floor_wall_ms"]
out["warm_ratio_cpu"] = out["warm_cpu_ms"] / out["floor_cpu_ms"]
if profile:
    s = io.StringIO()
    pstats.Stats(profile, stream=s).sort_stats("cumulative").print_stats(45)
    s2 = io.StringIO()
    pstats.Stats(profile, stream=s2).sort_stats("tottime").print_stats(25)
    print(s.getvalue() + s2.getvalue(), file=sys.stderr)
print(json.dumps(out))
"""


def run(n: int, runs: int, mode: str, storage: str) -> dict:
    path = CACHE / f"rank-{n}-v{FORMAT}.db"
    if not path.exists():
        print(f"building {path.name} …", file=sys.stderr, flush=True)
        CACHE.mkdir(exist_ok=True)
        build(path, n)
    work = path.with_name(f"click-{os.getpid()}-{path.name}")
    shutil.copyfile(path, work)
    env = {**os.environ, "HERMES_LOAD_ENTRYPOINTS": "0", "HERMES_HOME": str(CACHE / "home"), "HERMES_MATRIX": storage}
    env.pop("HERMES_EMBEDDER", None)
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(work), str(runs), str(n), mode],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        for stale in (work, Path(f"{work}-wal"), Path(f"{work}-shm")):
            stale.unlink(missing_ok=True)
        shutil.rmtree(f"{work}-matrix", ignore_errors=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    if mode == "profile":
        print(done.stderr, file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--matrix", default="auto", choices=("auto", "float32", "int8"))
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--full", action="store_true", help="the incremental path off")
    args = ap.parse_args(argv)
    mode = "profile" if args.profile else "full" if args.full else "incremental"
    for n in (int(s) for s in args.sizes.split(",")):
        print(json.dumps(run(n, args.runs, mode, args.matrix)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
