"""Concurrency soak: ``hermes ingest`` in a loop, ``hermes serve`` (stdio clients hammering
``record_feedback`` and the corpus tools) and ``hermes web`` (clients posting clicks with
their CSRF token) on one database at the same time.

    .venv/bin/python benchmarks/hardening/soak.py [--seconds 60] [--mcp 2] [--web 2]

The feeds keep changing while it runs (a loopback server publishes 15 new items per feed
every 2 s), so every ingest run writes items and embeddings. Each MCP client and each web
client acts for its own personas, so what must be stored is known exactly:

- clicks: per (persona, item) the label of the last accepted answer;
- progress: per (persona, item) the number of accepted opens and the highest fraction;
- favorites: per (persona, item) the last accepted on/off;
- highlights and notes: one row per accepted call;
- corpus: revision numbers 1..N without gaps, and the membership the log replays to.

Every answer that is not a success is kept; any text containing "locked" or "busy" counts
as a lock surfacing to a user. Prints markdown tables; exit status 1 if anything was lost,
a lock surfaced, a request failed unexpectedly, or a database invariant broke.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from xml.sax.saxutils import escape

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    WORDS,
    FeedServer,
    Route,
    child_env,
    free_port,
    hermes,
    hermes_command,
    invariants,
    table,
    wait_for_port,
)

LOCK_WORDS = re.compile(r"locked|busy", re.I)
TOKEN_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


# --- live feeds ---------------------------------------------------------------------------


class LiveFeeds:
    """Feeds on the loopback server that grow by ``per_tick`` items every ``tick`` s."""

    def __init__(self, server: FeedServer, n_feeds: int, per_tick: int = 15, tick: float = 2.0):
        self.server, self.per_tick, self.tick = server, per_tick, tick
        self.rng = random.Random(5)
        self.items: list[list[tuple[str, str, str]]] = [[] for _ in range(n_feeds)]
        self.routes = [server.add(f"/live{n}.xml", Route()) for n in range(n_feeds)]
        self.stop = threading.Event()
        self.generation = 0
        self._grow()

    def _grow(self) -> None:
        self.generation += 1
        for n, entries in enumerate(self.items):
            for _ in range(self.per_tick):
                k = sum(len(e) for e in self.items)
                entries.append(
                    (
                        f"live-{n}-{k}",
                        " ".join(self.rng.choice(WORDS) for _ in range(7)),
                        " ".join(self.rng.choice(WORDS) for _ in range(60)),
                    )
                )
            body = [
                '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
                f"<title>Live {n}</title><link>http://example.org/live{n}</link>"
            ]
            for guid, title, text in entries[-200:]:
                body.append(
                    f"<item><title>{escape(title)}</title><guid>urn:soak:{guid}</guid>"
                    f"<link>http://example.org/{guid}</link>"
                    f"<description>{escape(text)}</description></item>"
                )
            body.append("</channel></rss>")
            self.server.routes[f"/live{n}.xml"] = Route(
                body="".join(body).encode(),
                etag=f'"g{self.generation}"',
                headers={"Content-Type": "application/rss+xml"},
            )

    def run(self) -> None:
        while not self.stop.wait(self.tick):
            self._grow()


# --- the three kinds of client ------------------------------------------------------------


class Ledger:
    """What each client was told was accepted, and everything else it saw."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls: Counter = Counter()
        self.accepted: Counter = Counter()
        self.refused: list[str] = []
        self.errors: list[str] = []
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.clicks: dict[tuple[str, int], str] = {}
        self.sessions: dict[tuple[str, int], list[bool]] = defaultdict(list)
        self.max_fraction: dict[tuple[str, int], float] = {}
        self.favorites: dict[tuple[str, int], bool] = {}
        self.highlights: Counter = Counter()
        self.notes: Counter = Counter()

    def note(self, channel: str, op: str, seconds: float, ok: bool, text: str = "") -> None:
        with self.lock:
            self.calls[(channel, op)] += 1
            self.latency[channel].append(seconds)
            if ok:
                self.accepted[(channel, op)] += 1
            elif text:
                (self.errors if "unexpected" in text or text.startswith("HTTP 5") else self.refused).append(
                    f"{channel} {op}: {text[:200]}"
                )


