"""Hostile feed servers on loopback, each ingested beside well-behaved feeds.

    .venv/bin/python benchmarks/hardening/hostile.py [--timeout 5] [--only NAME]

For every hostile server (slow drip, hung, endless bodies, 10 MB of entities, billion laughs,
an external entity, redirect loops, wrong content types, a gzip bomb, a lying
Content-Length, binary garbage, 429 / 503 with and without Retry-After) a fresh database
holds that feed and three good ones, and a child process runs the real ingest pipeline
(``run_ingest``, hash embedder) with ``[fetch] timeout``; it reports when each feed's fetch
finished, what was recorded on the feed row, the run's wall time and the child's peak RSS.
Then all hostile servers at once beside the good feeds, with the default concurrency (8)
and with enough slots for every feed, and the Retry-After cycle (skipped while the server
asked to wait, fetched again afterwards).

Bounded means: the hostile fetch ends within the timeout (+1 s), the good feeds are stored
before it (within 1.5 s of the start), the run's peak memory stays within 200 MB of the
good-feeds-only run, and the failure is recorded on the feed row with a readable reason.
Prints markdown tables; exit status 1 if a bound was broken.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import zlib
from email.utils import formatdate
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FeedServer, Route, child_env, table

GOOD = 3


def rss(title: str, n: int = 5, extra: str = "") -> bytes:
    items = "".join(
        f"<item><title>{title} {k}</title><guid>urn:{title}:{k}</guid>"
        f"<link>http://example.org/{title}/{k}</link><description>about {title} "
        f"number {k}{extra}</description></item>"
        for k in range(n)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>{title}'
        f"</title><link>http://example.org/{title}</link>{items}</channel></rss>"
    ).encode()


def billion_laughs(levels: int = 10, fan: int = 10) -> bytes:
    ents = ['<!ENTITY lol0 "lollollollollollollollollollol">']
    ents += [f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * fan + '">' for i in range(1, levels)]
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE rss [{"".join(ents)}]>\n<rss version="2.0"><channel>'
        f"<title>laughs</title><item><title>lol</title><guid>urn:lol</guid><description>"
        f"&lol{levels - 1};</description></item></channel></rss>"
    ).encode()


def many_entities(mb: int = 10) -> bytes:
    unit = "&amp;&lt;&#x41;&#65;&quot;&gt;"
    body = unit * (mb * 1024 * 1024 // len(unit))
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>entities</title><item>'
        f"<title>{unit * 20}</title><guid>urn:ent</guid><description>{body}</description>"
        "</item></channel></rss>"
    ).encode()


def external_entity() -> bytes:
    return (
        b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">'
        b'<!ENTITY net SYSTEM "http://127.0.0.1:9/x">]><rss version="2.0"><channel>'
        b"<title>xxe</title><item><title>leak &xxe;</title><guid>urn:xxe</guid>"
        b"<description>net &net;</description></item></channel></rss>"
    )


def gzip_bomb(gigabytes: float = 1.0) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    zeros = b"\0" * (1 << 20)
    parts = [comp.compress(zeros) for _ in range(int(gigabytes * 1024))]
    return b"".join(parts) + comp.flush()


class Hostile(Route):
    """Route plus the behaviours the ingest tests' server lacks."""

    mode: str = ""

    def serve(self, h, stop):
        if self.mode == "endless-slow":  # a body that never ends, 64 kB/s
            h.send_response(200)
            h.send_header("Content-Type", "application/rss+xml")
            h.send_header("Connection", "close")
            h.end_headers()
            try:
                h.wfile.write(b'<?xml version="1.0"?><rss version="2.0"><channel><title>x</title>')
                while not stop.wait(0.1):
                    h.wfile.write(b"<!-- " + b"x" * 6500 + b" -->")
            except OSError:
                pass
            return
        if self.mode == "short-body":  # Content-Length promises more than is sent
            h.send_response(200)
            h.send_header("Content-Type", "application/rss+xml")
            h.send_header("Content-Length", "100000")
            h.end_headers()
            h.wfile.write(rss("short")[:200])
            h.wfile.flush()
            h.close_connection = True
            return
        super().serve(h, stop)


