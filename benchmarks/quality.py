"""Ranking quality on the labelled arXiv corpus, exactly as ../shared/QUALITY.md specifies.

    .venv/bin/python benchmarks/quality.py                 # full protocol: 45 personas x 3 seeds
    .venv/bin/python benchmarks/quality.py --quick         # 9 single-topic + 9 pair personas
    .venv/bin/python benchmarks/quality.py --write         # also update benchmarks/results/ranking.md
    .venv/bin/python benchmarks/quality.py --fine tuning   # fine-grained multi-style personas
    .venv/bin/python benchmarks/quality.py --fine reporting --write

Per seed the corpus is split in half (history / held-out). Each system ranks the unrated
history items, the simulated person rates the top 5 (like iff relevance > 0), and so on up
to the budget; at budgets 0, 5, 10 and 30 the system ranks the held-out half and we score
nDCG@10 (graded) and P@10. hermes runs through its own ranking path — ``hermes.ranking.rank.rank``
with the candidate query ``list_feed`` / ``search_feed`` use, clicks written by
``record_click`` — over a temporary database filled by the ingest store and embedded with
the real all-MiniLM-L6-v2 (vectors cached in benchmarks/.cache/). Three variants: arXiv
categories as item tags, no tags at all (blogs, podcasts, feeds without categories), and
the built-in keyphrase tagger's tags only (``hermes-keyphrases``: proposals from the model's
token vectors, cached in benchmarks/.cache/keyphrases.json, kept by the core's recurrence
rule exactly as ingest keeps them), and categories plus keyphrases (``hermes-both``: what
ingest stores for a categorised listing).
The anchors run here with scikit-learn (benchmarks/quality_anchors.py).

``--fine tuning|reporting`` swaps the personas for the fine-grained, multi-style ones of
benchmarks/quality_fine.py (one arXiv subject each, four ways of writing the interests);
constants are chosen on the tuning half, figures are reported on the reporting half only.
Everything else (split, loop, budgets, metrics, anchors) is the same protocol.

``--set module.NAME=value`` overrides a tuning constant of hermes (e.g.
``--set scorers.AFFINITY_K=5``) for experiments; reported figures use the shipped values.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.pop("HERMES_EMBEDDER", None)  # the real model, never the test hash embedder

from embed_cache import CachedMiniLM, serve_from_cache  # noqa: E402
from quality_anchors import ANCHORS, Corpus  # noqa: E402
from quality_data import load_papers, make_personas, ndcg_at, precision_at, split  # noqa: E402
from quality_fine import make_fine_personas  # noqa: E402

BUDGETS = (0, 5, 10, 30)
PAGE = 5  # items shown (and rated) per round


class HermesSystem:
    """hermes over a temporary database: items stored by the ingest store, tagged with their
    arXiv categories, with keyphrases only, or not at all."""

    def __init__(self, directory: Path, papers, embedder: CachedMiniLM, tags: str):
        from hermes.ingest.store import embed_pending, insert_items
        from hermes.storage.db import get_db

        self.db = get_db(directory / f"quality-{tags}.db")
        self.db.execute("INSERT INTO feeds (url, title) VALUES (?, ?)", ["https://arxiv.org/rss/all", "arXiv"])
        feed_id = self.db.execute("SELECT id FROM feeds").fetchone()[0]
        rows = [
            {
                "guid": f"arxiv:{p.arxiv_id}",
                "arxiv_id": p.arxiv_id,
                "title": p.title,
                "summary": p.abstract,
                "url": f"https://arxiv.org/abs/{p.arxiv_id}",
                "published": "2007-04-02T00:00:00+00:00",
                "content_type": "paper",
                "tags": list(p.categories) if tags in ("categories", "both") else [],
            }
            for p in papers
        ]
        ids = insert_items(self.db, feed_id, rows)
        embed_pending(self.db, embedder, tag=False)
        if tags in ("keyphrases", "both"):
            tag_with_keyphrases(self.db, ids, embedder)
        self.item_of = {p.index: i for p, i in zip(papers, ids)}
        self.paper_of = {i: p.index for p, i in zip(papers, ids)}

    def __call__(self, persona, seed: int):
        from hermes.storage.records import create_user

        user = create_user(self.db, f"{persona.name}#{seed}", persona.interests)
        return HermesSession(self, user)


class HermesSession:
    def __init__(self, system: HermesSystem, user: dict):
        self.s, self.user = system, user

    def rank(self, pool, k):
        from hermes.contract import CandidateQuery
        from hermes.ranking.rank import rank

        query = CandidateQuery(since_days=None, exclude_clicked=True, item_ids=tuple(self.s.item_of[i] for i in pool))
        ranking = rank(self.s.db, self.user, query, limit=k)
        return [self.s.paper_of[int(i)] for i in ranking.item_ids]

    def rate(self, index, liked):
        from hermes.storage.clicks import record_click

        record_click(self.s.db, self.user["id"], self.s.item_of[index], liked, "agent")


def tag_with_keyphrases(db, ids, embedder) -> None:
    """The built-in tagger's proposals for every paper (cached by text), kept by the core."""
    from keyphrase_cache import cached_proposals

    from hermes.ingest.tagging import ITEM_SQL, apply_proposals, item_dict
    from hermes.storage.transactions import write_transaction

    marks = ",".join("?" * len(ids))
    items = [item_dict(r) for r in db.execute(f"{ITEM_SQL} WHERE id IN ({marks}) ORDER BY id", ids)]
    proposals = cached_proposals(items, embedder.model)
    with write_transaction(db):
        apply_proposals(db, proposals)