def mcp_client(
    db: Path, home: Path, personas: list[str], item_ids: list[int], deadline: float, ledger: Ledger, seed: int
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    rng = random.Random(seed)
    params = StdioServerParameters(
        command=hermes_command()[0], args=[*hermes_command()[1:], "serve", "--db", str(db)], env=child_env(home)
    )

    async def session():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            while time.time() < deadline:
                user, item = rng.choice(personas), rng.choice(item_ids)
                op = rng.choices(
                    [
                        "record_feedback",
                        "record_progress",
                        "favorite",
                        "add_highlight",
                        "add_note",
                        "corpus",
                        "corpus_changes",
                        "list_feed",
                    ],
                    [50, 15, 10, 8, 5, 5, 5, 2],
                )[0]
                args = {"user": user}
                if op == "record_feedback":
                    args.update(item_id=item, liked=rng.random() < 0.6)
                elif op == "record_progress":
                    args.update(item_id=item, fraction=round(rng.random(), 3), new_session=rng.random() < 0.5)
                elif op == "favorite":
                    args.update(item_id=item, on=rng.random() < 0.6)
                elif op in ("add_highlight", "add_note"):
                    args.update(item_id=item, text=f"soak {rng.random():.6f}")
                elif op == "corpus_changes":
                    args.update(since=0)
                start = time.perf_counter()
                result = await s.call_tool(op, args)
                took = time.perf_counter() - start
                body = result.structured_content or {}
                text = body.get("message") or (result.content[0].text if result.content else "")
                ok = not result.is_error and body.get("ok") is True
                ledger.note("mcp", op, took, ok, "" if ok else text)
                if ok:
                    with ledger.lock:
                        key = (user, item)
                        if op == "record_feedback":
                            ledger.clicks[key] = "like" if args["liked"] else "dislike"
                        elif op == "record_progress":
                            ledger.sessions[key].append(args["new_session"])
                            ledger.max_fraction[key] = max(ledger.max_fraction.get(key, 0.0), args["fraction"])
                        elif op == "favorite":
                            ledger.favorites[key] = args["on"]
                        elif op == "add_highlight":
                            ledger.highlights[user] += 1
                        elif op == "add_note":
                            ledger.notes[user] += 1

    try:
        asyncio.run(session())
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        ledger.errors.append(f"mcp client crashed: {type(exc).__name__}: {exc}")


def web_client(port: int, personas: list[str], item_ids: list[int], deadline: float, ledger: Ledger, seed: int) -> None:
    import httpx

    rng = random.Random(seed)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=60, trust_env=False) as http:
            page = http.get("/")
            token = TOKEN_RE.search(page.text).group(1)
            headers = {"Origin": base, "X-CSRF-Token": token}
            while time.time() < deadline:
                user, item = rng.choice(personas), rng.choice(item_ids)
                op = rng.choices(["click", "read", "favorite", "highlight", "feed"], [60, 12, 12, 8, 8])[0]
                form = {"user": user, "item_id": str(item), "next": "/"}
                if op == "click":
                    form["liked"] = "1" if rng.random() < 0.6 else "0"
                elif op == "favorite":
                    form["on"] = "1" if rng.random() < 0.6 else "0"
                elif op == "highlight":
                    form["text"] = f"web soak {rng.random():.6f}"
                start = time.perf_counter()
                if op == "feed":
                    r = http.get("/feed", params={"user": user, "days": "all", "limit": "10"})
                    good = r.status_code == 200
                else:
                    r = http.post(f"/{op}", data=form, headers=headers, follow_redirects=False)
                    good = r.status_code == 303
                took = time.perf_counter() - start
                text = "" if good else f"HTTP {r.status_code} {_page_message(r.text)}"
                ledger.note("web", op, took, good, text)
                if good and op != "feed":
                    with ledger.lock:
                        key = (user, item)
                        if op == "click":
                            ledger.clicks[key] = "like" if form["liked"] == "1" else "dislike"
                        elif op == "read":
                            ledger.sessions[key].append(True)
                            ledger.max_fraction[key] = 1.0
                        elif op == "favorite":
                            ledger.favorites[key] = form["on"] == "1"
                        elif op == "highlight":
                            ledger.highlights[user] += 1
    except BaseException as exc:  # noqa: BLE001
        ledger.errors.append(f"web client crashed: {type(exc).__name__}: {exc}")


