"""Shared fixtures: a temporary data directory and database per test, the fast hash
embedder, no third-party plugins (all three from :mod:`hermes.testing`, the fixtures plugin
authors use too), and a factory for items."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from hermes import plugins
from hermes.ranking import matrix

pytest_plugins = ["hermes.testing"]


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    """One ONNX model cache for the whole run: the real-model tests export it once. Under
    pytest-xdist every worker has its own temporary root; the cache is in the run's directory
    they share (hermes publishes an export with one rename, so two workers racing to make it
    both end with one good copy)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    cache = root / "model-cache"
    cache.mkdir(exist_ok=True)
    return cache


@pytest.fixture(autouse=True)
def isolated_env(hermes_home, monkeypatch, model_cache):
    """No test touches the user's real data directory or loads installed plugins; the
    real-model tests share one ONNX model cache."""
    monkeypatch.setenv("HERMES_MODEL_CACHE", str(model_cache))
    monkeypatch.delenv("HERMES_EMBED_BACKEND", raising=False)
    yield


@pytest.fixture
def anyio_backend():
    """``@pytest.mark.anyio`` tests run on asyncio (the one backend the servers use)."""
    return "asyncio"


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "hermes.db"


@pytest.fixture
def db(hermes_db):
    return hermes_db


@pytest.fixture
def pm():
    """The plugin manager; plugins a test registers are unregistered afterwards."""
    manager = plugins.get_plugin_manager()
    before = {name for name, _ in manager.list_name_plugin()}
    yield manager
    for name, plugin in list(manager.list_name_plugin()):
        if name not in before:
            manager.unregister(plugin)
    manager.embedder = None
    matrix.clear_cache()


def _iso(days_ago: float) -> str:
    when = dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago)
    return when.isoformat(timespec="seconds")


@pytest.fixture
def add_items(db):
    """``add_items([{"title": ..., "summary": ..., "tags": [...], "days_ago": 1}, ...])``:
    insert items into a test feed and embed them with the active embedder; return ids.
    Items keep exactly the tags given unless ``keyphrases=True`` (the built-in tagger)."""
    from hermes.embed import get_embedder
    from hermes.ingest.store import embed_pending, insert_items

    counter = {"n": 0}

    def factory(items, feed_url="https://example.org/test.xml", feed_title="Test feed", keyphrases=False):
        db.execute("INSERT OR IGNORE INTO feeds (url, title) VALUES (?, ?)", [feed_url, feed_title])
        feed_id = db.execute("SELECT id FROM feeds WHERE url = ?", [feed_url]).fetchone()[0]
        rows = []
        for item in items:
            counter["n"] += 1
            rows.append(
                {
                    "guid": item.get("guid") or f"test-{feed_id}-{counter['n']}-{item.get('title')}",
                    "title": item.get("title", ""),
                    "summary": item.get("summary", ""),
                    "tags": item.get("tags", []),
                    "content_type": item.get("content_type", "article"),
                    "published": item.get("published") or _iso(item.get("days_ago", 1)),
                    "url": item.get("url"),
                    "arxiv_id": item.get("arxiv_id"),
                    "authors": item.get("authors", []),
                    "enclosure": item.get("enclosure"),
                }
            )
        ids = insert_items(db, feed_id, rows)
        embed_pending(db, get_embedder(), tag=keyphrases)
        return ids

    return factory


@pytest.fixture
def split_bar(monkeypatch):
    """Items sharing a word with the interests (hash-embedder similarity above 0) are strong
    matches,
    the rest no match: for tests that need both sides of the bar, such as a bootstrap's likes
    and dislikes, without depending on the calibrated thresholds."""
    from hermes.ranking import match

    monkeypatch.setitem(
        match.THRESHOLDS, "hermes/hash-384", {**match.THRESHOLDS["hermes/hash-384"], "interest": (0.01, 0.01, 0.01)}
    )
    monkeypatch.setattr(match, "VETO", 0.0)  # the classifier keeps nothing below the bar


@pytest.fixture
def no_bar(monkeypatch):
    """Every item clears the persona's bar (its written interests reach ``strong`` at any
    cosine): for tests of what a face does with the items it shows, not of the bar."""
    from hermes.ranking import match

    monkeypatch.setitem(
        match.THRESHOLDS, "hermes/hash-384", {**match.THRESHOLDS["hermes/hash-384"], "interest": (-2.0, -2.0, -2.0)}
    )
    monkeypatch.setattr(match, "VETO", 0.0)  # nor does a classifier keep any below it


@pytest.fixture
def real_embedder(pm, monkeypatch):
    """The real model as a user gets it (the default embedder, ONNX or torch), not the test
    hash embedder: the active embedder is cached on the plugin manager, so it is dropped."""
    from hermes.embed import get_embedder
    from hermes.onnx_embed.choice import DefaultEmbedder

    monkeypatch.delenv("HERMES_EMBEDDER", raising=False)
    pm.embedder = None
    embedder = get_embedder()
    assert isinstance(embedder, DefaultEmbedder)
    return embedder
