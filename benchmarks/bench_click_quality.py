"""The quality protocol (benchmarks/quality.py) with the top-10 overlap of every held-out
ranking served after a click with the exact ranking of the same clicks (issue 36).

Each held-out ranking (10 items) that the incremental path served from the previous
clicks' scores is ranked again with every row computed exactly (``score_cache.INCREMENTAL``
off, what it served set aside and put back: the protocol goes on as it would), and the
overlap of the two top 10s is counted. Every other argument goes to quality.py, e.g. a
short list of 20 of the ~1,000 candidates (the shipped 1,000 + 1,000 hold all of them):

    .venv/bin/python benchmarks/bench_click_quality.py --systems hermes-tags,hermes-notags \
        --set ranking.rank.STALE_RESCORE=20 --set ranking.rank.STALE_SAMPLE=100
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality

from hermes.builtins import score_cache

OVERLAPS: list[int] = []
_rank = quality.HermesSession.rank


def rank(self, pool, k):
    served = _rank(self, pool, k)
    if k == 10 and score_cache._STALE:
        score_cache.settle()
        kept = score_cache._STALE.copy()
        score_cache._STALE.clear()
        score_cache.INCREMENTAL = False
        try:
            exact = _rank(self, pool, k)
        finally:
            score_cache.INCREMENTAL = True
            score_cache._STALE.update(kept)
        OVERLAPS.append(len(set(served[:10]) & set(exact[:10])))
    return served


def main(argv=None) -> int:
    quality.HermesSession.rank = rank
    code = quality.main(argv)
    if OVERLAPS:
        print(
            f"\ntop-10 overlap with the exact ranking over {len(OVERLAPS)} held-out rankings "
            f"served after clicks: mean {statistics.mean(OVERLAPS):.3f} of 10, min "
            f"{min(OVERLAPS)}, {sum(o == 10 for o in OVERLAPS)} identical sets"
        )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
