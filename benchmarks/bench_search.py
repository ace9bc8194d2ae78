"""search_feed speed over a large archive (default 100k items), beside a bare LIKE scan.

Reuses the digest benchmark's synthetic archive (titles "Item N about topic T", 384-d
topic-centred embeddings, Zipf tags) and adds a distinctive word to 1% of the titles, so a
selective query and a common one can both be timed. Figures are medians of ``--runs`` warm
calls through the tool function (the path an agent reaches), plus the first call in the
process, and two baselines in the same run: the bare ``LIKE`` scan of the first word (what
search did before whole words went through the index) and the bare FTS5 ``MATCH`` of the
query.

    .venv/bin/python benchmarks/bench_search.py --items 100000 --runs 7
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HERMES_EMBEDDER", "hash")
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")

from bench_digest import median_ms, persona, synthesize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    from hermes.storage.db import get_db
    from hermes.storage.transactions import write_transaction
    from hermes.tools import call_tool, collect_tools

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HERMES_HOME"] = tmp
        db = get_db(Path(tmp) / "bench.db")
        synthesize(db, args.items)
        with write_transaction(db):
            db.execute("UPDATE items SET title = title || ' zeolite' WHERE id % 100 = 0")
        user = persona(db)
        search = collect_tools()["search_feed"]

        def run(query):
            return call_tool(db, search, {"user": user["name"], "query": query, "limit": 10})

        t0 = time.perf_counter()
        first = run("zeolite")
        first_ms = (time.perf_counter() - t0) * 1000
        assert first["ok"], first
        rows = []
        for label, query in (
            ("selective word (1% of items)", "zeolite"),
            ("common word (every item)", "topic"),
            ("two words", "zeolite topic"),
        ):
            (wall, cpu), result = median_ms(lambda q=query: run(q), args.runs)
            (bare, _), _ = median_ms(
                lambda q=query.split()[0]: db.execute(
                    "SELECT id FROM items WHERE title LIKE ? OR summary LIKE ?", [f"%{q}%", f"%{q}%"]
                ).fetchall(),
                args.runs,
            )
            (fts, _), _ = median_ms(
                lambda q=query: db.execute(
                    "SELECT rowid FROM items_fts WHERE items_fts MATCH ?", [" AND ".join(f'"{w}"*' for w in q.split())]
                ).fetchall(),
                args.runs,
            )
            rows.append((label, wall, cpu, bare, fts, len(result["results"])))
        print(
            f"search_feed over {args.items:,} items; first call in the process "
            f"(matrix load + ranking): {first_ms:,.0f} ms\n"
        )
        print(
            "| query | search_feed warm, median | CPU | bare LIKE scan (first word) | ratio | "
            "bare FTS5 match | ratio | results |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for label, wall, cpu, bare, fts, n in rows:
            print(
                f"| {label} | {wall:,.0f} ms | {cpu:,.0f} ms | {bare:,.0f} ms | "
                f"{wall / bare:.1f}x | {fts:,.0f} ms | {wall / fts:.1f}x | {n} |"
            )


if __name__ == "__main__":
    main()
