"""Disk full, read-only and locked databases against real ``hermes`` processes.

    sudo .venv/bin/python benchmarks/hardening/faults.py [--skip-lock]

- **disk full**: the database lives on a tmpfs of 1, 2, 4 and 8 MB (needs root for ``mount``);
  ``hermes ingest`` of 10 feeds (1,500 items, ~9 MB of database, so the 8 MB case fills up
  while embedding) must stop with one line on stderr and exit 1, the file must pass ``integrity_check``, every feed must be all or
  nothing, and after the tmpfs grows (``remount,size=64m``) the next run must complete.
- **0 bytes free**: a complete database on a tmpfs filled to the last byte by another file;
  opening it fails in SQLite as "disk I/O error" (no room for its WAL index). ``hermes feeds
  list``, ``persona create`` and ``ingest`` must print one line that says the disk is full,
  ``hermes web`` must answer 500 saying so, and once the filler is gone everything works.
- **read-only**: the tmpfs is remounted read-only under a complete database; ``hermes
  ingest``, ``hermes persona create`` and ``hermes feeds add`` must each print one line and
  exit 1, and nothing may change.
- **locked**: another process holds ``BEGIN EXCLUSIVE`` for 35 s, past the 30 s busy
  timeout; ``hermes persona create`` and ``hermes ingest`` must refuse cleanly and write
  nothing.

Prints a markdown table; exit status 1 if any check failed.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import child_env, free_port, hermes, hermes_command, integrity, invariants, make_feeds, table, wait_for_port

N_FEEDS, PER_FEED = 10, 150


def one_line_error(proc: subprocess.CompletedProcess) -> bool:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in proc.stderr


def world(root: Path) -> tuple[Path, list[Path], int]:
    bodies, distinct = make_feeds(N_FEEDS, PER_FEED)
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, body in enumerate(bodies):
        path = root / f"feed{n}.xml"
        path.write_bytes(body)
        paths.append(path)
    (home / "feeds.toml").write_text("".join(f'[[feeds]]\nurl = "{p}"\n' for p in paths))
    return home, paths, distinct


def all_or_nothing(db: Path, paths: list[Path]) -> bool:
    conn = sqlite3.connect(str(db))
    try:
        for p in paths:
            row = conn.execute("SELECT id, etag FROM feeds WHERE url = ?", [str(p)]).fetchone()
            if row is None:
                continue  # not seeded yet: nothing at all was written
            stored = conn.execute("SELECT count(*) FROM items WHERE feed_id = ?", [row[0]]).fetchone()[0]
            entries = p.read_bytes().count(b"<item>")
            if (row[1] is None and stored) or (row[1] is not None and not 0 < stored <= entries):
                return False
        return True
    finally:
        conn.close()


def stored(db: Path) -> str:
    if not db.exists():
        return "no file"
    conn = sqlite3.connect(str(db))
    try:
        n = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        e = conn.execute("SELECT count(*) FROM items WHERE embedding IS NOT NULL").fetchone()[0]
        return f"{n} items, {e} embedded"
    except sqlite3.OperationalError:
        return "no schema"
    finally:
        conn.close()


def mount(mnt: Path, options: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mnt)], check=True)


def remount(mnt: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(mnt)], check=True)


def disk_full(root: Path, home: Path, paths: list[Path], distinct: int, size_kb: int) -> dict:
    mnt = root / f"tmpfs{size_kb}"
    mnt.mkdir()
    mount(mnt, f"size={size_kb}k")
    try:
        db = mnt / "hermes.db"
        first = hermes(["ingest", "--db", str(db)], home)
        row = {
            "case": f"disk full: tmpfs {size_kb} kB",
            "exit": first.returncode,
            "message": first.stderr.strip()[:140],
            "one_line": one_line_error(first),
            "integrity": integrity(db) if db.exists() else "no file",
            "all_or_nothing": all_or_nothing(db, paths) if db.exists() else True,
            "stored_at_fault": stored(db),
        }
        remount(mnt, "size=64m")
        again = hermes(["ingest", "--db", str(db)], home)
        inv = invariants(db)
        row["next_run"] = f"exit {again.returncode}, {inv['items']}/{distinct} items, {inv['unembedded']} unembedded"
        row["ok"] = (
            row["one_line"]
            and row["integrity"] == "ok"
            and row["all_or_nothing"]
            and again.returncode == 0
            and inv["items"] == distinct
            and inv["unembedded"] == 0
            and inv["integrity"] == "ok"
            and inv["fts"] == "ok"
        )
        return row
    finally:
        subprocess.run(["umount", str(mnt)])


def fill(mnt: Path) -> Path:
    """Fill the file system at ``mnt`` to its last byte."""
    filler = mnt / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (1 << 16, 1):  # blocks, then the last bytes one at a time
            try:
                while fh.write(b"\0" * size):
                    pass
            except OSError:
                pass
    return filler


def zero_free(root: Path, home: Path, distinct: int) -> list[dict]:
    import httpx

    mnt = root / "tmpfs-full"
    mnt.mkdir()
    mount(mnt, "size=64m")
    rows = []
    try:
        db = mnt / "hermes.db"
        assert hermes(["ingest", "--db", str(db)], home).returncode == 0
        before = invariants(db)
        filler = fill(mnt)
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        for what, args in [
            ("feeds list", ["feeds", "list"]),
            ("persona create", ["persona", "create", "ann", "--interests", "x"]),
            ("ingest", ["ingest"]),
        ]:
            proc = hermes([*args, "--db", str(db)], home)
            rows.append(
                {
                    "case": f"0 bytes free ({free} B): {what}",
                    "exit": proc.returncode,
                    "message": proc.stderr.strip()[:160],
                    "one_line": one_line_error(proc),
                    "says_full": "disk holding it is full" in proc.stderr,
                }
            )
        port = free_port()
        web = subprocess.Popen(
            [*hermes_command(), "web", "--port", str(port), "--db", str(db)],
            env=child_env(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            wait_for_port(web, port)
            page = httpx.get(f"http://127.0.0.1:{port}/", trust_env=False)
        finally:
            web.terminate()
            web.wait(10)
        text = " ".join(page.text.split())
        found = text[text.find("disk holding") :][:60] if "disk holding" in text else text[:120]
        rows.append(
            {
                "case": f"0 bytes free ({free} B): web GET /",
                "exit": f"HTTP {page.status_code}",
                "message": found,
                "one_line": True,
                "says_full": page.status_code == 500 and "disk holding it is full" in text,
            }
        )
        filler.unlink()
        again = hermes(["feeds", "list", "--db", str(db)], home)
        after = invariants(db)
        for r in rows:
            r["integrity"] = after["integrity"]
            r["next_run"] = f"space freed: exit {again.returncode}"
            r["ok"] = r["one_line"] and r["says_full"] and again.returncode == 0 and after == before
    finally:
        subprocess.run(["umount", str(mnt)])
    return rows


def read_only(root: Path, home: Path, distinct: int) -> list[dict]:
    mnt = root / "tmpfs-ro"
    mnt.mkdir()
    mount(mnt, "size=64m")
    rows = []
    try:
        db = mnt / "hermes.db"
        assert hermes(["ingest", "--db", str(db)], home).returncode == 0
        before = invariants(db)
        remount(mnt, "ro")
        for what, args in [
            ("ingest", ["ingest"]),
            ("persona create", ["persona", "create", "ann", "--interests", "x"]),
            ("feeds add", ["feeds", "add", str(root / "feed0.xml")]),
        ]:
            proc = hermes([*args, "--db", str(db)], home)
            rows.append(
                {
                    "case": f"read-only filesystem: {what}",
                    "exit": proc.returncode,
                    "message": proc.stderr.strip()[:140],
                    "one_line": one_line_error(proc),
                }
            )
        remount(mnt, "rw")
        after = invariants(db)
        for r in rows:
            r["integrity"] = after["integrity"]
            r["ok"] = r["one_line"] and after == before
            r["next_run"] = "unchanged" if after == before else f"changed: {after}"
    finally:
        subprocess.run(["umount", str(mnt)])
    return rows


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


def locked(root: Path, home: Path, distinct: int) -> list[dict]:
    db = root / "locked.db"
    assert hermes(["ingest", "--db", str(db)], home).returncode == 0
    before = invariants(db)
    rows = []
    for what, args in [("persona create", ["persona", "create", "ann", "--interests", "x"]), ("ingest", ["ingest"])]:
        holder = subprocess.Popen([sys.executable, "-c", LOCKER, str(db), "35"], stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "locked"
        start = time.perf_counter()
        proc = hermes([*args, "--db", str(db)], home)
        waited = time.perf_counter() - start
        holder.wait()
        after = invariants(db)
        rows.append(
            {
                "case": f"lock held 35 s: {what}",
                "exit": proc.returncode,
                "message": proc.stderr.strip()[:140],
                "one_line": one_line_error(proc),
                "integrity": after["integrity"],
                "next_run": f"waited {waited:.1f} s",
                "ok": one_line_error(proc) and after == before and waited >= 29,
            }
        )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-lock", action="store_true", help="skip the 2 x 35 s lock cases")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, paths, distinct = world(root)
        if os.geteuid() == 0:
            for size in (1024, 2048, 4096, 8192):
                rows.append(disk_full(root, home, paths, distinct, size))
            rows.extend(zero_free(root, home, distinct))
            rows.extend(read_only(root, home, distinct))
        else:
            print("not root: the tmpfs cases (disk full, read-only filesystem) are skipped\n")
        if not args.skip_lock:
            rows.extend(locked(root, home, distinct))
    print(
        table(
            rows,
            ["case", "exit", "one_line", "integrity", "all_or_nothing", "stored_at_fault", "next_run", "ok", "message"],
        )
    )
    bad = [r for r in rows if not r["ok"]]
    print(f"\n{len(rows) - len(bad)}/{len(rows)} fault cases handled cleanly")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