def rate_up_to(session, budget: int, rated: set, history, rel) -> None:
    """The simulated person's clicks until ``budget``: each round the system ranks the
    unrated history items and the top ``PAGE`` are rated (like iff relevant)."""
    while len(rated) < budget:
        shown = session.rank([i for i in history if i not in rated], PAGE)
        for index in shown[: budget - len(rated)]:
            rated.add(index)
            session.rate(index, rel[index] > 0)


def run_persona(system, persona, seed, history, heldout, rel):
    session = system(persona, seed)
    rated: set[int] = set()
    out = {}
    held_rel = [rel[i] for i in heldout]
    for budget in BUDGETS:
        rate_up_to(session, budget, rated, history, rel)
        ranked = session.rank(heldout, 10)
        ranked_rel = [rel[i] for i in ranked]
        out[budget] = (ndcg_at(ranked_rel, held_rel), precision_at(ranked_rel))
    return out


def apply_overrides(settings: list[str], aliases: dict[str, str] | None = None) -> None:
    """``--set MODULE.NAME=VALUE``: MODULE under ``hermes.``, or a name in ``aliases``
    (``{"library_scorer": "hermes_persona.library_scorer"}``)."""
    import importlib

    for setting in settings:
        target, value = setting.split("=", 1)
        module, name = target.rsplit(".", 1)
        module = (aliases or {}).get(module, f"hermes.{module}")
        mod = importlib.import_module(module)
        if not hasattr(mod, name):
            raise SystemExit(f"{module} has no {name}")
        setattr(mod, name, type(getattr(mod, name))(eval(value)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="9 single-topic + 9 pair personas")
    ap.add_argument("--systems", default="hermes-tags,hermes-both,hermes-notags,hermes-keyphrases," + ",".join(ANCHORS))
    ap.add_argument(
        "--fine",
        choices=("tuning", "reporting", "all"),
        help="fine-grained multi-style personas (benchmarks/quality_fine.py)",
    )
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE")
    ap.add_argument("--write", action="store_true", help="update benchmarks/results/ranking.md")
    args = ap.parse_args(argv)
    apply_overrides(args.set)
    started = time.time()

    papers = load_papers()
    personas = make_fine_personas(args.fine) if args.fine else make_personas(papers)
    if args.quick and args.fine:
        personas = [p for p in personas if p.style in ("list", "sentence")]
    elif args.quick:
        singles = [p for p in personas if len(p.topics) == 1]
        personas = singles + [p for p in personas if len(p.topics) == 2][::4][:9]
    embedder = CachedMiniLM()
    vectors = embedder.embed([p.text for p in papers])
    embedder.save()  # now: a run that fails later keeps the vectors

    tmp = serve_from_cache(embedder, "hermes-quality-")
    names = args.systems.split(",")
    systems = {}
    for name in names:
        if name.startswith("hermes-"):
            kind = {"hermes-tags": "categories", "hermes-keyphrases": "keyphrases", "hermes-both": "both"}.get(
                name, "none"
            )
            systems[name] = HermesSystem(Path(tmp.name), papers, embedder, tags=kind)
        else:
            corpus = systems.get("_corpus") or Corpus(
                [p.text for p in papers], vectors, lambda t: embedder.embed([t])[0]
            )
            systems["_corpus"] = corpus
            systems[name] = (lambda cls, c: lambda persona, seed: cls(c, persona, seed))(ANCHORS[name], corpus)
    systems.pop("_corpus", None)

    scores = {name: defaultdict(list) for name in names}
    for seed in range(args.seeds):
        history, heldout = split(len(papers), seed)
        for persona in personas:
            rel = {p.index: persona.relevance(p) for p in papers}
            for name in names:
                for budget, value in run_persona(systems[name], persona, seed, history, heldout, rel).items():
                    scores[name][budget].append(value)
        print(f"seed {seed} done ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
        if seed + 1 < args.seeds:  # a long run still says something if it is stopped
            print(report(scores, names, len(personas), seed + 1), file=sys.stderr, flush=True)
    embedder.save()

    table = report(scores, names, len(personas), args.seeds)
    if args.fine:
        table += "\n\n" + report_styles(scores, names, personas, args.seeds)
    took = time.time() - started
    print(table)
    print(
        f"\n{len(personas)} personas x {args.seeds} seeds, {took:.0f} s; "
        f"texts embedded by the model this run: {embedder.calls}"
    )
    if args.write:
        write_results(table, argv if argv is not None else sys.argv[1:], took, "fine" if args.fine else "quality")
    return 0


LABELS = {
    "hermes-tags": "**hermes**, arXiv categories as tags",
    "hermes-notags": "**hermes**, no tags",
    "hermes-keyphrases": "**hermes**, keyphrase tags only (built-in tagger)",
    "hermes-both": "**hermes**, arXiv categories and keyphrases (what ingest stores)",
    "random": "random",
    "tfidf": "TF-IDF cosine to the interests text",
    "arxiv-sanity": "arxiv-sanity-lite style (TF-IDF + LinearSVC)",
    "zotero": "zotero-arxiv-daily style (sum of cosines to likes)",
    "scholar-inbox": "Scholar Inbox style (LogReg + 50 random negatives)",
}


def report(scores, names, n_personas, n_seeds) -> str:
    lines = []
    for metric, k in (("nDCG@10", 0), ("P@10", 1)):
        lines.append(f"\n{metric}, mean over {n_personas} personas x {n_seeds} seeds (± standard error)\n")
        lines.append("| method | " + " | ".join(f"{b} clicks" for b in BUDGETS) + " |")
        lines.append("| --- |" + " --- |" * len(BUDGETS))
        for name in names:
            cells = []
            for b in BUDGETS:
                vals = np.array([v[k] for v in scores[name][b]])
                cells.append(f"{vals.mean():.3f} ± {vals.std(ddof=1) / np.sqrt(len(vals)):.3f}")
            lines.append(f"| {LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    anchors = [n for n in names if not n.startswith("hermes")]
    ours = [n for n in names if n.startswith("hermes")]
    if anchors and ours:
        lines.append(
            "\nnDCG@10, hermes minus the best anchor at that budget, paired by persona "
            "and seed (± standard error of the paired difference)\n"
        )
        lines.append("| variant | " + " | ".join(f"{b} clicks" for b in BUDGETS) + " |")
        lines.append("| --- |" + " --- |" * len(BUDGETS))
        for name in ours:
            cells = []
            for b in BUDGETS:
                best = max(anchors, key=lambda a: np.mean([v[0] for v in scores[a][b]]))
                diff = np.array([h[0] - a[0] for h, a in zip(scores[name][b], scores[best][b])])
                cells.append(f"{diff.mean():+.3f} ± {diff.std(ddof=1) / np.sqrt(len(diff)):.3f} (vs {best})")
            lines.append(f"| {LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines).lstrip()


def report_styles(scores, names, personas, n_seeds) -> str:
    """nDCG@10 per interests style: hermes minus the best anchor at that budget, paired."""
    styles = sorted({p.style for p in personas})
    # scores[name][budget] runs seed-major, persona-minor
    style_of = [p.style for _ in range(n_seeds) for p in personas]
    anchors = [n for n in names if not n.startswith("hermes")]
    ours = [n for n in names if n.startswith("hermes")]
    lines = [
        "nDCG@10 by interests style, hermes minus the best anchor for that style and "
        "budget, paired (± standard error)\n",
        "| variant, style | " + " | ".join(f"{b} clicks" for b in BUDGETS) + " |",
        "| --- |" + " --- |" * len(BUDGETS),
    ]
    for name in ours:
        for style in styles:
            mask = np.array([s == style for s in style_of])
            cells = []
            for b in BUDGETS:
                vals = {n: np.array([v[0] for v in scores[n][b]])[mask] for n in names}
                if not anchors:
                    cells.append(f"{vals[name].mean():.3f}")
                    continue
                best = max(anchors, key=lambda a: vals[a].mean())
                diff = vals[name] - vals[best]
                cells.append(
                    f"{vals[name].mean():.3f} ({diff.mean():+.3f} ± "
                    f"{diff.std(ddof=1) / np.sqrt(len(diff)):.3f} vs {best})"
                )
            lines.append(f"| {LABELS.get(name, name)}, {style} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_results(table: str, argv: list[str], took: float, block_name: str = "quality") -> None:
    path = HERE / "results" / "ranking.md"
    start, end = f"<!-- {block_name}:start -->", f"<!-- {block_name}:end -->"
    command = "python benchmarks/quality.py " + " ".join(a for a in argv if a != "--write")
    block = (
        f"{start}\nCommand: `{command.strip()}` ({took / 60:.0f} min on 2 shared cores with the "
        "embedding cache warm; a first run also embeds the corpus, ~5 min)\n\n"
        f"{table}\n{end}"
    )
    text = path.read_text() if path.exists() else "# Ranking\n"
    if start not in text:
        text += f"\n{start}\n{end}\n"
    head, rest = text.split(start, 1)
    path.write_text(head + block + rest.split(end, 1)[1])


if __name__ == "__main__":
    raise SystemExit(main())
