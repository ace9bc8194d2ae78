"""``kill -9`` of ``hermes ingest`` at random points, then a normal run: nothing lost.

    .venv/bin/python benchmarks/hardening/kill_ingest.py [--trials 20] [--feeds 40] [--items 150]

Each trial starts from no database at all: ``feeds.toml`` in the data directory lists the
feeds (half local files, half served with ETags on a loopback HTTP server), so a kill can
land in the migrations, the seeding, the fetches, the item writes or the embedding. After
the SIGKILL the database must pass ``PRAGMA integrity_check``; a third of the trials kill
the recovery run once more. Then one run to completion must exit 0 and leave every
distinct item stored once (guid and arXiv id unique), every item embedded, the FTS index
consistent and no feed in error. Prints a markdown table and a summary line; exit status 1
if any trial broke an invariant.
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FeedServer, Route, child_env, hermes, hermes_command, integrity, invariants, make_feeds, table


def write_world(root: Path, server: FeedServer, n_feeds: int, items: int) -> tuple[Path, int]:
    """Feeds on disk and on the server, listed in ``root/home/feeds.toml``."""
    bodies, distinct = make_feeds(n_feeds, items)
    home = root / "home"
    (root / "feeds").mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    lines = []
    for n, body in enumerate(bodies):
        if n % 2:
            url = server.add(
                f"/feed{n}.xml", Route(body=body, etag=f'"v{n}"', headers={"Content-Type": "application/rss+xml"})
            )
        else:
            path = root / "feeds" / f"feed{n}.xml"
            path.write_bytes(body)
            url = str(path)
        lines.append(f'[[feeds]]\nurl = "{url}"\n')
    (home / "feeds.toml").write_text("\n".join(lines))
    return home, distinct


def spawn(db: Path, home: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*hermes_command(), "ingest", "--db", str(db), "--json"],
        env=child_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def kill_after(db: Path, home: Path, delay: float) -> dict:
    """Start an ingest, SIGKILL it after ``delay`` s; say where it was."""
    proc = spawn(db, home)
    try:
        proc.wait(timeout=delay)
        finished = True
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        finished = False
    state = {"finished": finished, "rc": proc.returncode}
    if db.exists():
        import sqlite3

        conn = sqlite3.connect(str(db), timeout=30)
        try:
            has_items = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'items'").fetchone()
            if has_items:
                state["stored"] = conn.execute("SELECT count(*) FROM items").fetchone()[0]
                state["embedded"] = conn.execute("SELECT count(*) FROM items WHERE embedding IS NOT NULL").fetchone()[0]
        finally:
            conn.close()
    return state


def stage(state: dict, distinct: int) -> str:
    if state["finished"]:
        return "after exit"
    if "stored" not in state:
        return "before schema"
    if state["stored"] == 0:
        return "migrate/seed/fetch"
    if state["stored"] < distinct:
        return "storing items"
    if state["embedded"] < distinct:
        return "embedding"
    return "finishing"


def trial(k: int, root: Path, home: Path, distinct: int, full: float, rng: random.Random) -> dict:
    db = root / f"trial{k}.db"
    for _ in range(5):  # a run that finished before the kill is no trial: draw again
        delay = rng.uniform(0.05, full * 0.95)
        first = kill_after(db, home, delay)
        if not first["finished"]:
            break
        remove(db)
    row = {
        "trial": k,
        "kill_at_s": f"{delay:.2f}",
        "stage": stage(first, distinct),
        "stored_at_kill": first.get("stored", "-"),
        "embedded_at_kill": first.get("embedded", "-"),
    }
    row["integrity_after_kill"] = integrity(db) if db.exists() else "no file"
    if rng.random() < 1 / 3:
        second = kill_after(db, home, rng.uniform(0.05, full))
        row["second_kill"] = stage(second, distinct)
        row["integrity_after_kill"] += "/" + integrity(db)
    else:
        row["second_kill"] = "-"
    done = hermes(["ingest", "--db", str(db), "--json"], home)
    inv = invariants(db)
    row.update(
        next_run_rc=done.returncode,
        items=inv["items"],
        dup=inv["dup_guid"] + inv["dup_arxiv"],
        unembedded=inv["unembedded"],
        fts=inv["fts"],
        failing=inv["feeds_failing"],
    )
    after_kill_ok = all(part in ("ok", "no file") for part in row["integrity_after_kill"].split("/"))
    row["ok"] = (
        done.returncode == 0
        and after_kill_ok
        and inv["integrity"] == "ok"
        and inv["items"] == distinct
        and row["dup"] == 0
        and inv["unembedded"] == 0
        and inv["fts"] == "ok"
        and inv["feeds_failing"] == 0
    )
    if not row["ok"]:
        row["stderr"] = (done.stderr or "")[-300:]
    remove(db)
    return row


def remove(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def run(trials: int, n_feeds: int, items: int, seed: int = 1, out=print) -> list[dict]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, FeedServer() as server:
        root = Path(tmp)
        home, distinct = write_world(root, server, n_feeds, items)
        start = time.perf_counter()
        base = hermes(["ingest", "--db", str(root / "baseline.db"), "--json"], home)
        full = time.perf_counter() - start
        if base.returncode != 0:
            raise SystemExit(f"baseline run failed: {base.stderr[-500:]}")
        out(f"baseline: {distinct} distinct items from {n_feeds} feeds in {full:.2f} s (process start to exit)\n")
        rows = [trial(k, root, home, distinct, full, rng) for k in range(1, trials + 1)]
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--feeds", type=int, default=40)
    ap.add_argument("--items", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rows = run(args.trials, args.feeds, args.items, args.seed)
    cols = [
        "trial",
        "kill_at_s",
        "stage",
        "stored_at_kill",
        "embedded_at_kill",
        "second_kill",
        "integrity_after_kill",
        "next_run_rc",
        "items",
        "dup",
        "unembedded",
        "fts",
        "ok",
    ]
    print(table(rows, cols))
    bad = [r for r in rows if not r["ok"]]
    stages = {}
    for r in rows:
        stages[r["stage"]] = stages.get(r["stage"], 0) + 1
    print(
        f"\n{len(rows) - len(bad)}/{len(rows)} trials kept every invariant; kills landed in: "
        + ", ".join(f"{k} {v}" for k, v in sorted(stages.items()))
    )
    for r in bad:
        print("FAILED:", r)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
