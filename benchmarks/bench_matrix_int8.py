"""int8 storage with a per-row scale, multiplied natively by ONNX Runtime, against numpy's
float32 product in the same process (issue 20: RSS at a million items).

ONNX Runtime's ``DynamicQuantizeMatMul`` (com.microsoft) quantizes the query columns per
tensor at run time and multiplies them with an int8 matrix stored transposed (384 × n) and a
per-item scale, without widening the matrix. For 1, 9 and 21 query columns (one score; the
profile's columns; the classifier and the liked items): medians of 9 products, whether the
approximate top 100 equals the float32 one, and whether an exact float32 re-score of the
approximate top 1,000 restores it. Synthetic unit vectors (speed and memory only).

    .venv/bin/python benchmarks/bench_matrix_int8.py 1000000
"""

import resource
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

n, d = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000, 384
rng = np.random.default_rng(0)
M = rng.standard_normal((n, d), dtype=np.float32)
M /= np.linalg.norm(M, axis=1, keepdims=True)
scale = (np.abs(M).max(axis=1) / 127).astype(np.float32)
I8T = np.ascontiguousarray(np.round(M / scale[:, None]).astype(np.int8).T)  # (d, n)


def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


# DynamicQuantizeMatMul: A float (m, d) quantized per tensor at run time, B int8 (d, n), per-column scale
node = helper.make_node("DynamicQuantizeMatMul", ["A", "B", "b_scale"], ["Y"], domain="com.microsoft")
g = helper.make_graph(
    [node],
    "g",
    [
        helper.make_tensor_value_info("A", TensorProto.FLOAT, ["m", d]),
        helper.make_tensor_value_info("B", TensorProto.INT8, [d, "n"]),
        helper.make_tensor_value_info("b_scale", TensorProto.FLOAT, ["n"]),
    ],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["m", "n"])],
)
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
so = ort.SessionOptions()
so.intra_op_num_threads = 2
sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def med(f, r=9):
    ts = []
    for _ in range(r):
        s = time.perf_counter()
        f()
        ts.append(time.perf_counter() - s)
    return statistics.median(ts) * 1000


for m in (1, 9, 21):
    Q = M[rng.integers(0, n, m)] - M[:1000].mean(axis=0)
    Q = np.ascontiguousarray(Q, dtype=np.float32)
    f32 = med(lambda: Q @ M.T)
    i8 = med(lambda: sess.run(None, {"A": Q, "B": I8T, "b_scale": scale}))
    f32b = med(lambda: Q @ M.T)
    exact = Q @ M.T
    approx = sess.run(None, {"A": Q, "B": I8T, "b_scale": scale})[0]
    same = rescored = 0
    for j in range(m):
        te = np.argsort(-exact[j])[:100]
        ta = np.argsort(-approx[j])[:100]
        same += np.array_equal(te, ta)
        short = np.argpartition(-approx[j], 1000)[:1000]
        rescored += np.array_equal(te, short[np.argsort(-exact[j][short])][:100])
    print(
        f"m={m}: f32 numpy {f32:.1f}/{f32b:.1f} ms | int8 ORT DynamicQuantizeMatMul {i8:.1f} ms "
        f"({i8 / ((f32 + f32b) / 2):.2f}x) | top100 identical {same}/{m}, after f32 re-score of top 1000 {rescored}/{m} | "
        f"max abs err {np.abs(approx - exact).max():.2e}",
        flush=True,
    )
print("peak rss MB", rss(), "(f32 matrix", M.nbytes >> 20, "MB, int8", I8T.nbytes >> 20, "MB)")
