"""Topics for feeds without categories: digest coverage and what tagging costs at ingest.

    .venv/bin/python benchmarks/bench_topics.py [--runs 3] [--write]

With the real all-MiniLM-L6-v2 and the built-in keyphrase tagger, through ``hermes ingest``'s
own path (``run_ingest``) and the ``digest`` tool:

1. arXiv: 300 astro-ph papers (../shared/data/arxiv-2000) rendered as an arXiv-API-to-RSS
   bridge listing (author paragraph, abstract, Published / Comments / PDF lines, no
   ``<category>``; benchmarks/bridge_feeds.py), dated over the last five days. An astronomer
   persona's digest (7 days, top 30): how many of the 30 fall in a named topic.
2. A blog and podcast mix: tests/fixtures/mix/ (two blogs, two podcasts) plus the demo's
   blog and podcast samples, dates shifted so the newest item is from today; same measure
   for a persona whose interests span them.
3. Cost: the listing of 1. ingested into fresh databases with the tagger enabled and
   disabled, alternately, ``--runs`` times each; per-item medians and the share of ingest
   time that tagging adds. The time inside the tagging functions is also measured directly.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.pop("HERMES_EMBEDDER", None)
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import bridge_feeds  # noqa: E402

ASTRONOMER = "galaxy formation, JWST high-redshift galaxies, star formation, reionization"
GENERALIST = (
    "JWST and the first galaxies, exoplanets; quantum computing and quantum error "
    "correction; interpretability of language models; climate science"
)
MIX = sorted((ROOT / "tests" / "fixtures" / "mix").glob("*.xml")) + [
    ROOT / "hermes" / "data" / "samples" / "research-notes-blog.xml",
    ROOT / "hermes" / "data" / "samples" / "physics-conversations-podcast.xml",
]
_RFC822 = re.compile(r"<pubDate>([^<]+)</pubDate>")
_ISO = re.compile(r"<(updated|published)>([^<]+)</\1>")


def shifted(text: str, delta: timedelta) -> str:
    """``text`` with every RSS / Atom date moved by ``delta``."""
    from email.utils import format_datetime, parsedate_to_datetime

    text = _RFC822.sub(
        lambda m: f"<pubDate>{format_datetime(parsedate_to_datetime(m.group(1)) + delta)}</pubDate>", text
    )
    return _ISO.sub(
        lambda m: (
            f"<{m.group(1)}>{(datetime.fromisoformat(m.group(2).replace('Z', '+00:00')) + delta).isoformat()}</{m.group(1)}>"
        ),
        text,
    )


def newest_date(text: str) -> datetime:
    from email.utils import parsedate_to_datetime

    found = [parsedate_to_datetime(d) for d in _RFC822.findall(text)]
    found += [datetime.fromisoformat(d.replace("Z", "+00:00")) for _, d in _ISO.findall(text)]
    return max(found)


def fresh_db(directory: Path, name: str):
    from hermes.storage.db import get_db

    return get_db(directory / f"{name}.db")


def tagger(enabled: bool) -> None:
    from hermes.builtins import default_keyphrases
    from hermes.plugins import get_plugin_manager

    pm = get_plugin_manager()
    present = pm.get_plugin("default_keyphrases") is not None
    if enabled and not present:
        pm.register(default_keyphrases, name="default_keyphrases")
    elif not enabled and present:
        pm.unregister(name="default_keyphrases")


def digest_share(db, persona: str, interests: str) -> dict:
    from hermes_digest.tools import digest

    from hermes.storage.records import create_user

    create_user(db, persona, interests)
    # The top 30 on both sides of the persona's bar (the digest lists those that clear it in
    # topics; below_bar=true adds the rest with the tags that matched a topic, if any).
    result = digest(db, persona, days=7, per_topic=30, limit=30, below_bar=True)
    below = result["below_bar"]["items"]
    above_clustered = sum(t["n_total"] for t in result["topics"])
    clustered = above_clustered + sum(1 for e in below if e["matched_tags"])
    n = result["n_items"] + len(below)
    # The same 30 grouped as one window whatever the bar (the digest groups those that clear
    # it): how a listing of one field splits (issue 31).
    from hermes_digest.tools import group_window

    from hermes.storage.records import item_rows
    from hermes.topics import tag_graph

    ids = (
        [i["id"] for t in result["topics"] for i in t["items"]]
        + [i["id"] for i in result["unclustered"]]
        + [i["id"] for i in below]
    )
    window = group_window(db, tag_graph.get_graph(db), list(item_rows(db, ids).values()))
    return {
        "n": n,
        "clustered": clustered,
        "share": clustered / max(1, n),
        "above": result["n_items"],
        "above_clustered": above_clustered,
        "topics": [(t["label"], t["n_total"]) for t in result["topics"]],
        "window": [(t.label, len(t.members)) for t in window.topics],
        "window_unclustered": len(window.unclustered),
    }


class Timer:
    """Wall and CPU time spent inside the tagging functions of one ingest (they run on
    the ingest's main thread, so that thread's CPU time is theirs)."""

    def __init__(self):
        self.seconds = 0.0
        self.cpu = 0.0

    def wrap(self, module, name):
        real = getattr(module, name)

        def timed(*args, **kwargs):
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return real(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.cpu += time.thread_time() - cpu

        setattr(module, name, timed)
        return lambda: setattr(module, name, real)


def ingest_timed(db, *, tagging: bool) -> tuple[float, float, int, float, float]:
    """(wall seconds of run_ingest, seconds inside tagging, items, CPU seconds of the
    process during run_ingest (every thread: the model's too), CPU seconds inside
    tagging)."""
    from hermes.ingest import store
    from hermes.ingest.pipeline import run_ingest

    tagger(tagging)
    timer = Timer()
    # propose: the tagger itself; apply_proposals: the core's keep-where-it-recurs rule (as
    # the embedding stage calls them, from hermes.ingest.store).
    undo = [timer.wrap(store, "propose"), timer.wrap(store, "apply_proposals")] if tagging else []
    # The model's own time differs between the two paths (embed_tokens vs embed): measured
    # as part of the wall time, so the comparison below includes it.
    start, cpu = time.perf_counter(), time.process_time()
    summary = run_ingest(db)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    for restore in undo:
        restore()
    tagger(True)
    return wall, timer.seconds, sum(s["new"] for s in summary), cpu, timer.cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--papers", type=int, default=300)
    ap.add_argument("--write", action="store_true", help="update benchmarks/results/topics.md")
    args = ap.parse_args(argv)
    started = time.time()
    tmp = Path(tempfile.mkdtemp(prefix="hermes-topics-"))
    os.environ["HERMES_HOME"] = str(tmp / "home")

    from hermes.embed import get_embedder
    from hermes.ingest.pipeline import add_feeds

    # Both paths of the default embedder load before any timing (which one an ingest takes
    # depends on its size: README, "The model, two ways").
    embedder = get_embedder()
    for path in (getattr(embedder, "reference", None), getattr(embedder, "onnx", None), embedder):
        if path is not None and hasattr(path, "load"):
            path.load()
    now = datetime.now(UTC)
    listing = tmp / "astro-ph-bridge.xml"
    papers = bridge_feeds.load("astro-ph", args.papers)
    listing.write_text(bridge_feeds.bridge_rss(papers, "astro-ph search results", now, per_day=60), encoding="utf-8")

    # 1 and 3: the listing, tagger on and off, alternately.
    walls = {True: [], False: []}
    cpus = {True: [], False: []}
    inside: list[float] = []
    inside_cpu: list[float] = []
    arxiv = None
    for run in range(args.runs):
        for tagging in (True, False):
            db = fresh_db(tmp, f"listing-{run}-{int(tagging)}")
            add_feeds(db, [(str(listing), "arXiv astro-ph")])
            wall, tag_s, n, cpu, tag_cpu = ingest_timed(db, tagging=tagging)
            walls[tagging].append(wall / n)
            cpus[tagging].append(cpu / n)
            if tagging:
                inside.append(tag_s / n)
                inside_cpu.append(tag_cpu / n)
                if arxiv is None:
                    arxiv = digest_share(db, "astronomer", ASTRONOMER)
            db.conn.close()
            print(f"run {run} tagging={tagging}: {wall:.1f} s for {n} items", file=sys.stderr, flush=True)

    # 2: the blog and podcast mix.
    mixdir = tmp / "mix"
    mixdir.mkdir()
    texts = {p.name: p.read_text(encoding="utf-8") for p in MIX}
    delta = now - max(newest_date(t) for t in texts.values()) - timedelta(hours=1)
    for name, text in texts.items():
        (mixdir / name).write_text(shifted(text, delta), encoding="utf-8")
    db = fresh_db(tmp, "mix")
    add_feeds(db, [(str(mixdir / name), None) for name in sorted(texts)])
    _, _, n_mix, _, _ = ingest_timed(db, tagging=True)
    mix = digest_share(db, "generalist", GENERALIST)

    on, off = statistics.median(walls[True]), statistics.median(walls[False])
    cpu = (statistics.median(cpus[True]), statistics.median(cpus[False]), statistics.median(inside_cpu))
    table = report(arxiv, mix, n_mix, on, off, statistics.median(inside), cpu, args)
    print(table)
    print(f"\n{time.time() - started:.0f} s in all", file=sys.stderr)
    if args.write:
        write(table, argv if argv is not None else sys.argv[1:])
    return 0


def report(arxiv, mix, n_mix, on, off, inside, cpu, args) -> str:
    def topics(result):
        return "; ".join(f"{label} ({n})" for label, n in result["topics"][:8])

    return "\n".join(
        [
            "| feed set | items | digest top 30 in topics | target | of them clear the bar: in topics | "
            "topics above the bar (items) |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| arXiv astro-ph, bridge-shaped, no categories | {args.papers} | "
            f"{arxiv['clustered']}/{arxiv['n']} ({arxiv['share']:.0%}) | ≥ 80 % (was 0 %) | "
            f"{arxiv['above_clustered']}/{arxiv['above']} | {topics(arxiv)} |",
            f"| blogs and podcasts (6 feeds) | {n_mix} | {mix['clustered']}/{mix['n']} "
            f"({mix['share']:.0%}) | ≥ 60 % | {mix['above_clustered']}/{mix['above']} | {topics(mix)} |",
            "",
            "The same top 30 grouped as one window, whichever side of the bar (the digest groups "
            "the items that clear it):",
            "",
            "| feed set | topics | in topics | topics (items) |",
            "| --- | --- | --- | --- |",
            *(
                f"| {name} | {len(r['window'])} | {r['n'] - r['window_unclustered']}/{r['n']} | "
                + "; ".join(f"{label} ({k})" for label, k in r["window"])
                + " |"
                for name, r in (("arXiv astro-ph", arxiv), ("blogs and podcasts", mix))
            ),
            "",
            f"Ingest cost per item (median of {args.runs} runs of {args.papers} items each, alternating):",
            "",
            "| tagger | ingest per item, wall | inside the tagging functions, wall | tagging's share "
            "of ingest wall time | ingest per item, CPU (all threads) | tagging, CPU | tagging's "
            "share of ingest CPU time |",
            "| --- | --- | --- | --- | --- | --- | --- |",
            f"| enabled | {on * 1000:.1f} ms | {inside * 1000:.2f} ms | {(on - off) / on:+.1%} (difference of "
            f"medians); {inside / on:.1%} (measured inside) | {cpu[0] * 1000:.1f} ms | "
            f"{cpu[2] * 1000:.2f} ms | {(cpu[0] - cpu[1]) / cpu[0]:+.1%} (difference of medians); "
            f"{cpu[2] / cpu[0]:.1%} (measured inside) |",
            f"| disabled | {off * 1000:.1f} ms | – | – | {cpu[1] * 1000:.1f} ms | – | – |",
            "",
            f"1-min load average when the run ended: {os.getloadavg()[0]:.1f}.",
        ]
    )


def write(table: str, argv: list[str]) -> None:
    path = HERE / "results" / "topics.md"
    command = "python benchmarks/bench_topics.py " + " ".join(a for a in argv if a != "--write")
    path.write_text(f"# Topics without categories\n\nCommand: `{command.strip()}`\n\n{table}\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
