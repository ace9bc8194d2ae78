"""Does a background refresh slow the web UI down? Page latency of a real ``hermes web``
while its refresh fetches, parses and embeds (the real MiniLM model), against the same
page idle, in the same run.

Set-up: the bundled sample feeds; one arXiv listing is ingested up front (so the feed page
has items and the persona's interests vector is cached), the other two (220 papers) are not.
``hermes web --no-refresh`` starts; ``GET /feed`` is timed ``--idle`` times; then "Refresh
now" (a POST, as the button does) runs the ingest of the other feeds in the background child
process, and ``GET /feed`` is timed back to back until it ends; then idle again. Medians
and the ratio during / idle are printed (a ratio, not an absolute: these machines are shared).

    .venv/bin/python benchmarks/bench_refresh.py
    .venv/bin/python benchmarks/bench_refresh.py --idle 40
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from process_support import free_port, hermes_command, wait_for_port  # noqa: E402


def timed(client: httpx.Client, path: str) -> float:
    start = time.perf_counter()
    response = client.get(path)
    response.raise_for_status()
    return (time.perf_counter() - start) * 1000


def summary(label: str, values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"| {label} | {len(values)} | {statistics.median(values):.0f} | {p95:.0f} | {values[-1]:.0f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=30, help="idle requests before and after")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="hermes-bench-refresh-"))
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(HERMES_HOME=str(home), HERMES_LOAD_ENTRYPOINTS="0", HF_HUB_OFFLINE="1")
    os.environ.update(env)
    os.environ.pop("HERMES_EMBEDDER", None)

    from hermes.contract import CandidateQuery
    from hermes.ingest.feedlist import add_feeds, sample_feed_paths
    from hermes.ingest.pipeline import run_ingest
    from hermes.ranking.rank import rank
    from hermes.storage.db import get_db
    from hermes.storage.records import create_user

    db_path = home / "hermes.db"
    db = get_db(db_path)
    samples = sample_feed_paths()
    first = [p for p in samples if "quantum" in p.name]
    add_feeds(db, [(str(p), None) for p in first])
    run_ingest(db)
    user = create_user(db, "ada", "quantum error correction, superconducting qubits, decoders")
    rank(db, user, CandidateQuery(since_days=None), limit=10)  # caches the interests vector
    add_feeds(db, [(str(p), None) for p in samples if p not in first])
    waiting = db.execute("SELECT count(*) FROM feeds WHERE last_fetched IS NULL").fetchone()[0]
    db.conn.close()

    port = free_port()
    proc = subprocess.Popen(
        [*hermes_command(), "web", "--db", str(db_path), "--port", str(port), "--no-refresh"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(proc, port)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=120) as client:
            page = client.get("/feed?user=ada&days=all").text  # warm: matrix, templates
            token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
            path = "/feed?user=ada&days=all"
            idle = [timed(client, path) for _ in range(args.idle)]
            started = time.perf_counter()
            answer = client.post(
                "/refresh", data={"csrf_token": token}, headers={"Origin": base, "Accept": "application/json"}
            )
            assert answer.json().get("started"), answer.text
            during = []
            while True:
                state = client.get("/api/refresh").json()
                if not (state["running"] or state["requested"]) and during:
                    break
                during.append(timed(client, path))
            took = time.perf_counter() - started
            after = [timed(client, path) for _ in range(args.idle)]
            last = state.get("last") or {}
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    print(
        f"background refresh of {waiting} feeds: {last.get('new_items')} new items, "
        f"{last.get('embedded')} embedded (real MiniLM), {took:.1f} s"
    )
    print()
    print("| GET /feed?user=ada&days=all | requests | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    print(summary("idle, before", idle))
    print(summary("while the refresh runs", during))
    print(summary("idle, after (more items)", after))
    base_p50 = statistics.median(idle + after)
    print()
    print(f"median during / median idle: {statistics.median(during) / base_p50:.2f}")


if __name__ == "__main__":
    main()
