"""Ranking quality on a mixed archive: half the papers from a feed with arXiv categories, the
other half from a feed without any (a researcher's arXiv listings beside blogs and
newsletters). The question a trial raised: once the persona has clicked, do the items
without categories still reach the top, or does the ``preference`` scorer — which reads the
feeds' categories — bury them under the categorised ones?

    .venv/bin/python benchmarks/quality_mixed.py            # 18 personas (quick set) x 3 seeds
    .venv/bin/python benchmarks/quality_mixed.py --all      # all 45 personas
    .venv/bin/python benchmarks/quality_mixed.py --set scorers.INFERRED_TAG_WEIGHT=0

The protocol is benchmarks/quality.py's (split, simulated clicks on the top 5 per round,
budgets 0 / 5 / 10 / 30, nDCG@10 on the held-out half). Which papers carry categories is
fixed (even corpus index), so about half of every persona's relevant items carry none.
Besides nDCG@10 it reports, over the held-out top 10, the share of the relevant items shown
that carry no categories (``uncategorised share``): with categories spread at random over
the relevant items, a ranking blind to them shows about half (the share among all relevant
held-out items is printed beside it); a ranking that prefers categorised items shows fewer.
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
os.environ.pop("HERMES_EMBEDDER", None)

from embed_cache import CachedMiniLM, serve_from_cache  # noqa: E402
from quality import BUDGETS, HermesSession, apply_overrides, rate_up_to  # noqa: E402
from quality_data import load_papers, make_personas, ndcg_at, split  # noqa: E402


def categorised(paper) -> bool:
    return paper.index % 2 == 0


class MixedSystem:
    """hermes over two feeds: one with arXiv categories as tags, one without."""

    def __init__(self, directory: Path, papers, embedder):
        from hermes.ingest.store import embed_pending, insert_items
        from hermes.storage.db import get_db

        self.db = get_db(directory / "quality-mixed.db")
        self.item_of, self.paper_of = {}, {}
        for url, with_tags in (("https://arxiv.org/rss/all", True), ("https://blogs.example.org/feed", False)):
            self.db.execute("INSERT INTO feeds (url, title) VALUES (?, ?)", [url, url])
            feed_id = self.db.execute("SELECT max(id) FROM feeds").fetchone()[0]
            mine = [p for p in papers if categorised(p) == with_tags]
            rows = [
                {
                    "guid": f"arxiv:{p.arxiv_id}",
                    "arxiv_id": p.arxiv_id,
                    "title": p.title,
                    "summary": p.abstract,
                    "url": f"https://arxiv.org/abs/{p.arxiv_id}",
                    "published": "2007-04-02T00:00:00+00:00",
                    "content_type": "paper",
                    "tags": list(p.categories) if with_tags else [],
                }
                for p in mine
            ]
            ids = insert_items(self.db, feed_id, rows)
            self.item_of.update({p.index: i for p, i in zip(mine, ids)})
            self.paper_of.update({i: p.index for p, i in zip(mine, ids)})
        embed_pending(self.db, embedder, tag=False)

    def __call__(self, persona, seed: int):
        from hermes.storage.records import create_user

        return HermesSession(self, create_user(self.db, f"{persona.name}#{seed}", persona.interests))


def run(system, persona, seed, history, heldout, rel, papers):
    session = system(persona, seed)
    rated: set[int] = set()
    held_rel = [rel[i] for i in heldout]
    relevant = [i for i in heldout if rel[i] > 0]
    base = np.mean([not categorised(papers[i]) for i in relevant]) if relevant else np.nan
    out = {}
    for budget in BUDGETS:
        rate_up_to(session, budget, rated, history, rel)
        top = session.rank(heldout, 10)
        hits = [i for i in top if rel[i] > 0]
        share = np.mean([not categorised(papers[i]) for i in hits]) if hits else np.nan
        out[budget] = (ndcg_at([rel[i] for i in top], held_rel), share, base)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--all", action="store_true", help="all 45 personas, not the quick 18")
    ap.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE")
    args = ap.parse_args(argv)
    apply_overrides(args.set)
    started = time.time()
    papers = load_papers()
    personas = make_personas(papers)
    if not args.all:
        singles = [p for p in personas if len(p.topics) == 1]
        personas = singles + [p for p in personas if len(p.topics) == 2][::4][:9]
    embedder = CachedMiniLM()
    embedder.embed([p.text for p in papers])
    embedder.save()

    tmp = serve_from_cache(embedder, "hermes-quality-mixed-")
    system = MixedSystem(Path(tmp.name), papers, embedder)
    results = defaultdict(list)
    for seed in range(args.seeds):
        history, heldout = split(len(papers), seed)
        for persona in personas:
            rel = {p.index: persona.relevance(p) for p in papers}
            for budget, value in run(system, persona, seed, history, heldout, rel, papers).items():
                results[budget].append(value)
        print(f"seed {seed} done ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
    print(f"{len(personas)} personas x {args.seeds} seeds" + (f"; {' '.join(args.set)}" if args.set else "") + "\n")
    print(
        "| clicks | nDCG@10 | uncategorised share of the relevant items in the top 10 "
        "| uncategorised share of all relevant held-out items |"
    )
    print("| --- | --- | --- | --- |")
    for budget in BUDGETS:
        rows = np.array(results[budget], dtype=float)
        se = rows[:, 0].std(ddof=1) / np.sqrt(len(rows))
        print(
            f"| {budget} | {rows[:, 0].mean():.3f} ± {se:.3f} | {np.nanmean(rows[:, 1]):.3f} "
            f"| {np.nanmean(rows[:, 2]):.3f} |"
        )
    print(f"\n{time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