def hostile(mode: str, **kwargs) -> Hostile:
    route = Hostile(**kwargs)
    route.mode = mode
    return route


def scenarios(timeout: float, *, bomb_gb: float = 1.0, entity_mb: int = 10) -> dict[str, dict]:
    """name -> {path: Route}; the hostile feed is at ``/h``. (The test suite passes smaller
    ``bomb_gb`` / ``entity_mb``: as far past the limits, quicker to build and parse.)"""
    feed = rss("drip", 3)
    later = formatdate(time.time() + 3600, usegmt=True)
    s = {
        "slow drip (1 byte/s)": {"/h": Route(body=feed, drip=1.0)},
        "hung (never answers)": {"/h": Route(body=feed, sleep=3600)},
        "endless body, fast": {"/h": Route(stream_bytes=10**13)},
        "endless body, 64 kB/s": {"/h": hostile("endless-slow")},
        "10 MB of entities": {
            "/h": Route(body=many_entities(entity_mb), headers={"Content-Type": "application/rss+xml"})
        },
        "billion laughs (nested DTD entities)": {"/h": Route(body=billion_laughs())},
        "external entities (file://, http://)": {"/h": Route(body=external_entity())},
        "redirect loop (self)": {"/h": Route(status=302, headers={"Location": "/h"})},
        "redirect loop (A -> B -> A)": {
            "/h": Route(status=301, headers={"Location": "/b"}),
            "/b": Route(status=307, headers={"Location": "/h"}),
        },
        "RSS served as text/html": {"/h": Route(body=rss("html-typed"), headers={"Content-Type": "text/html"})},
        "RSS served as image/png": {"/h": Route(body=rss("png-typed"), headers={"Content-Type": "image/png"})},
        "HTML page served as RSS": {
            "/h": Route(
                body=b"<!doctype html><html><body><h1>Sign in</h1></body></html>",
                headers={"Content-Type": "application/rss+xml"},
            )
        },
        "gzip bomb (1 GB of zeros, 1 MB on the wire)": {
            "/h": Route(
                body=gzip_bomb(bomb_gb), headers={"Content-Encoding": "gzip", "Content-Type": "application/rss+xml"}
            )
        },
        "Content-Length longer than the body": {"/h": hostile("short-body")},
        "binary garbage": {
            "/h": Route(body=random.Random(1).randbytes(200_000), headers={"Content-Type": "application/rss+xml"})
        },
        "429 Retry-After: 120": {"/h": Route(status=429, headers={"Retry-After": "120"})},
        "503 Retry-After: HTTP date (+1 h)": {"/h": Route(status=503, headers={"Retry-After": later})},
        "429 without Retry-After": {"/h": Route(status=429)},
        "503 Retry-After: 10 years": {"/h": Route(status=503, headers={"Retry-After": "315360000"})},
        "503 Retry-After: garbage": {"/h": Route(status=503, headers={"Retry-After": "soon, maybe"})},
    }
    return s


# --- the child: one ingest, instrumented ----------------------------------------------------

CHILD = r"""
import json, os, resource, sys, time
from hermes.config import Settings
from hermes.storage.db import get_db
from hermes.ingest import pipeline
from hermes.ingest.pipeline import add_feeds, run_ingest

db_path, urls, timeout, concurrency = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
db = get_db(db_path)
add_feeds(db, [(u, None) for u in urls])
done = {}
start = time.perf_counter()
real_handle = pipeline._handle

async def timed(db, feed, res, err):
    done[feed["url"]] = time.perf_counter() - start  # its fetch has finished
    return await real_handle(db, feed, res, err)

pipeline._handle = timed
summary = run_ingest(db, settings=Settings(fetch_timeout=timeout, fetch_concurrency=concurrency))
wall = time.perf_counter() - start
rows = {r[0]: {"last_error": r[1], "error_count": r[2], "retry_after": r[3], "last_warning": r[4]}
        for r in db.execute("SELECT url, last_error, error_count, retry_after, last_warning FROM feeds")}
items = {r[0]: r[1] for r in db.execute(
    "SELECT f.url, count(i.id) FROM feeds f LEFT JOIN items i ON i.feed_id = f.id GROUP BY f.url")}
texts = " ".join(t or "" for r in db.execute("SELECT title, summary FROM items") for t in r)
print(json.dumps({"leaked": "root:x:0:0" in texts or "lollollol" in texts, "wall": wall, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "summary": list(summary), "done": done, "rows": rows, "items": items}))
"""


