"""Decompression bombs through every fetch path, peak memory of each.

    .venv/bin/python benchmarks/hardening/bombs.py [--gigabytes 1] [--only PATH]

A loopback server serves compressed bodies: a single gzip bomb (zeros, about 1 MB on the
wire per GB), the same bomb wrapped in gzip two more times (``Content-Encoding: gzip, gzip,
gzip``, a few hundred bytes on the wire), a deflate bomb, and a small valid feed as the
baseline. Each is fetched in a fresh child process through one of the four paths that fetch
a URL — ``hermes ingest`` (``run_ingest``), the ``add_feed`` and ``preview_feed`` tools
(``call_tool``, as the MCP server calls them) and the web UI's add-feed form (``POST /feeds``
through starlette's test client) — and the child reports its peak RSS (``ru_maxrss``) and
the outcome. Prints a markdown table; exit status 1 when a bomb costs more than 100 MB above
the same path's baseline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FeedServer, Route, child_env, table

PATHS = ("ingest", "add_feed", "preview_feed", "web form")
FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>small</title><item>'
    b"<title>one</title><guid>urn:one</guid></item></channel></rss>"
)


def compress(data_chunks, wbits: int) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return b"".join(comp.compress(c) for c in data_chunks) + comp.flush()


def zeros(gigabytes: float):
    block = b"\0" * (1 << 20)
    return (block for _ in range(int(gigabytes * 1024)))


def bodies(gigabytes: float) -> dict[str, Route]:
    gz = compress(zeros(gigabytes), 31)
    stacked = compress([compress([gz], 31)], 31)
    xml = {"Content-Type": "application/rss+xml"}
    return {
        "baseline (small feed, gzip)": Route(body=FEED, gzip=True, headers=xml),
        f"gzip bomb ({gigabytes:g} GB, {len(gz) // 1024} kB on the wire)": Route(
            body=gz, headers={**xml, "Content-Encoding": "gzip"}
        ),
        f"gzip, gzip, gzip ({gigabytes:g} GB, {len(stacked)} B on the wire)": Route(
            body=stacked, headers={**xml, "Content-Encoding": "gzip, gzip, gzip"}
        ),
        f"deflate bomb ({gigabytes:g} GB)": Route(
            body=compress(zeros(gigabytes), 15), headers={**xml, "Content-Encoding": "deflate"}
        ),
    }


CHILD = r"""
import html, json, re, resource, sys
path, url, db_path = sys.argv[1], sys.argv[2], sys.argv[3]
from hermes.storage.db import get_db
db = get_db(db_path)
if path == "ingest":
    from hermes.ingest.pipeline import add_feeds, run_ingest
    add_feeds(db, [(url, None)])
    s = run_ingest(db)[0]
    outcome = s["status"] + ": " + (s["error"] or f"{s['new']} new")
elif path in ("add_feed", "preview_feed"):
    from hermes.tools import call_tool, collect_tools
    r = call_tool(db, collect_tools()[path], {"url": url})
    outcome = ("ok: " if r["ok"] else "refused: ") + r["message"]
else:
    from starlette.testclient import TestClient
    from hermes.web.app import create_app
    with TestClient(create_app(db_path, secret=b"s" * 32)) as client:
        token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/feeds").text).group(1)
        r = client.post("/feeds", data={"url": url, "csrf_token": token}, follow_redirects=False)
        found = re.search(r'class="flash flash-error"[^>]*>([^<]*)', r.text)
        outcome = f"HTTP {r.status_code}" + (": " + html.unescape(found.group(1).strip()) if found else "")
print(json.dumps({"maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "outcome": " ".join(outcome.split())}))
"""


def run_child(path: str, url: str, root: Path, n: int) -> dict:
    # The loopback server is private: allow it (the guard is not what is measured here).
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, path, url, str(root / f"{n}.db")],
        env=child_env(root / "home", HERMES_ALLOW_PRIVATE="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode:
        return {"maxrss_mb": float("nan"), "outcome": "crashed: " + proc.stderr.strip()[-300:]}
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--only", choices=PATHS)
    args = parser.parse_args()
    rows, ok = [], True
    with FeedServer() as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        urls = {name: server.add(f"/b{k}.xml", route) for k, (name, route) in enumerate(bodies(args.gigabytes).items())}
        n = 0
        for path in [args.only] if args.only else PATHS:
            base = None
            for name, url in urls.items():
                n += 1
                out = run_child(path, url, root, n)
                base = out["maxrss_mb"] if base is None else base
                above = out["maxrss_mb"] - base
                bounded = name.startswith("baseline") or above <= 100
                ok &= bounded
                rows.append(
                    {
                        "path": path,
                        "body": name,
                        "peak_rss_mb": f"{out['maxrss_mb']:.0f}",
                        "above_baseline_mb": "-" if name.startswith("baseline") else f"{above:.0f}",
                        "outcome": out["outcome"][:120],
                        "bounded": bounded,
                    }
                )
                print(json.dumps(rows[-1]), file=sys.stderr)
    print(table(rows, list(rows[0])))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
