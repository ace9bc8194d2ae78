"""XML entity expansion through every path that parses remote XML: time and peak memory.

    .venv/bin/python benchmarks/hardening/entities.py [--refs 2000] [--without-guard]

The feed declares one 100 kB entity (``<!ENTITY a "xxx…">``) and references it ``--refs``
times in one item's description: a ~106 kB body that feedparser would expand to
100 kB × refs. A loopback server serves it as a feed and as arXiv's API answer; each path
runs in a fresh child process — ``hermes ingest`` (``run_ingest``), the ``preview_feed``
tool (``call_tool``, as ``hermes serve`` calls it) and ``save_item``'s arXiv lookup — which
reports its wall time, its peak RSS (``ru_maxrss``) and the outcome. ``--without-guard``
replaces the entity guard (``hermes.ingest.doctype.defuse``) with the identity in the
child: the code as it was before issue 33. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FeedServer, Route, child_env, table

PATHS = ("ingest", "preview_feed", "save_item (arXiv)")
VALUE = "x" * 100_000


def feed(refs: int) -> bytes:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY a "{VALUE}">\n]>\n'
        '<rss version="2.0"><channel><title>entities</title><item><title>one</title>'
        f"<guid>urn:one</guid><description>{'&a;' * refs}</description></item>"
        "</channel></rss>"
    ).encode()


def atom(refs: int) -> bytes:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE feed [\n<!ENTITY a "{VALUE}">\n]>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>ArXiv Query</title>'
        "<id>http://arxiv.org/api/x</id><updated>2024-02-01T00:00:00Z</updated><entry>"
        "<id>http://arxiv.org/abs/2401.12345v1</id><published>2024-01-22T18:59:59Z</published>"
        f"<title>Paper</title><summary>{'&a;' * refs}</summary></entry></feed>"
    ).encode()


CHILD = r"""
import json, resource, sys, time
path, url, db_path, guard = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
if not guard:  # the code before issue 33: nothing stood between the bytes and feedparser
    import hermes.ingest.parse as parse
    parse.defuse = lambda body, headers: (body, False)
from hermes.storage.db import get_db
db = get_db(db_path)
started = time.perf_counter()
if path == "ingest":
    from hermes.ingest.pipeline import add_feeds, run_ingest
    add_feeds(db, [(url, None)])
    s = run_ingest(db)[0]
    outcome = s["status"] + ": " + (s["error"] or f"{s['new']} new") + (f" ({s['warning']})" if s.get("warning") else "")
elif path == "preview_feed":
    from hermes.tools import call_tool, collect_tools
    r = call_tool(db, collect_tools()[path], {"url": url})
    outcome = ("ok: " if r["ok"] else "refused: ") + r["message"]
else:
    from hermes_corpus import save
    from hermes_corpus.metadata import LookupFailed
    db.execute("INSERT INTO users (name) VALUES ('ada')")
    try:
        r = save.save(db, "ada", "2401.12345", allow_private=True, source="ui")
        outcome = f"stored item {r['item_id']}"
    except LookupFailed as exc:
        outcome = f"refused: {exc}"
seconds = time.perf_counter() - started
summary = db.execute("SELECT max(length(summary)) FROM items").fetchone()[0]
print(json.dumps({"seconds": seconds, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "stored_summary_chars": summary, "outcome": " ".join(outcome.split())}))
"""


def run_child(path: str, url: str, root: Path, n: int, guard: bool) -> dict:
    home = root / f"home{n}"
    home.mkdir()
    (home / "config.toml").write_text(f'[corpus]\narxiv_api = "{url}"\n')
    proc = subprocess.run(
        [sys.executable, "-P", "-c", CHILD, path, url, str(root / f"{n}.db"), "1" if guard else "0"],
        env=child_env(home, HERMES_ALLOW_PRIVATE="1"),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode:
        return {
            "seconds": float("nan"),
            "maxrss_mb": float("nan"),
            "stored_summary_chars": None,
            "outcome": "crashed: " + proc.stderr.strip()[-300:],
        }
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--refs", type=int, default=2000)
    parser.add_argument("--without-guard", action="store_true")
    parser.add_argument("--only", choices=PATHS)
    args = parser.parse_args()
    rows = []
    with FeedServer() as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        xml = {"Content-Type": "application/rss+xml"}
        urls = {
            "ingest": server.add("/feed.xml", Route(body=feed(args.refs), headers=xml)),
            "preview_feed": server.add("/feed.xml", Route(body=feed(args.refs), headers=xml)),
            "save_item (arXiv)": server.url("/api/query"),
        }
        server.add(
            "/api/query?id_list=2401.12345&max_results=1",
            Route(body=atom(args.refs), headers={"Content-Type": "application/atom+xml"}),
        )
        for n, path in enumerate([args.only] if args.only else PATHS):
            out = run_child(path, urls[path], root, n, guard=not args.without_guard)
            rows.append(
                {
                    "path": path,
                    "body_kb": f"{len(feed(args.refs)) / 1024:.0f}",
                    "guard": "off (before)" if args.without_guard else "on",
                    "seconds": f"{out['seconds']:.2f}",
                    "peak_rss_mb": f"{out['maxrss_mb']:.0f}",
                    "stored_summary_chars": out["stored_summary_chars"],
                    "outcome": out["outcome"][:110],
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr)
    print(table(rows, list(rows[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