def run_child(db: Path, urls: list[str], timeout: float, concurrency: int, home: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), json.dumps(urls), str(timeout), str(concurrency)],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout)


def good_routes(server: FeedServer, tag: str) -> list[str]:
    return [server.add(f"/{tag}/good{k}.xml", Route(body=rss(f"good{k}"), etag=f'"{k}"')) for k in range(GOOD)]


def one_scenario(server, root, home, name, routes, timeout, baseline_mb) -> dict:
    tag = f"s{abs(hash(name)) % 10**8}"
    for path, route in routes.items():
        server.add(f"/{tag}{path}", route)
        if isinstance(route, Route) and "Location" in route.headers:
            route.headers = {**route.headers, "Location": f"/{tag}{route.headers['Location']}"}
    bad = server.url(f"/{tag}/h")
    good = good_routes(server, tag)
    out = run_child(root / f"{tag}.db", [bad, *good], timeout, 8, home)
    s = {x["url"]: x for x in out["summary"]}
    row = out["rows"][bad]
    good_done = max(out["done"][g] for g in good)
    recorded = row["last_error"] or (f"warning: {row['last_warning']}" if row["last_warning"] else "")
    result = {
        "server": name,
        "status": s[bad]["status"],
        "fetch_done_s": f"{out['done'].get(bad, 0):.1f}",
        "good_feeds_done_s": f"{good_done:.2f}",
        "run_s": f"{out['wall']:.1f}",
        "peak_rss_mb": f"{out['maxrss_mb']:.0f}",
        "items": out["items"].get(bad, 0),
        "retry_after": "set" if row["retry_after"] else "-",
        "recorded": (recorded or "-")[:110],
    }
    good_ok = all(s[g]["status"] == "new" for g in good) and not out["leaked"]
    result["leaked"] = out["leaked"]
    result["ok"] = (
        out["done"].get(bad, 0) <= timeout + 1
        and good_done <= 1.5
        and good_ok
        and out["maxrss_mb"] <= baseline_mb + 200
        and (s[bad]["status"] != "failed" or bool(row["last_error"]))
    )
    return result


def all_at_once(server, root, home, timeout, concurrency: int) -> dict:
    urls = []
    for name, routes in scenarios(timeout).items():
        tag = f"all{concurrency}-{abs(hash(name)) % 10**8}"
        for path, route in routes.items():
            server.add(f"/{tag}{path}", route)
            if "Location" in route.headers:
                route.headers = {**route.headers, "Location": f"/{tag}{route.headers['Location']}"}
        urls.append(server.url(f"/{tag}/h"))
    good = good_routes(server, f"all{concurrency}")
    # The good feeds come last in id order: the worst place when slots are scarce.
    out = run_child(root / f"all{concurrency}.db", [*urls, *good], timeout, concurrency, home)
    statuses = {}
    for x in out["summary"]:
        statuses[x["status"]] = statuses.get(x["status"], 0) + 1
    return {
        "feeds": len(urls) + len(good),
        "concurrency": concurrency,
        "run_s": f"{out['wall']:.1f}",
        "timeout_s": timeout,
        "good_feeds_done_s": f"{max(out['done'][g] for g in good):.1f}",
        "peak_rss_mb": f"{out['maxrss_mb']:.0f}",
        "statuses": ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
        "good_stored": all(out["items"][g] == 5 for g in good),
    }


