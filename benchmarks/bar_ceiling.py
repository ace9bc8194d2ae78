"""How precise can any bar be on the interests text alone, inside one field (issue 30)?

    .venv/bin/python benchmarks/bar_ceiling.py            # prints the table
    .venv/bin/python benchmarks/bar_ceiling.py --write    # appends it to benchmarks/results/bar.md

Before the first click the bar has only the interests text to go on: each item's cosine to
the clause it matches best (the ``interest`` figure) and the text's BM25 over the item (the
profile's lexical share). For the one-field archives of ``bar_field.py`` (math, cond-mat,
hep, without categories) and their fine personas, this takes the items of every persona
with the highest figures — the top 0.5 %, 1 %, 2 %, 5 % of all (persona, item) pairs, one
threshold for all personas, as a bar is — and reports the share that is relevant: the
precision a bar on that figure would have at that many items. A bar that lets through this
share of the items cannot be more precise on that figure (one threshold per persona, a
quantile of its own figures, spreads the same share unevenly: measured lower, 0.77 at the
top 1 % on the choosing half), so the table bounds what "strong" can mean before any click.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.pop("HERMES_EMBEDDER", None)  # the real model, never the test hash embedder

from bar_field import FIELDS, field_of  # noqa: E402
from embed_cache import CachedMiniLM  # noqa: E402
from quality import HermesSystem  # noqa: E402
from quality_data import load_papers  # noqa: E402
from quality_fine import TUNING, make_fine_personas  # noqa: E402

SHARES = (0.005, 0.01, 0.02, 0.05)


def collect() -> list[dict]:
    from hermes.ranking.interests import interests_vectors, wanted_text
    from hermes.ranking.lexical import lexical_scores
    from hermes.ranking.matrix import get_matrix
    from hermes.storage.records import create_user

    papers, embedder = load_papers(), CachedMiniLM()
    personas, out = make_fine_personas("all"), []
    with tempfile.TemporaryDirectory(prefix="hermes-ceiling-") as tmp:
        for field, topics in FIELDS.items():
            mine = [p for p in papers if p.topic in topics]
            local = [
                type(p)(
                    k,
                    *[getattr(p, f) for f in ("arxiv_id", "title", "abstract", "categories", "topic", "cross_topics")],
                )
                for k, p in enumerate(mine)
            ]
            (Path(tmp) / field).mkdir()
            system = HermesSystem(Path(tmp) / field, local, embedder, tags="none")
            matrix = get_matrix(system.db, embedder.name, embedder.dimension)
            rows = matrix.lookup(np.array([system.item_of[p.index] for p in local]))
            vectors = matrix.exact_rows(rows).astype(np.float64)
            for persona in personas:
                if field_of(persona.subject) != field:
                    continue
                user = create_user(system.db, persona.name, persona.interests)
                embedded = interests_vectors(system.db, user, embedder)
                clauses = embedded[1:] if len(embedded) > 1 else embedded
                bm25 = lexical_scores(system.db, wanted_text(persona.interests), matrix)
                out.append(
                    {
                        "choosing": persona.subject in TUNING,
                        "interest": (vectors @ clauses.T).max(axis=1),
                        "bm25": np.zeros(len(rows)) if bm25 is None else np.asarray(bm25)[rows],
                        "relevant": np.array([persona.relevance(p) > 0 for p in local]),
                    }
                )
    embedder.save()
    return out


def precision_at(scores: list[np.ndarray], relevant: list[np.ndarray]) -> list[float]:
    pooled, rel = np.concatenate(scores), np.concatenate(relevant)
    return [float(rel[pooled >= np.quantile(pooled, 1 - share)].mean()) for share in SHARES]


def report(runs: list[dict]) -> str:
    lines = [
        "| half | figure | " + " | ".join(f"top {s:.1%}" for s in SHARES) + " |",
        "| --- | --- | " + " | ".join("---" for _ in SHARES) + " |",
    ]
    for half, want in (("choosing", True), ("reporting", False)):
        mine = [r for r in runs if r["choosing"] == want]
        rel = [r["relevant"] for r in mine]
        figures = {"interest": [r["interest"] for r in mine], "BM25": [r["bm25"] for r in mine]}
        for w in (0.05, 0.1, 0.2):
            figures[f"interest + {w} log(1 + BM25)"] = [r["interest"] + w * np.log1p(r["bm25"]) for r in mine]
        base = float(np.concatenate(rel).mean())
        lines.append(f"| {half} | (relevant share of all pairs: {base:.2f}) |" + " |" * len(SHARES))
        for name, scores in figures.items():
            cells = " | ".join(f"{p:.2f}" for p in precision_at(scores, rel))
            lines.append(f"| {half} | {name} | {cells} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="append the table to benchmarks/results/bar.md")
    args = parser.parse_args(argv)
    text = report(collect())
    print(text)
    if args.write:
        path = HERE / "results" / "bar.md"
        old = path.read_text().split("\n## The ceiling before the first click")[0].rstrip()
        path.write_text(
            f"{old}\n\n## The ceiling before the first click\n\n"
            "`.venv/bin/python benchmarks/bar_ceiling.py --write`: the share of "
            "relevant items among the top pairs by each figure, one threshold for "
            f"all personas of the one-field archives.\n\n{text}\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
