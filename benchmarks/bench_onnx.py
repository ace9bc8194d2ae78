"""The ONNX Runtime path against sentence-transformers, in fresh processes as a person meets them.

    .venv/bin/python benchmarks/bench_onnx.py [--runs 5] [--items 256] [--write]

1. First ranking after a persona's interests change: ``hermes persona update`` (not timed),
   then ``hermes feed NAME --all`` in a fresh process, timed from spawn to exit, with the
   default settings (ONNX Runtime). Floor: the same ``hermes feed`` once more, interests
   unchanged (nothing to embed).
2. ``hermes ingest`` of ``--items`` new arXiv abstracts (from the bundled sample listings)
   into a fresh database, fresh process, spawn to exit: the default (``auto``), the other
   path forced, and the floor (``HERMES_EMBEDDER=hash``: fetch, parse, store, tagging, no
   model). Each path is compared with its own throughput: its warm rate on the same texts,
   measured in this process in the same run (model loaded, one ``embed`` call).

Variants alternate within each round so they share the machine's load; medians are
reported. ``--write`` saves the tables to benchmarks/results/onnx_run.md (read with onnx.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # child-process helpers shared with the tests

from process_support import child_env, hermes_command  # noqa: E402

from hermes.embed import HashEmbedder, cpu_has_fast_bf16  # noqa: E402
from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths  # noqa: E402
from hermes.onnx_embed.choice import DefaultEmbedder  # noqa: E402
from hermes.storage.db import get_db  # noqa: E402
from hermes.storage.records import create_user  # noqa: E402

INTERESTS = [
    "quantum error correction and entanglement; decoherence of superconducting qubits",
    "strongly correlated electrons, superconductivity and magnetism in thin films",
    "random walks, graph algorithms and information theory",
    "enzyme kinetics and synchronization in biological networks",
]


def run(args: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{out.stderr}")
    return wall, out.stdout


def children_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write_feed(path: Path, n: int) -> None:
    """An RSS file of ``n`` distinct arXiv papers from the bundled sample listings."""
    import feedparser

    seen, entries = set(), []
    for sample in sample_feed_paths():
        if "arxiv" not in sample.name:
            continue
        for e in feedparser.parse(str(sample)).entries:
            if e.get("id") not in seen:
                seen.add(e.get("id"))
                entries.append(e)
    if len(entries) < n:
        raise SystemExit(f"only {len(entries)} distinct papers in the samples; use --items <= that")
    now = datetime.now(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")
    items = "".join(
        f"<item><guid>bench-{k}-{escape(e.id)}</guid><title>{escape(e.title)}</title>"
        f"<link>{escape(e.get('link', ''))}</link><description>{escape(e.get('summary', ''))}"
        f"</description><pubDate>{now}</pubDate></item>"
        for k, e in enumerate(entries[:n])
    )
    path.write_text(
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>bench</title>{items}</channel></rss>',
        encoding="utf-8",
    )


def new_db(path: Path, feed: Path) -> None:

    db = get_db(path)
    add_feeds(db, [(str(feed), None)])
    db.conn.close()


def ingest_texts(feed: Path, tmp: Path) -> list[str]:
    """The texts ingest embeds for ``feed`` (captured through a stand-in embedder)."""

    class Capture(HashEmbedder):
        texts: list[str] = []

        def embed(self, texts):
            self.texts.extend(texts)
            return super().embed(texts)

    new_db(tmp / "capture.db", feed)
    db = get_db(tmp / "capture.db")
    run_ingest(db, embedder=Capture())
    db.conn.close()
    return Capture.texts


WARM = r"""
import json, sys, time
texts = json.load(open(sys.argv[2]))
if sys.argv[1] == "onnx":
    from hermes.onnx_embed.runtime import OnnxMiniLMEmbedder as Embedder
else:
    from hermes.embed import MiniLMEmbedder as Embedder
