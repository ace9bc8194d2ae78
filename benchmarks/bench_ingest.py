"""Ingest throughput on the bundled sample feeds with the real model, and the cost of
re-ingesting unchanged feeds over loopback HTTP.

    .venv/bin/python benchmarks/bench_ingest.py [--runs 3] [--feeds 50]
    .venv/bin/python benchmarks/bench_ingest.py --fresh 1000 [--runs 3]   # issue 36
    .venv/bin/python benchmarks/bench_ingest.py --resident 256 [--runs 3]  # issue 36

``--fresh N``: ``hermes ingest`` of N new abstracts (sentences of the bundled arXiv samples'
abstracts recombined into N distinct ones of the samples' lengths, one local RSS file) into a
new database, a fresh process timed from spawn to exit, with the default settings (the real
model, ``auto``); beside it, in the same round, the warm rate of the path ``auto`` takes on
the same texts (a child of its own, model loaded and warmed up, one ``embed`` call). The
figure is the ingest's rate over the warm rate, in wall and CPU time, and which model
libraries the ingest process loaded (one path, not both).

``--resident N``: the background refresh's resident worker (``hermes web`` / ``serve``)
refreshing a feed with N new abstracts each time, ``--runs`` + 1 refreshes in one worker;
the second and later refreshes' CPU time beside the warm rate on the same texts.

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

from datetime import UTC

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
    return {
        "load": load,
        "wall": wall,
        "embed": embed,
        "items": items,
        "share": statistics.median(r[1] / r[0] for r in rows),
        "rate": statistics.median(r[2] / r[0] for r in rows),
        "feeds": len(sample_feed_paths()),
    }


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


def fresh_feed(path: Path, n: int, seed: int = 0, prefix: str = "") -> None:
    """An RSS file of ``n`` distinct abstracts made of the sample arXiv abstracts' sentences."""
    import random
    import re
    from datetime import datetime
    from xml.sax.saxutils import escape

    import feedparser

    papers = {}
    for sample in sample_feed_paths():
        if "arxiv" in sample.name:
            for e in feedparser.parse(str(sample)).entries:
                papers.setdefault(e.get("id"), (e.title, re.sub(r"<[^>]+>", " ", e.get("summary", ""))))
    rng = random.Random(seed)
    sentences = [x.strip() for _, text in papers.values() for x in re.split(r"(?<=\.)\s+", text) if x.strip()]
    lengths = [len(text) for _, text in papers.values()]
    titles = [title for title, _ in papers.values()]
    now = datetime.now(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")
    items = []
    for k in range(n):
        want, text = rng.choice(lengths), []
        while sum(len(x) + 1 for x in text) < want:
            text.append(rng.choice(sentences))
        title = f"{rng.choice(titles)} ({k})"
        items.append(
            f"<item><guid>fresh-{prefix}{k}</guid><title>{escape(title)}</title>"
            f"<link>https://bench.example/{prefix}{k}</link><description>{escape(' '.join(text))}"
            f"</description><pubDate>{now}</pubDate></item>"
        )
    path.write_text(
        '<?xml version="1.0"?><rss version="2.0"><channel><title>fresh</title>' + "".join(items) + "</channel></rss>",
        encoding="utf-8",
    )


INGEST = r"""
import sys
from hermes.cli.app import main
sys.argv = ["hermes", "ingest", "--json", "--db", sys.argv[1]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = [m for m in ("torch", "sentence_transformers", "onnxruntime") if m in sys.modules]
print("LOADED " + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""

# the model's warm rate on the same texts, measured as bench_onnx.py measures it
from bench_onnx import WARM  # noqa: E402


def bench_fresh(n: int, runs: int) -> str:
    import json
    import resource
    import subprocess

    from hermes.onnx_embed.choice import DefaultEmbedder

    def child_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def run(argv, env):
        t0, c0 = time.perf_counter(), child_cpu()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(f"{argv[:3]} failed: {done.stderr[-2000:]}")
        return time.perf_counter() - t0, child_cpu() - c0, done

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("HERMES_EMBEDDER", "HERMES_EMBED_BACKEND")}
        env.update(HERMES_HOME=str(tmp / "home"), HF_HUB_OFFLINE="1")
        feed = tmp / "fresh.xml"
        fresh_feed(feed, n)
        capture = tmp / "capture.db"
        db = get_db(capture)
        add_feeds(db, [(str(feed), None)])

        class Capture(HashEmbedder):
            texts: list[str] = []

            def embed(self, texts):
                self.texts.extend(texts)
                return super().embed(texts)

        run_ingest(db, embedder=Capture())
        db.conn.close()
        texts = tmp / "texts.json"
        texts.write_text(json.dumps(Capture.texts))
        assert len(Capture.texts) == n, len(Capture.texts)
        hermes = Path(sys.executable).with_name("hermes")
        run([str(hermes), "model", "prepare"], env)  # the ONNX copy, made once per user
        os.environ["HERMES_HOME"] = env["HERMES_HOME"]
        path = DefaultEmbedder("auto").choose(n)
        for r in range(runs):
            _, _, done = run([sys.executable, "-c", WARM, path, str(texts)], env)
            inner_wall, inner_cpu = json.loads(done.stdout.strip().splitlines()[-1])
            target = tmp / f"ingest-{r}.db"
            db = get_db(target)
            add_feeds(db, [(str(feed), None)])
            db.conn.close()
            wall, cpu, done = run([sys.executable, "-c", INGEST, str(target)], env)
            assert json.loads(done.stdout)["embedded"] == n, done.stdout[-500:]
            loaded = done.stderr.rsplit("LOADED ", 1)[1].strip()
            rows.append(
                {
                    "wall": wall,
                    "cpu": cpu,
                    "warm_wall": inner_wall,
                    "warm_cpu": inner_cpu,
                    "loaded": loaded,
                    "load": os.getloadavg()[0],
                }
            )
            print(f"round {r}: {rows[-1]}", file=sys.stderr)
    med = lambda key: statistics.median(row[key] for row in rows)
    wall_ratio = statistics.median(row["warm_wall"] / row["wall"] for row in rows)
    cpu_ratio = statistics.median(row["warm_cpu"] / row["cpu"] for row in rows)
    loaded = sorted({row["loaded"] for row in rows})
    loads = ", ".join(f"{row['load']:.1f}" for row in rows)
    return "\n".join(
        [
            f"## `hermes ingest` of {n:,} new abstracts, fresh process (median of {runs} rounds)\n",
            "| figure | value | target |",
            "| --- | --- | --- |",
            f"| path `auto` takes at {n:,} texts | {path} | |",
            f"| ingest, spawn to exit | {med('wall'):.1f} s wall, {med('cpu'):.1f} CPU s "
            f"({n / med('wall'):.1f} items/s) | |",
            f"| warm rate of the same path on the same texts (model loaded and warmed up) | "
            f"{med('warm_wall'):.1f} s wall, {med('warm_cpu'):.1f} CPU s ({n / med('warm_wall'):.1f} texts/s) | |",
            f"| ingest rate ÷ warm rate (median of the rounds' ratios), wall / CPU | "
            f"{wall_ratio:.2f}× / {cpu_ratio:.2f}× | ≥ 0.95× |",
            f"| model libraries the ingest process loaded | {'; '.join(loaded) or 'none'} | one path |",
            f"\nload average during the rounds: {loads}; {os.cpu_count()} CPUs, Python {platform.python_version()}",
        ]
    )


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_resident(n: int, runs: int) -> str:
    """The background refresh of ``hermes web`` / ``serve`` (its resident worker, as the
    server runs it: :class:`hermes.ingest.refresher.Refresher` with the default settings
    and the real model) refreshing a local feed that has ``n`` new abstracts each time:
    refresh 0 starts the worker (and loads the model), refreshes 1..runs are the second and
    later ones. Each refresh's CPU time is the worker's own (``/proc``); beside each, in the
    same round, the warm rate of the path the worker embedded with on the same texts (a
    child of its own, as ``--fresh`` measures it)."""
    import json
    import subprocess

    from hermes.ingest.refresher import Refresher

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for key in ("HERMES_EMBEDDER", "HERMES_EMBED_BACKEND"):
            os.environ.pop(key, None)
        os.environ.update(HERMES_HOME=str(tmp / "home"), HF_HUB_OFFLINE="1")
        env = dict(os.environ)
        hermes = Path(sys.executable).with_name("hermes")
        subprocess.run([str(hermes), "model", "prepare"], env=env, check=True, capture_output=True)
        feed, database = tmp / "feed.xml", tmp / "refresh.db"
        fresh_feed(feed, 1, seed=99, prefix="seed-")
        db = get_db(database)
        add_feeds(db, [(str(feed), None)])
        db.conn.close()
        refresher = Refresher(database, 3600, start_delay=3600)
        try:
            for r in range(runs + 1):
                fresh_feed(feed, n, seed=r, prefix=f"r{r}-")
                # the texts this refresh embeds, captured as --fresh captures them
                capture = tmp / f"capture-{r}.db"
                cdb = get_db(capture)
                add_feeds(cdb, [(str(feed), None)])
                texts: list[str] = []

                class Capture(HashEmbedder):
                    def embed(self, batch):
                        texts.extend(batch)
                        return super().embed(batch)

                run_ingest(cdb, embedder=Capture())
                cdb.conn.close()
                assert len(texts) == n, len(texts)
                texts_file = tmp / f"texts-{r}.json"
                texts_file.write_text(json.dumps(texts))
                worker = refresher._worker
                cpu0 = _proc_cpu(worker.pid) if worker is not None and worker.poll() is None else 0.0
                t0 = time.perf_counter()
                refresher._run(due=False)
                wall = time.perf_counter() - t0
                assert refresher.last_error is None, refresher.last_error
                worker = refresher._worker
                cpu = _proc_cpu(worker.pid) - cpu0
                libs = Path(f"/proc/{worker.pid}/maps").read_text()
                path = "torch" if "libtorch" in libs else "onnx"
                loaded = ",".join(m for m, so in (("onnxruntime", "onnxruntime"), ("torch", "libtorch")) if so in libs)
                done = subprocess.run(
                    [sys.executable, "-c", WARM, path, str(texts_file)], env=env, capture_output=True, text=True
                )
                warm_wall, warm_cpu = json.loads(done.stdout.strip().splitlines()[-1])
                rows.append(
                    {
                        "refresh": r,
                        "wall": wall,
                        "cpu": cpu,
                        "warm_wall": warm_wall,
                        "warm_cpu": warm_cpu,
                        "worker": dict(refresher.last_worker or {}),
                        "path": path,
                        "loaded": loaded,
                        "load": os.getloadavg()[0],
                    }
                )
                print(f"refresh {r}: {rows[-1]}", file=sys.stderr)
        finally:
            refresher.stop()
    later = rows[1:]
    ratio = statistics.median(row["warm_cpu"] / row["cpu"] for row in later)
    wall_ratio = statistics.median(row["warm_wall"] / row["wall"] for row in later)
    lines = [
        f"## The resident refresher: refreshes of {n:,} new abstracts each (refresh 0 starts the worker)\n",
        "| refresh | load | worker (pid, refreshes served) | refresh CPU s (wall s) | warm rate, same texts, CPU s (wall s) "
        "| warm ÷ refresh, CPU (wall) | model libraries in the worker |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        w = row["worker"]
        lines.append(
            f"| {row['refresh']} | {row['load']:.1f} | {w.get('pid')}, {w.get('served')} | {row['cpu']:.2f} ({row['wall']:.1f}) "
            f"| {row['warm_cpu']:.2f} ({row['warm_wall']:.1f}) | {row['warm_cpu'] / row['cpu']:.2f}× "
            f"({row['warm_wall'] / row['wall']:.2f}×) | {row['loaded']} |"
        )
    lines.append(f"| median of refreshes 1–{runs} | | | | | **{ratio:.2f}×** ({wall_ratio:.2f}×) | target ≥ 0.95× |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--feeds", type=int, default=50)
    ap.add_argument("--fresh", type=int, metavar="N", help="only the fresh-process ingest of N abstracts")
    ap.add_argument(
        "--resident",
        type=int,
        metavar="N",
        help="only the resident refresher: --runs + 1 refreshes of N new abstracts each in one worker",
    )
    args = ap.parse_args(argv)
    if args.resident:
        print(bench_resident(args.resident, args.runs))
        return
    if args.fresh:
        print(bench_fresh(args.fresh, args.runs))
        return
    s = bench_samples(args.runs)
    u = bench_unchanged(args.feeds, max(5, args.runs))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"median of {args.runs} runs, fresh database each; load average after: {load}\n"
    )
    print("| measure | value |")
    print("| --- | --- |")
    print(
        f"| sample feeds ingested | {s['feeds']} feeds, {s['items']} distinct items "
        "(arXiv abstracts, blog posts, podcast episodes) |"
    )
    print(f"| ingest wall time (fetch, parse, store, embed) | {s['wall']:.2f} s |")
    print(f"| throughput | {s['rate']:.1f} items/s |")
    print(f"| time in the embedding model | {s['embed']:.2f} s ({s['share']:.0%} of ingest) |")
    print(f"| everything else (read, parse, normalise, store) | {s['wall'] - s['embed']:.2f} s |")
    print(f"| model load, once per process (torch import + weights) | {s['load']:.2f} s |")
    print(
        f"| re-ingest of {u['feeds']} unchanged feeds over loopback (all 304, nothing parsed "
        f"or embedded) | {u['wall'] * 1000:.0f} ms (min {u['min'] * 1000:.0f}, max {u['max'] * 1000:.0f}) |"
    )


if __name__ == "__main__":
    main()
