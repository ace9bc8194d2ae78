"""A quick screen of how a library alone ranks, at 0 clicks (issue 38), in numpy.

    .venv/bin/python benchmarks/library_screen.py --half choosing

The library of benchmarks/quality_library.py (``library_of``: 20 or 100 papers of the
history half, nine in ten relevant), its MiniLM vectors from the cache, and the held-out
half ranked by each score below; nDCG@10, mean over the half's multi-field personas and
seeds 0 and 1. Not hermes's ranking path (no blend, no core components, no clicks): a
screen for which ideas are worth a run of quality_library.py, which is the measurement.

- ``lr``: the library component's model (logistic regression, C 0.1, balanced, against as
  many random items as the library has papers, at least 50, weight 0.9);
- ``knnK``: the mean cosine to the K nearest library papers, beyond the archive's mean;
- ``lr+knnK@a``: ``(1 - a) z(lr) + a z(knnK)``; ``+p``: plus 0.5 z(cosine to the best
  interests clause) (the component's INTEREST_MIX, coherence taken as 1);
- ``protoM``: the kNN over M k-means centroids of the library (library_scorer._prototypes).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.pop("HERMES_EMBEDDER", None)

from embed_cache import CachedMiniLM  # noqa: E402
from quality_data import load_papers, make_personas, ndcg_at, split  # noqa: E402
from quality_library import library_of  # noqa: E402

from hermes.ranking import logistic  # noqa: E402
from hermes.ranking.interests import interest_clauses, wanted_text  # noqa: E402


def z(x: np.ndarray) -> np.ndarray:
    s = x.std()
    return (x - x.mean()) / s if s > 0 else x * 0


def main(argv=None) -> int:
    from hermes_persona.library_scorer import _prototypes

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--half", choices=("choosing", "reporting"), default="choosing")
    args = ap.parse_args(argv)
    papers = load_papers()
    embedder = CachedMiniLM()
    V = embedder.embed([p.text for p in papers]).astype(np.float64)
    mean = V.mean(axis=0)
    personas = [p for k, p in enumerate(make_personas(papers)) if k % 2 == (0 if args.half == "choosing" else 1)]
    results: dict = {}
    for seed in (0, 1):
        history, heldout = split(len(papers), seed)
        for persona in personas:
            rel = {p.index: persona.relevance(p) for p in papers}
            text = persona.interests
            clauses = interest_clauses(text)
            C = embedder.embed(clauses if len(clauses) > 1 else [wanted_text(text) or text])
            profile = (V @ C.T.astype(np.float64)).max(axis=1)
            for size in (20, 100):
                library = library_of(persona, seed, size, history, rel)
                rng = np.random.default_rng([seed, size, 7])
                others = np.setdiff1d(np.arange(len(papers)), library)
                negatives = rng.choice(others, size=max(50, len(library)), replace=False)
                X = V[list(library) + list(negatives)]
                y = np.r_[np.ones(len(library)), np.zeros(len(negatives))]
                w = np.r_[np.ones(len(library)), 0.9 * np.ones(len(negatives))]
                coef, _ = logistic.fit(X, y, C=0.1, sample_weight=w)
                lr = V @ coef
                beyond = V @ V[library].T - (V @ mean)[:, None]
                knn = {k: np.sort(beyond, axis=1)[:, -k:].mean(axis=1) for k in (3, 5, 10)}
                scores = {"lr": lr, "lr+p": z(lr) + 0.5 * z(profile), "centroid": beyond.mean(axis=1)}
                for k, column in knn.items():
                    scores[f"knn{k}"] = column
                    for a in (0.5, 0.8, 1.0):
                        scores[f"lr+knn{k}@{a}+p"] = z((1 - a) * z(lr) + a * z(column)) + 0.5 * z(profile)
                for m in (16, 32, 64):
                    P = _prototypes(V[library].astype(np.float32), m).astype(np.float64)
                    near = np.sort(V @ P.T - (V @ mean)[:, None], axis=1)[:, -min(5, len(P)) :]
                    scores[f"proto{m}+lr+knn5@0.5+p"] = z(0.5 * z(lr) + 0.5 * z(near.mean(axis=1))) + 0.5 * z(profile)
                held_rel = [rel[i] for i in heldout]
                for name, score in scores.items():
                    top = np.array(heldout)[np.argsort(-score[heldout], kind="stable")[:10]]
                    results.setdefault((size, name), []).append(ndcg_at([rel[i] for i in top], held_rel))
    for size in (20, 100):
        print(f"\nlibrary of {size}, {args.half} half, {len(personas)} personas x 2 seeds, 0 clicks\n")
        print("| score | nDCG@10 |\n| --- | --- |")
        for (s, name), values in sorted(results.items(), key=lambda kv: -np.mean(kv[1])):
            if s == size:
                print(f"| {name} | {np.mean(values):.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
