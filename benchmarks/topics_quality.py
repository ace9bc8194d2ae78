"""How well the digest's topics split a window, scored against arXiv's fine categories.

    .venv/bin/python benchmarks/topics_quality.py [--windows 40] [--tune] [--write]

Archives (benchmarks/topics_data.py): the papers of one archive — math, cond-mat, hep,
astro-ph — as one uncategorised feed each (keyphrases from the built-in tagger, vectors
from all-MiniLM-L6-v2), and the whole mix of 2,000 papers as one feed. The papers are split
in two halves by a hash of their arXiv id: parameters are chosen on windows of half A
(``--tune`` prints the grid), figures are reported on windows of half B.

A window is 30 papers drawn at random (seeded) from one half of an archive, grouped by
``hermes.topics.window_topics.group`` as the digest groups its best 30. Scores, over the windows:
topics per window, purity (each topic counted as its most common category, over the
clustered items), adjusted mutual information (scikit-learn) of topics against categories
over the clustered items, the share unclustered and the share in named topics. Labels are
the fine categories (``primary_category``: math.AG, cond-mat.str-el, hep-th …; astro-ph
had no sub-categories in 2007, so it is shown, not scored); the mix is scored against its
archives (math, astro-ph, hep …) and its fine categories. ``before`` is the digest of
before issue 31: each item assigned to its community of the archive's tag graph.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import pickle
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ["HERMES_EMBEDDER"] = "hash"  # nothing here embeds: vectors come from the cache

import numpy as np  # noqa: E402
import topics_data  # noqa: E402

FIELDS = ("math", "cond-mat", "hep", "astro-ph")
WINDOW = 30
#: the grid ``--tune`` prints on half A (SETTLE "links": the previous round's overlap, the
#: mean strength of an item's links on the window's kNN graph; "spread": Ward's measure)
GRID = {"SETTLE": ("links", "spread"), "ARCHIVE_BLEND": (0.0, 0.3, 0.5), "MAX_ALONE": (0.15, 0.17)}


def half(paper: dict) -> str:
    return "A" if hashlib.sha256(paper["arxiv_id"].encode()).digest()[0] % 2 == 0 else "B"


class Archive:
    """One archive in a fresh database, with what the grouping reads of its items."""

    def __init__(self, name: str, papers, vectors, proposals, workdir: Path):
        from hermes.storage.db import get_db
        from hermes.text.tags import parse_tags
        from hermes.topics import tag_graph

        self.name, self.papers = name, papers
        db = get_db(workdir / f"{name}.db")
        ids = topics_data.build_archive(db, papers, vectors, proposals)
        self.graph = tag_graph.build_graph(db)
        tags = dict(db.execute("SELECT id, tags FROM items").fetchall())
        self.tags = [parse_tags(tags[i]) for i in ids]
        self.vectors, self.ids, self.db = vectors, ids, db

    def window_items(self, rows: list[int]):
        """The window's items as the digest gives them: each vector read in the context of
        the whole archive (both halves, as the ranking's matrix holds every item; no
        category is read), ``window_topics.in_archive``."""
        from hermes.topics.window_topics import WindowItem, in_archive

        ids = [self.ids[r] for r in rows]
        row_of = dict(zip(ids, rows))
        vectors = in_archive(
            {i: self.vectors[row_of[i]] for i in ids},
            np.asarray(self.ids),
            lambda w: w @ self.vectors.T,
            lambda idx: self.vectors[idx],
        )
        return [WindowItem(i, self.tags[row_of[i]], 1, vectors[i]) for i in ids]


class Cached:
    """An :class:`Archive` as the grouping reads it (graph, tags, vectors, ids), kept on
    disk (benchmarks/.cache, gitignored) so a second run builds no database."""

    def __init__(self, name, papers, graph, tags, vectors, ids):
        self.name, self.papers, self.graph = name, papers, graph
        self.tags, self.vectors, self.ids = tags, vectors, ids

    window_items = Archive.window_items


def _cache_key(proposals) -> str:
    """What the archives are built from: the proposals and the core's code that keeps tags
    and builds the graph."""
    root = HERE.parent / "hermes"
    h = hashlib.sha256(json.dumps(proposals, sort_keys=True).encode())
    for part in ("topics/tag_graph.py", "ingest/tagging.py", "text/tags.py", "text/language.py"):
        h.update((root / part).read_bytes())
    return h.hexdigest()[:16]


def load_archives(papers, vectors, proposals) -> dict[str, Cached]:
    from hermes.topics.tag_graph import TagGraph

    path = HERE / ".cache" / f"topics_archives_{_cache_key(proposals)}.pkl"
    if path.exists():
        stored = pickle.loads(path.read_bytes())
    else:
        tmp = Path(tempfile.mkdtemp(prefix="hermes-topics-quality-"))
        os.environ["HERMES_HOME"] = str(tmp)
        stored = {}
        for name in (*FIELDS, "mix"):
            rows = [k for k, p in enumerate(papers) if name == "mix" or p["topic"] == name]
            a = Archive(name, [papers[k] for k in rows], vectors[rows], [proposals[k] for k in rows], tmp)
            stored[name] = (rows, a.graph.to_json(), a.tags, a.ids)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(stored))
    return {
        name: Cached(name, [papers[k] for k in rows], TagGraph.from_json(graph), tags, vectors[rows], ids)
        for name, (rows, graph, tags, ids) in stored.items()
    }


def windows(archive: Archive, which: str, n: int, seed: int = 0) -> list[list[int]]:
    rows = [k for k, p in enumerate(archive.papers) if half(p) == which]
    rng = random.Random(f"{archive.name}:{which}:{seed}")
    return [sorted(rng.sample(rows, min(WINDOW, len(rows)))) for _ in range(n)]


def score(groups: dict[int, str | None], truth: dict[int, str]) -> dict:
    """``groups``: item id -> topic label (None: unclustered); ``truth``: item id -> class."""
    from sklearn.metrics import adjusted_mutual_info_score

    clustered = [i for i, g in groups.items() if g is not None]
    topics: dict[str, list[str]] = {}
    for i in clustered:
        topics.setdefault(groups[i], []).append(truth[i])
    purity = sum(max(map(c.count, set(c))) for c in topics.values()) / len(clustered) if clustered else 0.0
    ami = (
        adjusted_mutual_info_score([truth[i] for i in clustered], [groups[i] for i in clustered])
        if len(topics) > 1
        else 0.0
    )
    return {
        "topics": len(topics),
        "purity": purity,
        "ami": ami,
        "unclustered": 1 - len(clustered) / len(groups),
        "named": sum(len(c) for label, c in topics.items() if label.partition(":")[2]) / len(groups),
    }


def grouped_now(archive: Archive, rows: list[int]) -> dict[int, str | None]:
    from hermes.topics.window_topics import group

    result = group(archive.graph, archive.window_items(rows))
    out: dict[int, str | None] = dict.fromkeys((archive.ids[r] for r in rows), None)
    for k, topic in enumerate(result.topics):
        for i in topic.members:  # one key per topic: two topics of one label stay two
            out[i] = f"{k}:{topic.label}"
    return out


def grouped_before(archive: Archive, rows: list[int]) -> dict[int, str | None]:
    out: dict[int, str | None] = {}
    for r in rows:
        community, _ = archive.graph.assign(archive.tags[r])
        out[archive.ids[r]] = None if community is None else f"{community.key}:{community.label}"
    return out


def measure(archive: Archive, which: str, n: int, method, classes) -> dict:
    runs = []
    for rows in windows(archive, which, n):
        truth = {archive.ids[r]: classes(archive.papers[r]) for r in rows}
        runs.append(score(method(archive, rows), truth))
    return {k: statistics.mean(r[k] for r in runs) for k in runs[0]} | {"min_topics": min(r["topics"] for r in runs)}


def fine(paper):
    return paper["primary_category"]


def coarse(paper):
    return paper["topic"]


def setting(values: dict) -> None:
    from hermes.topics import window_topics

    for name, value in values.items():
        setattr(window_topics, name, value)


def tune(archives: dict[str, Archive], n: int) -> None:
    """Print the grid on half A: each field's purity (against its fine categories), the
    one-field means, and the mix (against its archives)."""
    print(
        f"| {' | '.join(GRID)} | math | cond-mat | hep | one field: topics (fewest) | AMI | "
        "unclustered | mix: topics | purity | AMI | unclustered |"
    )
    print("|" + "---|" * (len(GRID) + 10))
    for combo in itertools.product(*GRID.values()):
        setting(dict(zip(GRID, combo)))
        one = [measure(archives[f], "A", n, grouped_now, fine) for f in FIELDS if f != "astro-ph"]
        mix = measure(archives["mix"], "A", n, grouped_now, coarse)
        mean = {k: statistics.mean(r[k] for r in one) for k in one[0]}
        print(
            f"| {' | '.join(map(str, combo))} | "
            + " | ".join(f"{r['purity']:.2f}" for r in one)
            + f" | {mean['topics']:.1f} ({min(r['min_topics'] for r in one)}) | "
            f"{mean['ami']:.2f} | {mean['unclustered']:.0%} | {mix['topics']:.1f} | "
            f"{mix['purity']:.2f} | {mix['ami']:.2f} | {mix['unclustered']:.0%} |",
            flush=True,
        )


def report(archives: dict[str, Archive], n: int, which: str = "B") -> str:
    lines = [
        f"Windows of {WINDOW} papers, {n} per archive, drawn from half {which} (parameters were "
        "chosen on half A). Means over the windows; purity and AMI over the clustered items.",
        "",
        "| archive (scored against) | method | topics per window (fewest) | purity | AMI | "
        "unclustered | in named topics |",
        "|---|---|---|---|---|---|---|",
    ]
    cases = [
        (f, f"{f} ({'fine categories' if f != 'astro-ph' else 'no sub-categories: not scored'})", fine) for f in FIELDS
    ]
    cases += [("mix", "mix of 2,000 (archives)", coarse), ("mix", "mix of 2,000 (fine categories)", fine)]
    for name, title, classes in cases:
        for method, fn in (("before", grouped_before), ("now", grouped_now)):
            m = measure(archives[name], which, n, fn, classes)
            scored = name != "astro-ph"
            lines.append(
                f"| {title} | {method} | {m['topics']:.1f} ({m['min_topics']}) | "
                f"{m['purity']:.2f} | {m['ami']:.2f} | {m['unclustered']:.0%} | {m['named']:.0%} |"
                if scored
                else f"| {title} | {method} | {m['topics']:.1f} ({m['min_topics']}) | – | – | "
                f"{m['unclustered']:.0%} | {m['named']:.0%} |"
            )
    return "\n".join(lines)


def examples(archives: dict[str, Archive]) -> str:
    """The first half-B window of each archive: its topics, as a reader sees them."""
    from hermes.topics.window_topics import group

    out = ["", "One window of each archive (half B), topics with their items' categories:", ""]
    for name, archive in archives.items():
        rows = windows(archive, "B", 1)[0]
        by_id = {archive.ids[r]: archive.papers[r] for r in rows}
        result = group(archive.graph, archive.window_items(rows))
        parts = []
        for topic in result.topics:
            cats = ", ".join(
                f"{c} {n}"
                for c, n in _counts(fine(by_id[i]) if name != "mix" else coarse(by_id[i]) for i in topic.members)
            )
            parts.append(f"“{topic.label}” ({len(topic.members)}: {cats})")
        out.append(f"- **{name}**: " + "; ".join(parts) + f"; unclustered {len(result.unclustered)}")
    return "\n".join(out)


def _counts(values):
    from collections import Counter

    return Counter(values).most_common()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", type=int, default=40)
    ap.add_argument("--tune", action="store_true", help="print the parameter grid on half A")
    ap.add_argument("--write", action="store_true", help="append to benchmarks/results/topics.md")
    args = ap.parse_args(argv)
    started = time.time()
    papers = topics_data.load_papers()
    vectors, proposals = topics_data.vectors_and_proposals(papers)
    archives = load_archives(papers, vectors, proposals)
    if args.tune:
        tune(archives, args.windows)
        return 0
    table = (
        report(archives, args.windows)
        + "\n"
        + examples(archives)
        + "\n\nThe choosing half, the same way:\n\n"
        + report(archives, args.windows, "A")
    )
    print(table)
    print(f"\n{time.time() - started:.0f} s", file=sys.stderr)
    if args.write:
        command = f"python benchmarks/topics_quality.py --windows {args.windows}"
        path = HERE / "results" / "topics_quality.md"
        path.write_text(
            f"# Topics of a window against arXiv's categories\n\nCommand: `{command}`\n\n{table}\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
