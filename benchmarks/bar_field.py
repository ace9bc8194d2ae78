"""The persona's bar inside one field and across fields (issue 30), on the labelled papers.

    .venv/bin/python benchmarks/bar_field.py              # collect (real model) + report
    .venv/bin/python benchmarks/bar_field.py --reuse      # report from the last collection
    .venv/bin/python benchmarks/bar_field.py --write      # also write benchmarks/results/bar.md

A researcher subscribes to the listings of their own field, so the archive is one field and
the bar must tell its sub-fields apart. Archives:

- ``math``, ``cond-mat``, ``hep`` (hep, nucl and gr-qc papers): one field each, without
  categories, the personas of ``quality_fine.py`` whose subject is in that field (4 writing
  styles each), relevance by the fine subject; and two-subject personas of that field
  (:func:`broad_personas`, reported apart: "one field, two subjects");
- ``mixed``: all 2,000 papers, the 45 coarse personas of QUALITY.md, relevance by topic.

The loop is QUALITY.md's (a history / held-out split per seed, the simulated person rating
the top 5 of the unrated history: a like if relevant, else a dislike — the person of the
issue's scenario). At 0, 5, 10 and 30 clicks hermes ranks the held-out items through its own
ranking path and we keep every item's ``match`` as hermes judged it, its evidence figures and
the reference they were judged against (so other thresholds can be tried offline through
``hermes.ranking.match.judge`` itself), whether it is relevant, and nDCG@10.

Thresholds are chosen on the *choosing* half (quality_fine.TUNING subjects, even-indexed
coarse personas) and reported on the *reporting* half. Figures per archive kind and budget:
nDCG@10, items above the bar, precision of strong and of strong + good, recall, and the
irrelevant items above the bar (which must fall once the person has disliked some).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.pop("HERMES_EMBEDDER", None)  # the real model, never the test hash embedder

from embed_cache import CACHE_DIR, CachedMiniLM, serve_from_cache  # noqa: E402
from quality import BUDGETS, HermesSystem, rate_up_to  # noqa: E402
from quality_data import load_papers, make_personas, ndcg_at, split  # noqa: E402
from quality_fine import INTERESTS, REPORTING, TUNING, make_fine_personas  # noqa: E402

DUMP = CACHE_DIR / "bar_field.npz"
#: the click patterns a simulated person follows (``--clicks``): ``top`` rates the top of
#: each page (QUALITY.md's person); ``far`` likes the relevant items of the page's top but
#: dislikes what sits at the bottom of the ranking instead of the near misses (a trial's
#: person disliked four polymer papers ranked 250-330 of 390, and the bar grew 13 -> 52)
CLICKS = ("top", "far")


def dump_path(clicks: str) -> Path:
    return DUMP if clicks == "top" else DUMP.with_name(f"bar_field_{clicks}.npz")


def rate_far(session, budget: int, rated: set, history, rel, passed: set) -> None:
    """``far``'s clicks until ``budget``: each round the unrated, unpassed history is ranked;
    a relevant item of the top ``PAGE`` is liked, an irrelevant one is passed over (no click,
    not shown again) and the lowest-ranked irrelevant item is disliked in its place."""
    from quality import PAGE

    while len(rated) < budget:
        pool = [i for i in history if i not in rated and i not in passed]
        if not pool:
            return
        order = session.rank(pool, len(pool))
        bottom = [i for i in reversed(order) if rel[i] <= 0]
        for index in order[:PAGE]:
            if len(rated) >= budget:
                break
            if rel[index] > 0:
                rated.add(index)
                session.rate(index, True)
                continue
            passed.add(index)
            while bottom and (bottom[0] in rated or bottom[0] in passed):
                bottom.pop(0)
            if bottom:
                far = bottom.pop(0)
                rated.add(far)
                session.rate(far, False)


FIELDS = {"math": ("math",), "cond-mat": ("cond-mat",), "hep": ("hep", "nucl", "gr-qc")}
KINDS = ("interest", "liked", "disliked", "classifier")


def field_of(subject: str) -> str | None:
    if subject.startswith(("hep-", "nucl-", "gr-qc")):
        return "hep"
    if subject.startswith("math"):  # math-ph papers are the math archive's (quality_data)
        return "math"
    return "cond-mat" if subject.startswith("cond-mat") else None


@dataclass(frozen=True)
class BroadPersona:
    """A researcher of two sub-fields of one field (a trial's "unconventional
    superconductivity, cuprates, Kondo lattice, topological insulators, quantum spin
    liquids"): the interests of both subjects in one text, either relevant."""

    name: str
    subjects: tuple[str, ...]
    interests: str

    def relevance(self, paper) -> float:
        categories = paper.categories
        if categories and categories[0] in self.subjects:
            return 1.0
        return 0.5 if set(self.subjects) & set(categories) else 0.0


def broad_personas(field: str) -> list[BroadPersona]:
    """Two-subject personas of ``field``, each pair of neighbouring subjects of one half (the
    choosing half's subjects pair among themselves, the reporting half's too), in two styles."""
    out = []
    for half in (TUNING, REPORTING):
        subjects = [s for s in half if field_of(s) == field]
        for a, b in itertools.pairwise(subjects):
            for style in ("list", "keywords"):
                text = f"{INTERESTS[a][style]}, {INTERESTS[b][style]}"
                out.append(BroadPersona(f"{a}+{b}/{style}", (a, b), text))
    return out


def archives(papers, seeds: int):
    """``(name, papers, personas, choosing)`` per archive."""
    out = []
    fine = make_fine_personas("all")
    for field, topics in FIELDS.items():
        mine = [p for p in papers if p.topic in topics]
        personas = [p for p in fine if field_of(p.subject) == field] + broad_personas(field)
        out.append((field, mine, personas, [_choosing(p) for p in personas]))
    coarse = make_personas(papers)
    out.append(("mixed", papers, coarse, [k % 2 == 0 for k in range(len(coarse))]))
    return out


def _choosing(persona) -> bool:
    subjects = getattr(persona, "subjects", None) or (persona.subject,)
    return subjects[0] in TUNING


def collect(seeds: int, clicks: str = "top") -> dict:
    from hermes.contract import CandidateQuery
    from hermes.ranking.rank import rank

    papers = load_papers()
    embedder = CachedMiniLM()
    tmp = serve_from_cache(embedder, "hermes-bar-")
    rows: dict[str, list] = {
        k: [] for k in ("archive", "run", "choosing", "broad", "budget", "relevant", "level", *KINDS)
    }
    runs: list[dict] = []  # per run: the reference arrays and nDCG@10
    started = time.time()
    for name, mine, personas, choosing in archives(papers, seeds):
        # re-indexed: HermesSystem maps paper.index to item ids
        local = [
            type(p)(
                k, *[getattr(p, f) for f in ("arxiv_id", "title", "abstract", "categories", "topic", "cross_topics")]
            )
            for k, p in enumerate(mine)
        ]
        system = _system(Path(tmp.name), name, local, embedder)
        for seed in range(seeds):
            history, heldout = split(len(local), seed)
            for persona, chosen in zip(personas, choosing):
                session = system(persona, seed)
                rel = {p.index: persona.relevance(p) for p in local}
                rated: set[int] = set()
                passed: set[int] = set()
                for budget in BUDGETS:
                    if clicks == "far":
                        rate_far(session, budget, rated, history, rel, passed)
                    else:
                        rate_up_to(session, budget, rated, history, rel)
                    query = CandidateQuery(
                        since_days=None, exclude_clicked=True, item_ids=tuple(system.item_of[i] for i in heldout)
                    )
                    ranking = rank(system.db, session.user, query)
                    relevant = np.array([rel[system.paper_of[int(i)]] for i in ranking.item_ids])
                    n = len(relevant)
                    evidence = {k: np.full(n, np.nan) for k in KINDS}
                    reference = {}
                    for comp in ranking.components.values():
                        if comp.active:
                            for kind, values in comp.evidence.items():
                                evidence[kind] = np.asarray(values, np.float64)[ranking.order]
                            reference.update({k: np.asarray(v, np.float32) for k, v in comp.reference.items()})
                    run = len(runs)
                    runs.append({"reference": reference, "ndcg": ndcg_at(relevant[:10].tolist(), relevant.tolist())})
                    rows["archive"].append(np.full(n, name))
                    rows["run"].append(np.full(n, run))
                    rows["choosing"].append(np.full(n, chosen))
                    rows["broad"].append(np.full(n, isinstance(persona, BroadPersona)))
                    rows["budget"].append(np.full(n, budget))
                    rows["relevant"].append(relevant)
                    rows["level"].append(ranking.levels.astype(np.int8))
                    for kind in KINDS:
                        rows[kind].append(evidence[kind])
            print(f"{name} seed {seed} done ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
    embedder.save()
    data = {k: np.concatenate(v) for k, v in rows.items()}
    data["ndcg"] = np.array([r["ndcg"] for r in runs])
    for kind in KINDS:
        data[f"ref_{kind}"] = np.array([r["reference"].get(kind, np.zeros(0, np.float32)) for r in runs], dtype=object)
    DUMP.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(dump_path(clicks), **data)
    return data


def _system(directory: Path, name: str, papers, embedder):
    """hermes over a fresh database holding only ``papers`` (no tags: a listing without
    categories, the case the bar has least to go on)."""
    directory = directory / name
    directory.mkdir(parents=True, exist_ok=True)
    return HermesSystem(directory, papers, embedder, tags="none")


def load(clicks: str = "top") -> dict:
    with np.load(dump_path(clicks), allow_pickle=True) as f:
        return {k: f[k] for k in f.files}


# --- judging again, offline, through hermes's own rule ----------------------------------------


def rejudge(data: dict) -> np.ndarray:
    """Every collected item's level under hermes's current ``match`` rule and thresholds,
    from the stored figures and references (what hermes would say now)."""
    from hermes.contract import Component
    from hermes.ranking.match import MINILM, judge

    levels = np.zeros(len(data["run"]), dtype=np.int8)
    starts = np.flatnonzero(np.r_[True, data["run"][1:] != data["run"][:-1]])
    ends = np.r_[starts[1:], len(data["run"])]
    for a, b in zip(starts, ends):
        run = int(data["run"][a])
        comps = []
        for kind in KINDS:
            values = data[kind][a:b]
            if np.isnan(values).all():
                continue
            ref = data[f"ref_{kind}"][run]
            comps.append(
                Component(
                    kind, "profile", np.zeros(b - a), evidence={kind: values}, reference={kind: ref} if len(ref) else {}
                )
            )
        levels[a:b] = judge(comps, b - a, MINILM, int(data["budget"][a])).levels
    return levels


# --- reporting --------------------------------------------------------------------------------


def figures(data: dict, levels: np.ndarray, sel: np.ndarray) -> dict:
    rel = data["relevant"][sel] > 0
    lv = levels[sel]
    runs = np.unique(data["run"][sel])
    strong, above = lv >= 3, lv >= 2
    return {
        "ndcg": float(np.mean(data["ndcg"][runs])) if len(runs) else float("nan"),
        "above": above.sum() / max(len(runs), 1),
        "held": len(lv) / max(len(runs), 1),
        "p_strong": rel[strong].mean() if strong.any() else float("nan"),
        "p_good": rel[above].mean() if above.any() else float("nan"),
        "recall": above[rel].mean() if rel.any() else float("nan"),
        "irrelevant": (above & ~rel).sum() / max(len(runs), 1),
    }


def report(data: dict, levels: np.ndarray, half: str) -> str:
    want = {"choosing": True, "reporting": False}[half]
    lines = [
        "| archive | clicks | nDCG@10 | above bar (of held-out) | precision strong | "
        "precision strong+good | recall | irrelevant above bar |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    broad = data.get("broad", np.zeros(len(data["run"]), dtype=bool))
    groups = (("one field", ("math", "cond-mat", "hep"), False), ("mixed", ("mixed",), False))
    if broad.any():
        groups += (("one field, two subjects", ("math", "cond-mat", "hep"), True),)
    for kind, names, two in groups:
        for budget in BUDGETS:
            sel = (
                np.isin(data["archive"], names)
                & (data["budget"] == budget)
                & (data["choosing"] == want)
                & (broad == two)
            )
            f = figures(data, levels, sel)
            lines.append(
                f"| {kind} | {budget} | {f['ndcg']:.3f} | {f['above']:.1f} of "
                f"{f['held']:.0f} | {f['p_strong']:.2f} | {f['p_good']:.2f} | "
                f"{f['recall']:.2f} | {f['irrelevant']:.1f} |"
            )
    return "\n".join(lines)


# --- choosing the rule's constants on the choosing half ----------------------------------------

STRONG_PRECISION, GOOD_PRECISION = 0.90, 0.75


def tune(data: dict) -> None:
    """Coordinate search over match.SHIFT, VETO and CLOSER: each constant in turn takes the
    grid value that best meets the precision targets (any shortfall costs ten times its
    size) and then gives the most recall; three rounds."""
    from hermes.ranking import match

    def score():
        shortfall, recall = shortfalls(data, rejudge(data))
        return recall - 10.0 * shortfall

    def setting(get, put, grid):
        nonlocal best
        for value in grid:
            old = get()
            put(value)
            got = score()
            if got > best + 1e-9:
                best = got
            else:
                put(old)

    best = score()
    print(f"start: {best:.3f} shift {match.SHIFT} veto {match.VETO} closer {match.CLOSER}", flush=True)
    for _ in range(3):
        for kind in ("interest", "liked"):
            setting(
                lambda: match.SHIFT[kind],
                lambda v: match.SHIFT.__setitem__(kind, v),
                (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0),
            )
        setting(
            lambda: match.VETO,
            lambda v: setattr(match, "VETO", v),
            (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6),
        )
        setting(lambda: match.CLOSER, lambda v: setattr(match, "CLOSER", v), (-0.05, -0.02, 0.0, 0.02, 0.05, 9.0))
        print(f"round: {best:.3f} shift {match.SHIFT} veto {match.VETO} closer {match.CLOSER}", flush=True)


def shortfalls(data: dict, levels: np.ndarray) -> tuple[float, float]:
    """On the choosing half, how far the precision figures fall short of the targets
    (summed over archive kinds and budgets) and the mean recall."""
    short, recalls = 0.0, []
    for names in (("math", "cond-mat", "hep"), ("mixed",)):
        before = None
        for budget in BUDGETS:
            narrow = ~data["broad"] if "broad" in data else True
            sel = np.isin(data["archive"], names) & (data["budget"] == budget) & data["choosing"] & narrow
            f = figures(data, levels, sel)
            short += max(0.0, STRONG_PRECISION - np.nan_to_num(f["p_strong"], nan=1.0))
            short += max(0.0, GOOD_PRECISION - np.nan_to_num(f["p_good"], nan=1.0))
            # the irrelevant items above the bar must fall once the person has clicked
            before = f["irrelevant"] if before is None else before
            short += max(0.0, f["irrelevant"] - before) / max(before, 1.0)
            recalls.append(f["recall"])
    return short, float(np.nanmean(recalls))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reuse", action="store_true", help="report from the last collection")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--clicks", choices=CLICKS, default="top", help="the simulated person's click pattern")
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/bar.md")
    parser.add_argument("--tune", action="store_true", help="choose match.SHIFT, VETO and CLOSER on the choosing half")
    parser.add_argument(
        "--before", action="store_true", help="judge as hermes did before issue 30: fixed thresholds only"
    )
    parser.add_argument(
        "--as-collected", action="store_true", help="the levels hermes gave when collecting, not re-judged now"
    )
    args = parser.parse_args(argv)
    started = time.time()
    data = load(args.clicks) if args.reuse else collect(args.seeds, args.clicks)
    if args.tune:
        tune(data)
    if args.before:
        from hermes.ranking import match

        match.SHIFT, match.VETO, match.CLOSER = {}, 0.0, float("inf")
    levels = data["level"] if args.as_collected else rejudge(data)
    out = []
    for half in ("choosing", "reporting"):
        out.append(f"### {half} half\n\n{report(data, levels, half)}\n")
    text = "\n".join(out)
    print(text)
    if args.write:
        path = HERE / "results" / "bar.md"
        # the tables head the page; the dated sections under them (what each change
        # measured) are kept as they are
        kept = path.read_text() if path.exists() else ""
        notes = "\n" + kept[kept.index("\n## ") :] if "\n## " in kept else ""
        path.write_text(
            "# The bar inside one field and across fields\n\n"
            f"`{' '.join(['.venv/bin/python benchmarks/bar_field.py', *(argv or sys.argv[1:])])}`"
            f" ({time.time() - started:.0f} s)\n\n{text}{notes}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