def _page_message(html: str) -> str:
    m = re.search(r"<p class=\"error-message\">(.*?)</p>", html, re.S) or re.search(
        r"<main.*?>(.*?)</main>", html, re.S
    )
    return re.sub(r"<[^>]+>|\s+", " ", m.group(1) if m else html)[:200].strip()


def ingest_loop(db: Path, home: Path, deadline: float, runs: list[dict]) -> None:
    while time.time() < deadline:
        start = time.perf_counter()
        proc = hermes(["ingest", "--db", str(db), "--json"], home, timeout=600)
        took = time.perf_counter() - start
        try:
            out = json.loads(proc.stdout)
        except ValueError:
            out = {}
        runs.append(
            {
                "rc": proc.returncode,
                "seconds": took,
                "new": out.get("new_items", 0),
                "embedded": out.get("embedded", 0),
                "stderr": proc.stderr.strip()[-300:],
            }
        )


# --- checks -------------------------------------------------------------------------------


def stored_state(db: Path) -> dict:
    conn = sqlite3.connect(str(db))
    try:
        names = dict(conn.execute("SELECT id, name FROM users"))
        out = {
            "clicks": {
                (names[u], i): label for u, i, label in conn.execute("SELECT user_id, item_id, label FROM clicks")
            },
            "sources": Counter(s for (s,) in conn.execute("SELECT source FROM clicks")),
            "progress": {
                (names[u], i): (opens, f)
                for u, i, opens, f in conn.execute("SELECT user_id, item_id, opens, max_fraction FROM corpus_progress")
            },
            "favorites": {(names[u], i) for u, i in conn.execute("SELECT user_id, item_id FROM corpus_favorites")},
            "highlights": Counter(names[u] for (u,) in conn.execute("SELECT user_id FROM corpus_highlights")),
            "notes": Counter(names[u] for (u,) in conn.execute("SELECT user_id FROM corpus_notes")),
        }
        gaps = []
        for uid, revision, trimmed in conn.execute("SELECT user_id, revision, trimmed_through FROM corpus_revision"):
            revs = [
                r for (r,) in conn.execute("SELECT revision FROM corpus_log WHERE user_id = ? ORDER BY revision", [uid])
            ]
            if revs != list(range(trimmed + 1, revision + 1)):
                gaps.append(names[uid])
            members = set()
            for kind, facet, item in conn.execute(
                "SELECT kind, facet, item_id FROM corpus_log WHERE user_id = ? ORDER BY revision", [uid]
            ):
                if kind == "added":
                    if (facet, item) in members:
                        gaps.append(f"{names[uid]}: re-add")
                    members.add((facet, item))
                else:
                    if (facet, item) not in members and not trimmed:
                        gaps.append(f"{names[uid]}: phantom tombstone")
                    members.discard((facet, item))
            actual = set(conn.execute("SELECT facet, item_id FROM corpus_membership WHERE user_id = ?", [uid]))
            if not trimmed and members != actual:
                gaps.append(f"{names[uid]}: log replay != membership")
        out["revision_problems"] = gaps
        return out
    finally:
        conn.close()


