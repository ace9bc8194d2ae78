"""fp32 vs bf16-autocast encoding speed of all-MiniLM-L6-v2 on this CPU, same run.

Encodes 128 arXiv abstracts (title + ". " + abstract) from ../shared/data/arxiv-2000 with
both precisions, alternating, and prints the median times, their ratio and the cosine
between the two sets of vectors. hermes uses bf16 by default only where the CPU computes it
natively (``hermes.embed.cpu_has_fast_bf16``).

    .venv/bin/python benchmarks/bench_embed_precision.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv-2000" / "arxiv_2000_topics.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n", type=int, default=128)
    args = parser.parse_args()

    from hermes.embed import MiniLMEmbedder, cpu_has_fast_bf16

    texts = []
    with open(DATA, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            texts.append(f"{rec['title']}. {rec['abstract']}")
            if len(texts) >= args.n:
                break
    embedder = MiniLMEmbedder()

    def encode(bf16: bool):
        os.environ["HERMES_EMBED_BF16"] = "1" if bf16 else "0"
        return embedder.embed(texts)

    encode(False), encode(True)  # load the model and warm both paths
    t32, t16 = [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        a = encode(False)
        t32.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = encode(True)
        t16.append(time.perf_counter() - t)
    cos = (a * b).sum(axis=1)
    m32, m16 = statistics.median(t32), statistics.median(t16)
    print(f"CPU has native bf16: {cpu_has_fast_bf16()}")
    print("| precision | median for %d abstracts | abstracts/s |" % len(texts))
    print("| --- | ---: | ---: |")
    print(f"| fp32 | {m32:.2f} s | {len(texts) / m32:.1f} |")
    print(f"| bf16 autocast | {m16:.2f} s | {len(texts) / m16:.1f} |")
    print(f"\nspeed-up {m32 / m16:.2f}x; cosine bf16 vs fp32: min {cos.min():.6f}, mean {cos.mean():.6f}")


if __name__ == "__main__":
    main()
