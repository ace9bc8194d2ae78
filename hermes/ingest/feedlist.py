"""Which feeds to ingest: seeding the feeds table from ``feeds.toml`` and the bundled
sample feeds of the offline demo."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from .. import config
from ..errors import HermesError
from ..records import insert_feed, now_iso
from ..storage.transactions import write_transaction
from .fetch import is_local

SEEDED_KEY = "feeds_seeded"


def sample_feed_paths() -> list[Path]:
    """The sample feeds shipped as package data (arXiv listings, a blog, a podcast)."""
    return sorted((config.PACKAGE_DATA / "samples").glob("*.xml"))


def read_feeds_toml(path: Path) -> list[tuple[str, str | None]]:
    """``[[feeds]]`` tables with ``url`` (a URL, or a path relative to the file) and an
    optional ``title``; returns ``(url, title)`` pairs."""
    data = config.load_toml(path)
    entries = data.get("feeds", [])
    if not isinstance(entries, list):
        raise HermesError(f"{path}: 'feeds' must be an array of tables ([[feeds]])")
    out = []
    for n, entry in enumerate(entries, 1):
        if isinstance(entry, str):
            entry = {"url": entry}
        url = entry.get("url") if isinstance(entry, dict) else None
        if not isinstance(url, str) or not url.strip():
            raise HermesError(f"{path}: feed #{n} has no url")
        url = url.strip()
        if is_local(url) and not url.lower().startswith("file:"):
            local = Path(url).expanduser()
            url = str(local if local.is_absolute() else (path.parent / local).resolve())
        out.append((url, entry.get("title")))
    return out


def add_feeds(db: sqlite_utils.Database, feeds: list[tuple[str, str | None]], *,
              subscribed_by: str = "user") -> list[int]:
    """Register feeds (``INSERT OR IGNORE`` by URL); return the ids of the ones added.

    ``subscribed_by``: ``user`` for lists a person gave (feeds.toml, OPML, the CLI), ``agent``
    for a URL from an MCP tool or the web form; ingest guards an agent's feeds.
    """
    added = []
    with write_transaction(db):
        for url, title in feeds:
            feed_id = insert_feed(db, url, title, subscribed_by=subscribed_by)
            if feed_id is not None:
                added.append(feed_id)
    return added


def seed_feeds(db: sqlite_utils.Database, path: Path | None = None) -> list[int]:
    """Seed the feeds table from ``feeds.toml`` — once per database.

    It runs only while the database has never been seeded and has no feeds; after that the
    database is the truth (``hermes feeds add/remove`` and the tools change it) and editing
    ``feeds.toml`` has no effect, so a removed feed never comes back. Returns the new ids.
    """
    path = path or config.feeds_toml()
    if db.execute("SELECT 1 FROM meta WHERE key = ?", [SEEDED_KEY]).fetchone():
        return []  # the usual case, answered without waiting for the write lock
    with write_transaction(db):
        if db.execute("SELECT 1 FROM meta WHERE key = ?", [SEEDED_KEY]).fetchone():
            return []
        db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", [SEEDED_KEY, now_iso()])
        if db.execute("SELECT 1 FROM feeds LIMIT 1").fetchone():
            return []
        return add_feeds(db, read_feeds_toml(path))
