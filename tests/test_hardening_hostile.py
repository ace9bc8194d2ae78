"""Every hostile server of benchmarks/hardening/hostile.py at once, on loopback, beside good
feeds: each is bounded (a timeout, the size cap, the redirect limit), recorded on its feed
row with a readable reason (and a retry time when the server asked for one), nothing it
sends is stored as live markup or leaks a local file, and the good feeds are stored before
the slow servers give up. (The per-server timings, peak memory and the Retry-After cycle
over time are the script's job; tests/test_ingest_pipeline.py covers that cycle too.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hermes.config import Settings
from hermes.ingest import pipeline
from hermes.ingest.pipeline import add_feeds, run_ingest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "hardening"))

import hostile
from common import FeedServer

TIMEOUT = 3.0  # generous: one event loop shares its CPU with a gzip bomb and a 20 MB stream
# What each hostile server must come to: a status and a fragment of the recorded reason.
EXPECT = {
    "slow drip (1 byte/s)": ("failed", "timeout after 3 s"),
    "hung (never answers)": ("failed", "timeout after 3 s"),
    # 20 MB within the deadline: on a busy machine the deadline may come first.
    "endless body, fast": ("failed", ("size cap", "timeout after 3 s")),
    "endless body, 64 kB/s": ("failed", "timeout after 3 s"),
    "10 MB of entities": ("new", None),
    "billion laughs (nested DTD entities)": ("new", None),
    "external entities (file://, http://)": ("new", None),
    "redirect loop (self)": ("failed", "too many redirects"),
    "redirect loop (A -> B -> A)": ("failed", "too many redirects"),
    "RSS served as text/html": ("new", None),
    "RSS served as image/png": ("new", None),
    "HTML page served as RSS": ("failed", "HTML page"),
    "gzip bomb (1 GB of zeros, 1 MB on the wire)": ("failed", ("size cap", "timeout after 3 s")),
    "Content-Length longer than the body": ("failed", "peer closed connection"),
    "binary garbage": ("failed", "not a feed"),
    "429 Retry-After: 120": ("failed", "HTTP 429"),
    "503 Retry-After: HTTP date (+1 h)": ("failed", "HTTP 503"),
    "429 without Retry-After": ("failed", "HTTP 429"),
    "503 Retry-After: 10 years": ("failed", "HTTP 503"),
    "503 Retry-After: garbage": ("failed", "HTTP 503"),
}
WITH_RETRY = {
    "429 Retry-After: 120",
    "503 Retry-After: HTTP date (+1 h)",
    "429 without Retry-After",
    "503 Retry-After: 10 years",
}
SLOW = {"slow drip (1 byte/s)", "hung (never answers)", "endless body, 64 kB/s"}


@pytest.fixture(scope="module")
def scenarios():
    # 1 MB of entities (10 MB takes ~6 s to parse) and a 100 MB gzip bomb (as far past the
    # 20 MB cap as 1 GB): the same shapes as the script's, quicker to build and parse.
    return hostile.scenarios(TIMEOUT, bomb_gb=0.1, entity_mb=1)


def test_every_hostile_server_at_once_beside_good_feeds(db, scenarios, monkeypatch):
    assert set(scenarios) == set(EXPECT), "a new hostile server needs its expectation here"
    finished: list[str] = []
    real_handle = pipeline._handle

    async def in_order(db, feed, res, err):  # the order in which fetches finished
        finished.append(feed["url"])
        return await real_handle(db, feed, res, err)

    monkeypatch.setattr(pipeline, "_handle", in_order)
    with FeedServer() as server:
        urls = {}
        for n, (name, routes) in enumerate(scenarios.items()):
            for path, route in routes.items():
                if "Location" in route.headers:
                    route.headers = {**route.headers, "Location": f"/{n}{route.headers['Location']}"}
                server.add(f"/{n}{path}", route)
            urls[name] = server.url(f"/{n}/h")
        good = [server.add(f"/good{k}.xml", body=hostile.rss(f"good{k}")) for k in range(3)]
        add_feeds(db, [(u, None) for u in [*urls.values(), *good]])
        summary = run_ingest(db, settings=Settings(fetch_timeout=TIMEOUT, fetch_concurrency=8))
    by_url = {s["url"]: s for s in summary}
    rows = {r[0]: r[1:] for r in db.execute("SELECT url, last_error, error_count, retry_after FROM feeds")}

    for name, url in urls.items():
        status, reason = EXPECT[name]
        got = by_url[url]
        assert got["status"] == status, (name, got)
        last_error, error_count, retry_after = rows[url]
        if status == "failed":
            reasons = (reason,) if isinstance(reason, str) else reason
            assert any(r in last_error for r in reasons) and error_count == 1, (name, last_error)
            assert "\n" not in last_error and len(last_error) < 400
        assert bool(retry_after) == (name in WITH_RETRY), (name, retry_after)
    for url in good:
        assert by_url[url]["status"] == "new" and by_url[url]["new"] == 5
    # The good feeds (last in line) finished before any server that stalls until the timeout.
    slow_positions = [finished.index(urls[name]) for name in SLOW]
    assert max(finished.index(u) for u in good) < min(slow_positions), finished

    texts = db.execute("SELECT title || ' ' || summary || ' ' || tags FROM items").fetchall()
    blob = json.dumps(texts)
    assert "root:x:0:0" not in blob  # the external entity was not resolved
    assert "lollollollol" not in blob  # nor the nested ones expanded
    assert "<script" not in blob.lower()