embedder = Embedder()
embedder.embed(sorted(texts, key=len)[-64:])  # load, and warm up on the longest batch
start, cpu = time.perf_counter(), time.process_time()
embedder.embed(texts)
print(json.dumps([time.perf_counter() - start, time.process_time() - cpu]))
"""


def warm_rate(path: str, texts_file: Path, env: dict) -> tuple[float, float]:
    """Texts per second of ``path`` with its model loaded and warmed up: one ``embed`` call
    of all the texts (each path sorts them by length and batches 64), in a child process of
    its own (two runtimes in one process leave each other's threads spinning). ``torch`` is
    sentence-transformers at hermes's default precision (bf16 where the CPU has it natively).
    Returns (texts per second of wall time, texts per CPU second of the process)."""
    out = run([sys.executable, "-c", WARM, path, str(texts_file)], env)[1]
    wall, cpu = json.loads(out.strip().splitlines()[-1])
    n = len(json.loads(texts_file.read_text()))
    return n / wall, n / cpu


def bench_interests(tmp: Path, db: Path, env: dict, runs: int) -> dict:

    conn = get_db(db)
    create_user(conn, "bench", INTERESTS[0])
    conn.conn.close()
    hermes = hermes_command()
    feed = [*hermes, "feed", "bench", "--all", "-n", "10", "--json", "--db", str(db)]
    name, floor = "default (ONNX Runtime)", "floor: same command, interests unchanged"
    times = {name: [], floor: []}
    for r in range(runs):
        text = f"{INTERESTS[r % len(INTERESTS)]} (round {r})"
        run([*hermes, "persona", "update", "bench", "--interests", text, "--db", str(db)], env)
        times[name].append(run(feed, env)[0])
        times[floor].append(run(feed, env)[0])
    return {name: (statistics.median(t), t) for name, t in times.items()}


def choose(n: int) -> str:

    return DefaultEmbedder("auto").choose(n)


FLOOR = "floor: HERMES_EMBEDDER=hash (everything but the model)"


def bench_ingest(tmp: Path, feed: Path, texts_file: Path, env: dict, runs: int, n: int) -> dict:
    """Fresh-process ``hermes ingest`` of ``n`` new items, per variant, and each path's warm
    rate, alternating in every round so they share the machine's load. Returns
    ``{"ingest": {name: (walls, path)}, "warm": {path: rates}}``; the ratio of a round is its
    ingest rate over the same round's warm rate of the path the variant embeds with."""
    hermes = hermes_command()
    auto = choose(n)
    variants = {f"default (auto: {auto})": (env, auto)}
    for path in ("onnx", "torch"):
        if path != auto:
            variants[f"HERMES_EMBED_BACKEND={path}"] = ({**env, "HERMES_EMBED_BACKEND": path}, path)
    variants[FLOOR] = ({**env, "HERMES_EMBEDDER": "hash"}, None)
    walls = {name: [] for name in variants}
    cpus = {name: [] for name in variants}
    warm = {"onnx": [], "torch": []}
    warm_cpu = {"onnx": [], "torch": []}
    loads = []
    for r in range(runs):
        for path in warm:
            rate, cpu_rate = warm_rate(path, texts_file, env)
            warm[path].append(rate)
            warm_cpu[path].append(cpu_rate)
        for v, (name, (venv, _)) in enumerate(variants.items()):
            db = tmp / f"ingest-{r}-{v}.db"
            new_db(db, feed)
            before = children_cpu()
            wall, out = run([*hermes, "ingest", "--json", "--db", str(db)], venv)
            cpus[name].append(children_cpu() - before)
            assert json.loads(out)["embedded"] == n, out
            walls[name].append(wall)
            db.unlink()
        loads.append(os.getloadavg()[0])
        print(
            f"round {r}: warm { ({k: round(v[-1], 1) for k, v in warm.items()}) }, "
            f"ingest { ({k: round(v[-1], 1) for k, v in walls.items()}) }, "
            f"cpu { ({k: round(v[-1], 1) for k, v in cpus.items()}) }, "
            f"load {loads[-1]:.1f}",
            file=sys.stderr,
        )
    return {
        "ingest": {name: (walls[name], cpus[name], variants[name][1]) for name in variants},
        "warm": warm,
        "warm_cpu": warm_cpu,
        "loads": loads,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--items", type=int, default=256)
    ap.add_argument("--write", action="store_true", help="save to benchmarks/results/onnx_run.md")
    ap.add_argument(
        "--first-rank-only",
        action="store_true",
        help="only the first ranking after an interests change (a minute, not ten)",
    )
    args = ap.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cache = Path(os.environ.get("HERMES_MODEL_CACHE") or tmp / "models")
        os.environ["HERMES_MODEL_CACHE"] = str(cache)
        os.environ["HERMES_HOME"] = str(tmp / "home")
        env = child_env(tmp / "home", HERMES_EMBEDDER=None, HERMES_MODEL_CACHE=cache)
        prepare, out = run([*hermes_command(), "model", "prepare", "--json"], env)
        exported = json.loads(out)["exported"]
        feed = tmp / "bench.xml"
        write_feed(feed, args.items)
        texts = ingest_texts(feed, tmp)
        print(f"prepared in {prepare:.1f} s (exported: {exported}); {len(texts)} texts", file=sys.stderr)

        texts_file = tmp / "texts.json"
        texts_file.write_text(json.dumps(texts))
        ingest = None if args.first_rank_only else bench_ingest(tmp, feed, texts_file, env, args.runs, args.items)
        db = tmp / "interests.db"
        new_db(db, feed)
        run([*hermes_command(), "ingest", "--db", str(db)], env)
        interests = bench_interests(tmp, db, env, args.runs)
        print(f"interests: {interests}", file=sys.stderr)
    text = report(args, ingest, interests, prepare, exported, load_before)
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "onnx_run.md").write_text(text, encoding="utf-8")


def report(args, ingest, interests, prepare, exported, load_before) -> str:

    lines = [
        "# ONNX Runtime path: fresh-process figures",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_onnx.py --runs {args.runs} --items {args.items}"
        + (" --first-rank-only`" if ingest is None else "`"),
        "",
        f"{datetime.now(UTC):%d %b %Y %H:%M} UTC, {platform.machine()}, {os.cpu_count()} CPUs "
        f"(native bf16: {'yes' if cpu_has_fast_bf16() else 'no'}), Python {platform.python_version()}; "
        f"median of {args.runs} rounds, variants alternating; 1-min load average "
        f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after (the machine is shared: "
        "compare within a table).",
        "",
        f"One-time `hermes model prepare`: {prepare:.1f} s"
        + ("" if exported else " (the ONNX copy was already cached)"),
        "",
        "## First ranking after a persona's interests change (`hermes feed NAME --all`, fresh process)",
        "",
        "| path | median | runs (s) | / floor |",
        "| --- | ---: | --- | ---: |",
    ]
    floor = interests["floor: same command, interests unchanged"][0]
    for name, (median, runs) in interests.items():
        lines.append(f"| {name} | {median:.2f} s | {', '.join(f'{x:.2f}' for x in runs)} | {median / floor:.2f}× |")
    if ingest is None:
        return "\n".join([*lines, "", "Target: ≤ 1.5 s.", ""])
    lines += [
        "",
        "Target: ≤ 1.5 s.",
        "",
        f"## `hermes ingest` of {args.items} new arXiv abstracts, fresh process and database",
        "",
        "The model's own throughput is the warm rate of the same path on the same texts,",
        "measured in this run, in each round beside the ingest runs: a child process loads",
        "the model, warms up on 64 texts, then times one `embed` call of all the texts (sorted",
        "by length, batches of 64, as both paths do). The ratio is taken per round and its",
        "median reported.",
        "",
        "| path | texts/s warm, median | rounds | texts per CPU-second, median |",
        "| --- | ---: | --- | ---: |",
        *[
            f"| {path} | {statistics.median(r):.1f} | {', '.join(f'{x:.1f}' for x in r)} | "
            f"{statistics.median(ingest['warm_cpu'][path]):.1f} |"
            for path, r in ingest["warm"].items()
        ],
        "",
        f"1-min load average after each round: {', '.join(f'{x:.1f}' for x in ingest['loads'])}.",
        "",
        "| `hermes ingest` | median | runs (s) | × its own path's warm rate, wall (per round) | "
        "× in CPU time (per round) | CPU s beyond the embedding |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for name, (walls, cpus, path) in ingest["ingest"].items():
        median = statistics.median(walls)
        if path:
            ratios = [args.items / w / rate for w, rate in zip(walls, ingest["warm"][path])]
            cpu_ratios = [args.items / c / rate for c, rate in zip(cpus, ingest["warm_cpu"][path])]
            beyond = [c - args.items / rate for c, rate in zip(cpus, ingest["warm_cpu"][path])]
            own = f"{statistics.median(ratios):.2f}× ({', '.join(f'{x:.2f}' for x in ratios)})"
            own_cpu = f"{statistics.median(cpu_ratios):.2f}× ({', '.join(f'{x:.2f}' for x in cpu_ratios)})"
            cost = f"{statistics.median(beyond):.1f} s"
        else:
            own = own_cpu = "—"
            cost = f"{statistics.median(cpus):.1f} s (all of it)"
        lines.append(
            f"| {name} | {median:.2f} s | {', '.join(f'{x:.2f}' for x in walls)} | {own} | {own_cpu} | {cost} |"
        )
    lines += ["", "Target: ≥ 0.95× the model's own throughput.", ""]
    lines += crossover(ingest, args.items)
    return "\n".join(lines) + "\n"


def crossover(ingest: dict, n: int) -> list[str]:
    """Where `auto` should switch an ingest run to torch: each path's fresh-process cost is
    a fixed start-up F (the ingest's seconds beyond embedding its texts at the warm rate)
    plus n texts at the warm rate; torch wins from n* = (F_torch - F_onnx) / (c_onnx - c_torch)."""
    by_path = {path: (walls, cpus) for walls, cpus, path in ingest["ingest"].values() if path}
    if set(by_path) != {"onnx", "torch"}:
        return []
    out = [
        "## Where `auto` should switch to torch (fixed start-up + texts at the warm rate)",
        "",
        "| measure | ONNX fixed s | ONNX s/text | torch fixed s | torch s/text | torch wins from |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, k, rates in (("wall", 0, ingest["warm"]), ("CPU", 1, ingest["warm_cpu"])):
        fixed, per = {}, {}
        for path, values in by_path.items():
            per[path] = 1 / statistics.median(rates[path])
            fixed[path] = statistics.median(v - n / r for v, r in zip(values[k], rates[path]))
        gain = per["onnx"] - per["torch"]
        at = f"{(fixed['torch'] - fixed['onnx']) / gain:.0f} texts" if gain > 0 else "never"
        out.append(
            f"| {label} | {fixed['onnx']:.1f} | {per['onnx']:.3f} | {fixed['torch']:.1f} | {per['torch']:.3f} | {at} |"
        )
    return [*out, ""]


if __name__ == "__main__":
    main()