def compare(ledger: Ledger, stored: dict) -> list[dict]:
    rows = []

    calls = {
        "clicks": ("record_feedback", "click"),
        "progress": ("record_progress", "read"),
        "favorites": ("favorite",),
        "highlights": ("add_highlight", "highlight"),
        "notes": ("add_note",),
    }

    def row(what, expected, kept, lost):
        ops = calls[what.split()[0]]
        sent = sum(v for (_, op), v in ledger.accepted.items() if op in ops)
        rows.append(
            {
                "signal": what,
                "accepted_calls": sent,
                "expected_rows": expected,
                "stored_rows": kept,
                "lost_or_wrong": lost,
            }
        )

    clicks = stored["clicks"]
    wrong = sum(1 for k in set(clicks) | set(ledger.clicks) if clicks.get(k) != ledger.clicks.get(k))
    row("clicks (last label per persona x item)", len(ledger.clicks), len(clicks), wrong)
    progress = stored["progress"]
    wrong = 0
    for key in set(progress) | set(ledger.sessions):
        flags = ledger.sessions.get(key, [])
        # The first progress opens the item once; later ones add an open when new_session.
        want = (1 + sum(flags[1:]), ledger.max_fraction.get(key)) if flags else None
        got = progress.get(key)
        if want is None or got is None or got[0] != want[0] or abs(got[1] - want[1]) > 1e-9:
            wrong += 1
    row("progress (opens and max fraction per persona x item)", len(ledger.sessions), len(progress), wrong)
    want_fav = {k for k, on in ledger.favorites.items() if on}
    row(
        "favorites (last on/off per persona x item)",
        len(want_fav),
        len(stored["favorites"]),
        len(want_fav ^ stored["favorites"]),
    )
    row(
        "highlights (one row per accepted call)",
        sum(ledger.highlights.values()),
        sum(stored["highlights"].values()),
        sum(
            abs(ledger.highlights[u] - stored["highlights"][u])
            for u in set(ledger.highlights) | set(stored["highlights"])
        ),
    )
    row(
        "notes (one row per accepted call)",
        sum(ledger.notes.values()),
        sum(stored["notes"].values()),
        sum(abs(ledger.notes[u] - stored["notes"][u]) for u in set(ledger.notes) | set(stored["notes"])),
    )
    return rows


