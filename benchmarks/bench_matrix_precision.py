"""Reduced-precision storage for the ranking matrix, measured before choosing (issue 20).

For float16, bfloat16 (truncated float32) and int8 (per-row scale) copies of a database's
matrix: the time of one product in blocks that are widened to float32 (numpy has no
low-precision BLAS) against the float32 ``M @ q`` in the same process, medians; and for 5
query vectors, whether the approximate top 100 equals the exact one, before and after an
exact re-score of the approximate top 1000.

    .venv/bin/python benchmarks/bench_matrix_precision.py benchmarks/.cache/rank-100000-v1.db
"""

import os
import resource
import statistics
import sys
import time

os.environ["HERMES_LOAD_ENTRYPOINTS"] = "0"
import numpy as np
from threadpoolctl import threadpool_limits

from hermes.embed import get_embedder
from hermes.ranking.matrix import get_matrix
from hermes.storage.db import get_db

db = get_db(sys.argv[1])
e = get_embedder()
t = time.perf_counter()
m = get_matrix(db, e.name, e.dimension)
load = time.perf_counter() - t
M = m.vectors
print(f"n={len(M):,} load {load:.2f}s rss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
rng = np.random.default_rng(0)
qs = M[rng.integers(0, len(M), 5)] - m.mean_vector()


def med(f, r=7):
    ts = []
    for _ in range(r):
        s = time.perf_counter()
        f()
        ts.append(time.perf_counter() - s)
    return statistics.median(ts) * 1000


H = M.astype(np.float16)
B = (M.view(np.uint32) >> 16).astype(np.uint16)  # bf16, truncated
scale = np.abs(M).max(axis=1, keepdims=True) / 127
I8 = np.round(M / scale).astype(np.int8)
s8 = scale[:, 0]
BL = 512


def blocked(conv, q):
    out = np.empty(len(M), np.float32)
    with threadpool_limits(1, "blas"):
        for a in range(0, len(M), BL):
            np.dot(conv(a, a + BL), q, out=out[a : a + BL])
    return out


f16 = lambda a, b: H[a:b].astype(np.float32)
bf16 = lambda a, b: (B[a:b].astype(np.uint32) << 16).view(np.float32)
i8 = lambda a, b: I8[a:b].astype(np.float32)
q = qs[0]
print(
    f"f32 gemv {med(lambda: M @ q):.1f} ms | f16 blocked {med(lambda: blocked(f16, q)):.1f} | "
    f"bf16 blocked {med(lambda: blocked(bf16, q)):.1f} | int8 blocked {med(lambda: blocked(i8, q) * s8):.1f} | f32 gemv {med(lambda: M @ q):.1f}"
)
for name, approx in (
    ("f16", lambda q: blocked(f16, q)),
    ("bf16", lambda q: blocked(bf16, q)),
    ("int8", lambda q: blocked(i8, q) * s8),
):
    same, within = [], []
    for q in qs:
        exact = M @ q
        a = approx(q)
        te = np.argsort(-exact)[:100]
        ta = np.argsort(-a)[:100]
        same.append(np.array_equal(te, ta))
        short = np.argsort(-a)[:1000]  # exact re-score of a short list
        within.append(np.array_equal(te, short[np.argsort(-exact[short])][:100]))
        err = np.abs(a - exact).max()
    print(
        f"{name}: top-100 identical {sum(same)}/{len(qs)}; after exact re-score of the top 1000 {sum(within)}/{len(qs)}; max abs error {err:.2e}"
    )
