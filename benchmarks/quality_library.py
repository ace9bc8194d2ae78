"""Ranking quality when a persona starts from the person's own library (issue 38).

    .venv/bin/python benchmarks/quality_library.py --quick            # 18 personas x 3 seeds
    .venv/bin/python benchmarks/quality_library.py                    # all 45 personas
    .venv/bin/python benchmarks/quality_library.py --fine reporting   # one arXiv subject each
    .venv/bin/python benchmarks/quality_library.py --quick --drift    # the library vs later dislikes
    .venv/bin/python benchmarks/quality_library.py --quick --field cond-mat   # within one field
    .venv/bin/python benchmarks/quality_library.py --half choosing    # only the personas constants are chosen on

The protocol is benchmarks/quality.py's (QUALITY.md: split, the simulated person rating the
top 5 of each round, budgets 0 / 5 / 10 / 30, nDCG@10 and P@10 on the held-out half), with a
library first: for each persona and seed, ``size`` papers of the history half — nine in ten
drawn from the papers relevant to the persona, the rest from the others, as real libraries
hold a few papers off one's topics — are liked before the first click. hermes gets the
library the way a person gives it: a BibTeX file (title, abstract, arXiv id) through
:func:`hermes_persona.library.import_library`, so the likes are found in the archive by
their arXiv ids and written with source ``bootstrap``. The anchors get the same papers as
likes. The clicks then follow on the history items not in the library; "5 clicks" means 5
clicks after the library.

``--field PREFIX``: within one field (QUALITY.md, "Within one field"): the archive is only
the papers of one arXiv archive (``cond-mat``, ``math``), the personas are the fine-grained
ones of its subjects (benchmarks/quality_fine.py), relevance is by subject.

``--half choosing|reporting``: only the personas constants are chosen on, or only the
others, which report (the split of benchmarks/bar_field.py: even-indexed coarse personas of
quality_data.make_personas and quality_fine.TUNING subjects choose; odd-indexed coarse
personas and quality_fine.REPORTING subjects report). ``--quick`` keeps two of the four
writing styles of a fine-grained persona and every ``--half`` persona.

The anchors do not depend on hermes's constants: their figures are kept in
``benchmarks/.cache/library_anchors.json`` per (persona, seed, library, corpus) and read
back on a later run (``--fresh-anchors`` runs them again).

``--drift``: the library is the persona's whole relevant history for a two-topic persona
(every relevant paper of the history half, a few hundred), and the person now wants only
the first of the two topics: from the first click on, a paper of the second topic is
disliked, and nDCG@10 is scored with the first topic alone relevant. It measures whether a
large library drowns the person's next dislikes (the question of docs/persona.md, "A large
library").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zlib
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.pop("HERMES_EMBEDDER", None)  # the real model, never the test hash embedder

from embed_cache import CACHE_DIR, CachedMiniLM, serve_from_cache  # noqa: E402
from quality import BUDGETS, LABELS, HermesSystem, apply_overrides, rate_up_to  # noqa: E402
from quality_anchors import ANCHORS, Corpus  # noqa: E402
from quality_data import Persona, load_papers, make_personas, ndcg_at, precision_at, split  # noqa: E402
from quality_fine import TUNING, make_fine_personas  # noqa: E402

#: the anchors' figures per run (they do not depend on hermes's constants)
ANCHOR_CACHE = CACHE_DIR / "library_anchors.json"
#: the share of a library drawn from the papers relevant to the persona
RELEVANT_SHARE = 0.9


def library_of(persona, seed: int, size: int, history, rel) -> list[int]:
    """``size`` history papers: nine in ten relevant to ``persona``, the rest not (fewer
    when the history holds fewer relevant papers: the share stays nine in ten)."""
    rng = np.random.default_rng([seed, size, zlib.crc32(persona.name.encode())])
    relevant = [i for i in history if rel[i] > 0]
    other = [i for i in history if rel[i] == 0]
    n_rel = min(len(relevant), round(RELEVANT_SHARE * size))
    n_other = round(n_rel * (1 - RELEVANT_SHARE) / RELEVANT_SHARE)
    picked = rng.choice(relevant, size=n_rel, replace=False).tolist()
    picked += rng.choice(other, size=min(len(other), n_other), replace=False).tolist()
    return [int(i) for i in rng.permutation(picked)]


def bibtex(papers, indices) -> str:
    """The library as a reference manager exports it: title, abstract, arXiv id."""

    def braced(text: str) -> str:
        return text.replace("{", "(").replace("}", ")")

    return "\n".join(
        f"@misc{{p{i},\n  title = {{{braced(papers[i].title)}}},\n  abstract = {{{braced(papers[i].abstract)}}},\n"
        f"  eprint = {{{papers[i].arxiv_id}}},\n  archivePrefix = {{arXiv}},\n}}\n"
        for i in indices
    )


def give_library(session, papers, library: list[int]) -> None:
    """hermes: the BibTeX file through the import; an anchor: each paper a like."""
    if not library:
        return
    if hasattr(session, "user"):  # a HermesSession
        from hermes_persona.library import import_library

        done = import_library(session.s.db, session.user["name"], bibtex(papers, library))
        assert done.matched.get("arxiv") == len(library) and not done.created, done
    else:
        for index in library:
            session.rate(index, True)


def run_persona(system, persona, seed, history, heldout, rel, papers, library, score_rel=None, click_rel=None):
    """nDCG@10 and P@10 on the held-out half at each budget of clicks after ``library``."""
    session = system(persona, seed)
    give_library(session, papers, library)
    score_rel = score_rel or rel
    click_rel = click_rel or rel
    rated: set[int] = set(library)
    held_rel = [score_rel[i] for i in heldout]
    out = {}
    for budget in BUDGETS:
        rate_up_to(session, len(library) + budget, rated, history, click_rel)
        ranked = session.rank(heldout, 10)
        ranked_rel = [score_rel[i] for i in ranked]
        out[budget] = (ndcg_at(ranked_rel, held_rel), precision_at(ranked_rel))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="9 single-topic + 9 pair personas")
    ap.add_argument(
        "--fine",
        choices=("tuning", "reporting", "all"),
        help="fine-grained personas, one arXiv subject each (benchmarks/quality_fine.py)",
    )
    ap.add_argument("--sizes", default="0,20,100", help="library sizes (0 = no library)")
    ap.add_argument("--systems", default="hermes-notags," + ",".join(a for a in ANCHORS if a != "random"))
    ap.add_argument(
        "--field",
        metavar="PREFIX",
        help="within one field: only the papers whose primary category starts with "
        "PREFIX (cond-mat, math, hep), and the fine-grained personas of its "
        "subjects (both halves)",
    )
    ap.add_argument(
        "--drift",
        action="store_true",
        help="a two-topic persona's whole relevant history as the library, then only the first topic wanted",
    )
    ap.add_argument(
        "--half",
        choices=("choosing", "reporting"),
        help="only the personas constants are chosen on, or only the others",
    )
    ap.add_argument(
        "--fresh-anchors", action="store_true", help="run the anchors again instead of reading their kept figures"
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="MODULE.NAME=VALUE",
        help="a hermes constant (builtins.scorers.AFFINITY_K=5), or the library "
        "component's (library_scorer.HANDOVER=20)",
    )
    args = ap.parse_args(argv)
    apply_overrides(args.set, aliases={"library_scorer": "hermes_persona.library_scorer"})
    started = time.time()

    papers = load_papers()
    if args.field:
        # one archive, as a researcher's listings are: papers re-indexed from 0
        papers = [
            replace(p, index=k) for k, p in enumerate(p for p in papers if p.categories[0].startswith(args.field))
        ]
        personas = [p for p in make_fine_personas("all") if p.subject.startswith(args.field)]
        args.fine = "all"
    else:
        personas = make_fine_personas(args.fine) if args.fine else make_personas(papers)
    if args.half:
        personas = [
            p
            for k, p in enumerate(personas)
            if (p.subject in TUNING if args.fine else k % 2 == 0) == (args.half == "choosing")
        ]
    if args.drift:
        personas = [p for p in personas if len(getattr(p, "topics", ())) == 2]
        personas = personas[::4][:9] if args.quick and not args.half else personas
    elif args.quick and args.fine:
        personas = [p for p in personas if p.style in ("list", "sentence")]
    elif args.quick and not args.half:
        singles = [p for p in personas if len(p.topics) == 1]
        personas = singles + [p for p in personas if len(p.topics) == 2][::4][:9]
    sizes = [int(s) for s in args.sizes.split(",")] if not args.drift else [-1]

    embedder = CachedMiniLM()
    vectors = embedder.embed([p.text for p in papers])
    embedder.save()
    tmp = serve_from_cache(embedder, "hermes-quality-library-")
    names = args.systems.split(",")
    systems, corpus = {}, None
    for name in names:
        if name.startswith("hermes-"):
            kind = {"hermes-tags": "categories", "hermes-both": "both"}.get(name, "none")
            systems[name] = HermesSystem(Path(tmp.name), papers, embedder, tags=kind)
        else:
            corpus = corpus or Corpus([p.text for p in papers], vectors, lambda t: embedder.embed([t])[0])
            systems[name] = (lambda cls, c: lambda persona, seed: cls(c, persona, seed))(ANCHORS[name], corpus)

    # scores[size][system][budget] -> [(ndcg, p@10)], seed-major, persona-minor
    scores = {s: {n: defaultdict(list) for n in names} for s in sizes}
    sizes_seen = defaultdict(list)
    kept = json.loads(ANCHOR_CACHE.read_text()) if ANCHOR_CACHE.exists() else {}
    for seed in range(args.seeds):
        history, heldout = split(len(papers), seed)
        for persona in personas:
            rel = {p.index: persona.relevance(p) for p in papers}
            for size in sizes:
                if size < 0:  # drift: every relevant history paper, then the first topic only
                    library = [i for i in history if rel[i] > 0]
                    now = Persona(persona.name + "/now", persona.topics[:1], persona.interests)
                    wanted = {p.index: now.relevance(p) for p in papers}
                    kw = {"score_rel": wanted, "click_rel": wanted}
                else:
                    library = library_of(persona, seed, size, history, rel) if size else []
                    kw = {}
                sizes_seen[size].append(len(library))
                # one hermes persona per library size (the name is the database's key)
                who = replace(persona, name=f"{persona.name}@{size}")
                for name in names:
                    key = f"{name}|{who.name}|{seed}|{len(papers)}|{zlib.crc32(str(library).encode())}"
                    result = kept.get(key) if name in ANCHORS and not args.fresh_anchors else None
                    if result is None:
                        result = run_persona(systems[name], who, seed, history, heldout, rel, papers, library, **kw)
                        if name in ANCHORS:
                            kept[key] = result
                    result = {int(b): tuple(v) for b, v in result.items()}
                    for budget, value in result.items():
                        scores[size][name][budget].append(value)
        print(f"seed {seed} done ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
        if any(name in ANCHORS for name in names):
            ANCHOR_CACHE.parent.mkdir(parents=True, exist_ok=True)
            # merged with what other runs kept meanwhile
            kept = {**(json.loads(ANCHOR_CACHE.read_text()) if ANCHOR_CACHE.exists() else {}), **kept}
            ANCHOR_CACHE.write_text(json.dumps(kept))
    try:  # several runs at once share the cache file: a lost race loses no figures
        embedder.save()
    except OSError as error:
        print(f"embedding cache not saved: {error}", file=sys.stderr)

    for size in sizes:
        n = np.mean(sizes_seen[size])
        title = (
            f"drift: the whole relevant history as the library (mean {n:.0f} papers), then only the first topic wanted"
            if size < 0
            else f"library of {size} papers (mean {n:.0f}: a persona whose history holds fewer "
            "relevant papers gets fewer)"
            if size
            else "no library"
        )
        print(
            f"\n### {title}; {len(personas)} personas"
            + (f" ({args.half} half)" if args.half else "")
            + f" x {args.seeds} seeds"
            + (f"; {' '.join(args.set)}" if args.set else "")
            + "\n"
        )
        print(report(scores[size], names))
    print(f"\n{time.time() - started:.0f} s; texts embedded by the model this run: {embedder.calls}")
    return 0


def report(scores, names) -> str:
    lines = []
    for metric, k in (("nDCG@10", 0), ("P@10", 1)):
        lines.append(f"\n{metric} (± standard error)\n")
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
        lines.append("\nnDCG@10, hermes minus the best anchor at that budget, paired (± standard error)\n")
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


if __name__ == "__main__":
    raise SystemExit(main())