# --- the run ------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def soak(seconds: float, n_mcp: int, n_web: int, out=print) -> dict:
    ledger, runs = Ledger(), []
    with tempfile.TemporaryDirectory() as tmp, FeedServer() as server:
        root = Path(tmp)
        home, db = root / "home", root / "soak.db"
        home.mkdir()
        live = LiveFeeds(server, n_feeds=6)
        (home / "feeds.toml").write_text("".join(f'[[feeds]]\nurl = "{u}"\n' for u in live.routes))
        first = hermes(["ingest", "--db", str(db)], home)
        assert first.returncode == 0, first.stderr
        mcp_personas = [[f"m{c}a", f"m{c}b"] for c in range(n_mcp)]
        web_personas = [[f"w{c}a", f"w{c}b"] for c in range(n_web)]
        made = hermes(["persona", "create", "m0a", "--interests", "quantum graph inference", "--db", str(db)], home)
        assert made.returncode == 0, made.stderr
        conn = sqlite3.connect(str(db), isolation_level=None)
        conn.executemany(
            "INSERT INTO users (name, interests, created) VALUES (?, ?, datetime())",
            [(name, "quantum graph inference") for name in sum(mcp_personas + web_personas, []) if name != "m0a"],
        )
        item_ids = [i for (i,) in conn.execute("SELECT id FROM items ORDER BY id LIMIT 60")]
        conn.close()

        port = free_port()
        web = subprocess.Popen(
            [*hermes_command(), "web", "--db", str(db), "--port", str(port)],
            env=child_env(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wait_for_port(web, port)
        grower = threading.Thread(target=live.run, daemon=True)
        grower.start()
        deadline = time.time() + seconds
        threads = [threading.Thread(target=ingest_loop, args=(db, home, deadline, runs))]
        threads += [
            threading.Thread(target=mcp_client, args=(db, home, p, item_ids, deadline, ledger, 10 + k))
            for k, p in enumerate(mcp_personas)
        ]
        threads += [
            threading.Thread(target=web_client, args=(port, p, item_ids, deadline, ledger, 20 + k))
            for k, p in enumerate(web_personas)
        ]
        start = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.time() - start
        live.stop.set()
        web.terminate()
        web_stderr = web.communicate(timeout=30)[1].decode(errors="replace")
        stored = stored_state(db)
        inv = invariants(db)

    locks = [t for t in ledger.refused + ledger.errors if LOCK_WORDS.search(t)]
    locks += [r["stderr"] for r in runs if LOCK_WORDS.search(r["stderr"])]
    locks += [line for line in web_stderr.splitlines() if LOCK_WORDS.search(line)]
    losses = compare(ledger, stored)
    result = {
        "seconds": elapsed,
        "ledger": ledger,
        "runs": runs,
        "losses": losses,
        "locks": locks,
        "invariants": inv,
        "revision_problems": stored["revision_problems"],
        "web_stderr": web_stderr,
        "sources": stored["sources"],
    }
    report(result, out)
    return result


def report(r: dict, out=print) -> None:
    ledger = r["ledger"]
    rows = []
    for channel in ("mcp", "web"):
        calls = sum(v for (c, _), v in ledger.calls.items() if c == channel)
        acc = sum(v for (c, _), v in ledger.accepted.items() if c == channel)
        lat = ledger.latency[channel]
        rows.append(
            {
                "channel": f"hermes {'serve (stdio)' if channel == 'mcp' else 'web'}",
                "requests": calls,
                "accepted": acc,
                "per_s": f"{calls / r['seconds']:.0f}",
                "p50_ms": f"{1000 * pct(lat, 0.5):.0f}",
                "p95_ms": f"{1000 * pct(lat, 0.95):.0f}",
                "max_ms": f"{1000 * max(lat or [0]):.0f}",
            }
        )
    runs = r["runs"]
    rows.append(
        {
            "channel": "hermes ingest (loop)",
            "requests": len(runs),
            "accepted": sum(1 for x in runs if x["rc"] == 0),
            "per_s": f"{sum(x['new'] for x in runs)} items",
            "p50_ms": f"{1000 * pct([x['seconds'] for x in runs], 0.5):.0f}",
            "p95_ms": f"{1000 * pct([x['seconds'] for x in runs], 0.95):.0f}",
            "max_ms": f"{1000 * max([x['seconds'] for x in runs] or [0]):.0f}",
        }
    )
    out(f"soak: {r['seconds']:.0f} s, one database, all at once\n")
    out(table(rows, ["channel", "requests", "accepted", "per_s", "p50_ms", "p95_ms", "max_ms"]))
    out("")
    out(table(r["losses"], ["signal", "accepted_calls", "expected_rows", "stored_rows", "lost_or_wrong"]))
    refused = Counter(t.split(":")[0] for t in ledger.refused)
    out(f"\nrefused answers (ok:false / HTTP 4xx): {sum(refused.values())} {dict(refused)}")
    for text in ledger.refused[:5]:
        out(f"  e.g. {text}")
    out(f"unexpected errors: {len(ledger.errors)}")
    for text in ledger.errors[:5]:
        out(f"  {text}")
    out(f"'locked' / 'busy' surfaced to a user: {len(r['locks'])}")
    for text in r["locks"][:5]:
        out(f"  {text}")
    inv = r["invariants"]
    out(
        f"database: integrity {inv['integrity']}, fts {inv['fts']}, {inv['items']} items, "
        f"{inv['dup_guid'] + inv['dup_arxiv']} duplicates, {inv['unembedded']} unembedded; "
        f"corpus revision problems: {r['revision_problems'] or 'none'}; "
        f"click sources: {dict(r['sources'])}"
    )


def ok(r: dict) -> bool:
    inv = r["invariants"]
    return (
        not r["locks"]
        and not r["ledger"].errors
        and not r["revision_problems"]
        and all(x["lost_or_wrong"] == 0 for x in r["losses"])
        and all(x["rc"] == 0 for x in r["runs"])
        and inv["integrity"] == "ok"
        and inv["fts"] == "ok"
        and inv["dup_guid"] + inv["dup_arxiv"] == 0
        and inv["unembedded"] == 0
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--mcp", type=int, default=2, help="concurrent hermes serve clients")
    ap.add_argument("--web", type=int, default=2, help="concurrent web clients")
    args = ap.parse_args(argv)
    result = soak(args.seconds, args.mcp, args.web)
    good = ok(result)
    print(f"\nverdict: {'nothing lost, no lock surfaced' if good else 'PROBLEMS (see above)'}")
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
