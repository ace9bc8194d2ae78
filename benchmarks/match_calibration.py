"""Calibrate and check ``match`` (hermes/ranking/match.py) on the labelled arXiv corpus.

    .venv/bin/python benchmarks/match_calibration.py            # collect (real model) + report
    .venv/bin/python benchmarks/match_calibration.py --reuse    # report from the last collection
    .venv/bin/python benchmarks/match_calibration.py --write    # also update benchmarks/results/match.md

The protocol is ../shared/QUALITY.md's (benchmarks/quality.py): 45 personas, 3 seeds, a
history / held-out split, the simulated person rating the top 5 of the unrated history until
the budget. At budgets 0, 5, 10 and 30 hermes ranks every held-out item through its own
ranking path and we keep, per item, the evidence ``match`` is judged from (the best interests
clause's cosine, the nearest liked item's cosine, the classifier's probability) and whether
the item is relevant (the simulated person would like it).

Thresholds are *chosen* on the personas with an even index and *reported* on the others
(and on all), together, as ``match`` combines them (the best level any figure reaches):
``strong`` cuts keep the items judged strong at least STRONG_PRECISION relevant at every
click budget, ``good`` cuts keep strong-or-good items at least GOOD_PRECISION relevant, and
``weak`` starts where only WEAK_MISS of the relevant items fall below.
``--chosen`` reports the thresholds shipped in hermes instead of fitting new ones.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.pop("HERMES_EMBEDDER", None)  # the real model, never the test hash embedder

from embed_cache import CACHE_DIR, CachedMiniLM, serve_from_cache  # noqa: E402
from quality import BUDGETS, PAGE, HermesSystem  # noqa: E402
from quality_data import load_papers, make_personas, split  # noqa: E402

KINDS = ("interest", "liked", "classifier")
STRONG_PRECISION = 0.90
GOOD_PRECISION = 0.75
WEAK_MISS = 0.05
DUMP = CACHE_DIR / "match_evidence.npz"


def collect(seeds: int, quick: bool) -> dict[str, np.ndarray]:
    """One row per (variant, persona, seed, budget, held-out item)."""
    from hermes.contract import CandidateQuery
    from hermes.ranking.rank import rank

    papers = load_papers()
    personas = make_personas(papers)
    if quick:
        singles = [p for p in personas if len(p.topics) == 1]
        personas = singles + [p for p in personas if len(p.topics) == 2][::4][:9]
    embedder = CachedMiniLM()

    tmp = serve_from_cache(embedder, "hermes-match-")
    rows: dict[str, list] = {k: [] for k in ("variant", "persona", "seed", "budget", "relevant", *KINDS)}
    started = time.time()
    for variant, tags in (("tags", True), ("notags", False)):
        system = HermesSystem(Path(tmp.name), papers, embedder, tags=tags)
        for seed in range(seeds):
            history, heldout = split(len(papers), seed)
            for p_index, persona in enumerate(personas):
                session = system(persona, seed)
                rel = {p.index: persona.relevance(p) for p in papers}
                rated: set[int] = set()
                for budget in BUDGETS:
                    while len(rated) < budget:
                        shown = session.rank([i for i in history if i not in rated], PAGE)
                        for index in shown[: budget - len(rated)]:
                            rated.add(index)
                            session.rate(index, rel[index] > 0)
                    query = CandidateQuery(
                        since_days=None, exclude_clicked=True, item_ids=tuple(system.item_of[i] for i in heldout)
                    )
                    ranking = rank(system.db, session.user, query)
                    n = len(ranking.item_ids)
                    evidence = {k: np.full(n, np.nan) for k in KINDS}
                    for comp in ranking.components.values():
                        if comp.active:
                            for kind, values in comp.evidence.items():
                                evidence[kind] = np.asarray(values, dtype=np.float64)[ranking.order]
                    rows["variant"].append(np.full(n, variant == "tags"))
                    rows["persona"].append(np.full(n, p_index))
                    rows["seed"].append(np.full(n, seed))
                    rows["budget"].append(np.full(n, budget))
                    rows["relevant"].append(np.array([rel[system.paper_of[int(i)]] > 0 for i in ranking.item_ids]))
                    for kind in KINDS:
                        rows[kind].append(evidence[kind])
            print(f"{variant} seed {seed} done ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
    embedder.save()
    data = {k: np.concatenate(v) for k, v in rows.items()}
    DUMP.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(DUMP, **data)
    return data


# --- choosing thresholds --------------------------------------------------------------------

GRID = np.round(np.arange(0.0, 1.0, 0.01), 2)


def choose(data: dict, fit: np.ndarray) -> dict[str, tuple[float, float, float]]:
    """Thresholds chosen together, as ``match`` uses them (the best level any figure
    reaches): ``interest`` alone decides with no clicks, so its cut is the lowest whose items
    reach the target precision at 0 clicks; then ``liked`` gets the lowest cut that keeps the
    combination at the target at every click budget, then ``classifier`` the same way.
    ``weak`` starts where only WEAK_MISS of the relevant items (with that figure) fall below."""
    cuts: dict[str, list[float]] = {k: [0.0, 0.0, 0.0] for k in KINDS}
    for level, target in ((2, GOOD_PRECISION), (3, STRONG_PRECISION)):
        chosen: dict[str, float] = {}
        for kind in KINDS:
            cut = next((t for t in GRID if _meets(data, fit, {**chosen, kind: t}, target)), float("inf"))
            chosen[kind] = cut
            cuts[kind][level - 1] = cut
    for kind in KINDS:
        have = fit & np.isfinite(data[kind]) & data["relevant"]
        weak = float(np.floor(np.quantile(data[kind][have], WEAK_MISS) * 100) / 100)
        good, strong = cuts[kind][1], max(cuts[kind][2], cuts[kind][1])
        cuts[kind] = [min(weak, good), good, strong]
    return {kind: tuple(c) for kind, c in cuts.items()}


def _meets(data: dict, fit: np.ndarray, cuts: dict[str, float], target: float) -> bool:
    """Whether items reaching any of ``cuts`` are at least ``target`` relevant at every
    budget where the last kind added has figures (and 0.5% of the items reach them)."""
    last = list(cuts)[-1]
    for budget in BUDGETS:
        sel = fit & (data["budget"] == budget)
        if not np.isfinite(data[last][sel]).any():
            continue
        above = np.zeros(int(sel.sum()), dtype=bool)
        for kind, cut in cuts.items():
            above |= np.nan_to_num(data[kind][sel], nan=-np.inf) >= cut
        if above.mean() < 0.005 or data["relevant"][sel][above].mean() < target:
            return False
    return True


# --- judging and reporting ------------------------------------------------------------------


def levels(data: dict, limits: dict, where: np.ndarray) -> np.ndarray:
    out = np.zeros(int(where.sum()), dtype=np.int8)
    for kind, cuts in limits.items():
        values = np.nan_to_num(data[kind][where], nan=-np.inf)
        out = np.maximum(out, np.searchsorted(cuts, values, side="right"))
    return out


def report(data: dict, limits: dict, where: np.ndarray, title: str) -> str:
    lines = [
        f"\n\n{title}\n",
        "| variant | clicks | strong: share of items / precision | strong+good: share / "
        "precision | relevant items called none | relevant items at good or better | "
        "irrelevant items at good or better |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for variant, label in ((True, "arXiv categories as tags"), (False, "no tags")):
        for budget in BUDGETS:
            sel = where & (data["variant"] == variant) & (data["budget"] == budget)
            if not sel.any():
                continue
            lv = levels(data, limits, sel)
            rel = data["relevant"][sel]
            strong, good = lv >= 3, lv >= 2
            lines.append(
                f"| {label} | {budget} | {strong.mean():.1%} / {_prec(rel, strong)} | "
                f"{good.mean():.1%} / {_prec(rel, good)} | {(lv[rel] == 0).mean():.1%} | "
                f"{good[rel].mean():.1%} | {good[~rel].mean():.1%} |"
            )
    return "\n".join(lines)


def _prec(rel: np.ndarray, chosen: np.ndarray) -> str:
    return f"{rel[chosen].mean():.3f}" if chosen.any() else "–"


def describe(limits: dict) -> str:
    lines = ["| evidence | weak from | good from | strong from |", "| --- | --- | --- | --- |"]
    for kind, (weak, good, strong) in limits.items():
        lines.append(f"| {kind} | {weak:.2f} | {good:.2f} | {strong:.2f} |")
    return "\n".join(lines)


def write_results(text: str, n: int) -> None:
    path = HERE / "results" / "match.md"
    start, end = "<!-- match:start -->", "<!-- match:end -->"
    block = (
        f"{start}\nCommand: `python benchmarks/match_calibration.py` (collects {n:,} "
        "judgements with the real model through `hermes.ranking.rank`, about 2 minutes with "
        "the embedding cache warm; `--reuse` reports from the last collection, `--chosen` "
        f"reports the thresholds shipped in hermes instead of fitting new ones)\n\n{text}\n{end}"
    )
    old = path.read_text() if path.exists() else f"# Match calibration\n\n{start}\n{end}\n"
    head, rest = old.split(start, 1)
    path.write_text(head + block + rest.split(end, 1)[1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="9 single-topic + 9 pair personas")
    ap.add_argument("--reuse", action="store_true", help="report from the last collection")
    ap.add_argument("--chosen", action="store_true", help="report the thresholds shipped in hermes (no fitting)")
    ap.add_argument("--write", action="store_true", help="update benchmarks/results/match.md")
    args = ap.parse_args(argv)
    started = time.time()
    data = dict(np.load(DUMP)) if args.reuse else collect(args.seeds, args.quick)
    fit = data["persona"] % 2 == 0
    if args.chosen:
        from hermes.ranking.match import MINILM, THRESHOLDS

        limits, how = THRESHOLDS[MINILM], "the thresholds shipped in hermes/ranking/match.py"
    else:
        limits, how = choose(data, fit), "chosen on the even-numbered personas"
    n_personas = len(np.unique(data["persona"]))
    text = (
        f"Thresholds ({how}; strong: ≥ {STRONG_PRECISION:.0%} of items relevant, good: "
        f"≥ {GOOD_PRECISION:.0%}, weak: {WEAK_MISS:.0%} of relevant items below it)\n\n"
        + describe(limits)
        + report(data, limits, ~fit, "On the odd-numbered personas (not used to choose):")
        + report(data, limits, np.ones_like(fit), f"On all {n_personas} personas:")
    )
    print(text)
    print(f"\n{len(data['relevant'])} judged items, {time.time() - started:.0f} s", file=sys.stderr)
    if args.write:
        write_results(text, len(data["relevant"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