def many_slow(server, root, home, timeout, n_slow: int, concurrency: int) -> dict:
    """More hung servers than fetch slots, the good feeds queued behind them."""
    urls = [server.add(f"/slow{concurrency}-{k}.xml", Route(body=rss("slow"), sleep=3600)) for k in range(n_slow)]
    good = good_routes(server, f"slow{concurrency}")
    out = run_child(root / f"slow{concurrency}.db", [*urls, *good], timeout, concurrency, home)
    return {
        "feeds": f"{n_slow} hung + {GOOD} good",
        "concurrency": concurrency,
        "timeout_s": timeout,
        "run_s": f"{out['wall']:.1f}",
        "good_feeds_done_s": f"{max(out['done'][g] for g in good):.1f}",
        "peak_rss_mb": f"{out['maxrss_mb']:.0f}",
        "statuses": ", ".join(
            f"{k} {v}"
            for k, v in sorted(
                {
                    x["status"]: sum(1 for y in out["summary"] if y["status"] == x["status"]) for x in out["summary"]
                }.items()
            )
        ),
        "good_stored": all(out["items"][g] == 5 for g in good),
    }


def retry_cycle(server, root, home) -> list[dict]:
    """429 with Retry-After: 2 -> skipped while waiting -> fetched once the time has passed."""
    path = "/retry/h"
    server.add(path, Route(status=429, headers={"Retry-After": "2"}))
    url = server.url(path)
    db = root / "retry.db"
    rows = []
    for step in (
        "first run (server says 429, Retry-After: 2)",
        "second run, at once",
        "third run, 3 s later (server recovered)",
    ):
        if step.startswith("third"):
            time.sleep(3)
            server.add(path, Route(body=rss("recovered")))
        before = server.hits(path)
        out = run_child(db, [url], 3, 8, home)
        s, row = out["summary"][0], out["rows"][url]
        rows.append(
            {
                "step": step,
                "status": s["status"],
                "requests_to_server": server.hits(path) - before,
                "retry_after": row["retry_after"] or "-",
                "error_count": row["error_count"],
                "message": (s["error"] or "")[:90],
            }
        )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--only", help="run only scenarios whose name contains this")
    args = ap.parse_args(argv)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp, FeedServer() as server:
        root, home = Path(tmp), Path(tmp) / "home"
        home.mkdir()
        base = run_child(root / "base.db", good_routes(server, "base"), args.timeout, 8, home)
        print(
            f"good feeds only: {base['wall']:.2f} s, peak RSS {base['maxrss_mb']:.0f} MB "
            f"(timeout {args.timeout:g} s, three good feeds beside each hostile one)\n"
        )
        rows = []
        for name, routes in scenarios(args.timeout).items():
            if args.only and args.only not in name:
                continue
            rows.append(one_scenario(server, root, home, name, routes, args.timeout, base["maxrss_mb"]))
        print(
            table(
                rows,
                [
                    "server",
                    "status",
                    "fetch_done_s",
                    "good_feeds_done_s",
                    "run_s",
                    "peak_rss_mb",
                    "items",
                    "leaked",
                    "retry_after",
                    "recorded",
                    "ok",
                ],
            )
        )
        failures += sum(1 for r in rows if not r["ok"])
        if not args.only:
            together = [all_at_once(server, root, home, args.timeout, c) for c in (8, 32)]
            together += [many_slow(server, root, home, args.timeout, 10, c) for c in (8, 16)]
            print(
                "\nall hostile servers at once (and more hung servers than fetch slots), the "
                "three good feeds last in line:\n"
            )
            print(
                table(
                    together,
                    [
                        "feeds",
                        "concurrency",
                        "timeout_s",
                        "run_s",
                        "good_feeds_done_s",
                        "peak_rss_mb",
                        "statuses",
                        "good_stored",
                    ],
                )
            )
            failures += sum(1 for r in together if not r["good_stored"])
            print("\nRetry-After cycle:\n")
            cycle = retry_cycle(server, root, home)
            print(table(cycle, ["step", "status", "requests_to_server", "retry_after", "error_count", "message"]))
            expected = [("failed", 1), ("skipped", 0), ("new", 1)]
            failures += sum(
                1 for r, (st, hits) in zip(cycle, expected) if (r["status"], r["requests_to_server"]) != (st, hits)
            )
    print(
        f"\n{len(rows) - sum(1 for r in rows if not r['ok'])}/{len(rows)} hostile servers bounded; {failures} problems"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
