"""Which feeds to ingest: seeding the feeds table from ``feeds.toml`` and the bundled
sample feeds of the offline demo."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from hermes.facekit.faces import plural
from hermes.storage.records import insert_feed, now_iso

from .. import config
from ..errors import HermesError
from ..storage.transactions import write_transaction
from .locations import is_local, local_path
from .text import remove_dot_segments, without_tracking

SEEDED_KEY = "feeds_seeded"


def sample_feed_paths() -> list[Path]:
    """The sample feeds shipped as package data (arXiv listings, a blog, a podcast)."""
    return sorted((config.PACKAGE_DATA / "samples").glob("*.xml"))


def read_feeds_toml(path: Path) -> list[tuple[str, str | None]]:
    """``[[feeds]]`` tables with ``url`` (a URL, or a path relative to the file) and an
    optional ``title``; returns ``(url, title)`` pairs."""
    data = config.load_toml(path)
    # A typo is refused, not skipped: `[[feed]]` dropped its feed and `titel` its title.
    unknown = sorted(set(data) - {"feeds"})
    if unknown:
        raise HermesError(
            f"{path}: unknown key(s) {', '.join(unknown)}; each feed is a "
            "[[feeds]] table with url and an optional title"
        )
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
        extra = sorted(set(entry) - {"url", "title"})
        if extra:
            raise HermesError(
                f"{path}: feed #{n} has unknown key(s) {', '.join(extra)}; a feed has url and an optional title"
            )
        url = url.strip()
        if is_local(url) and not url.lower().startswith("file:"):
            local = Path(url).expanduser()
            url = str(local if local.is_absolute() else (path.parent / local).resolve())
        out.append((url, entry.get("title")))
    return out


def canonical_location(url: str) -> str:
    """One spelling per feed, so the same feed cannot be subscribed twice: a local file as
    its absolute resolved path (``file://`` URLs and relative paths included), a web URL
    with its scheme and host lower-cased, the default port, ``.`` and ``..`` path segments
    and any fragment dropped."""
    url = url.strip()
    if is_local(url):
        return str(local_path(url).expanduser().resolve())
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # a malformed port: leave the URL for the fetcher to refuse
        return url
    netloc = host if port in (None, {"http": 80, "https": 443}.get(scheme)) else f"{host}:{port}"
    if parts.username or parts.password:
        userinfo = parts.netloc.rpartition("@")[0]
        netloc = f"{userinfo}@{netloc}"
    return urllib.parse.urlunsplit((scheme, netloc, remove_dot_segments(parts.path or "/"), parts.query, ""))


def same_feed_key(url: str) -> str:
    """What two addresses of one feed share, for finding a subscription (never fetched):
    :func:`canonical_location`, with this machine's own host names (localhost, 127.0.0.1,
    ::1: one feed served locally is one feed under any of them) folded into one and
    campaign-tracking parameters (``utm_*``, ``fbclid`` …) dropped."""
    canonical = canonical_location(url)
    if is_local(canonical):
        return canonical
    parts = urllib.parse.urlsplit(canonical)
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:  # a malformed port (canonical_location left the URL as it was)
        return canonical
    host = "localhost" if host in {"localhost", "127.0.0.1", "::1"} else host
    netloc = f"{host}:{port}" if port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, without_tracking(parts.query), ""))


def _first_at(rows, url: str) -> tuple | None:
    """The first ``(id, url, …)`` row whose URL is ``url`` however it is spelled."""
    wanted = same_feed_key(url)
    for row in rows:
        if row[1] == url or same_feed_key(row[1]) == wanted:
            return row
    return None


def find_feed(db: sqlite_utils.Database, url: str) -> dict | None:
    """The subscribed feed at ``url`` however it is spelled (see :func:`same_feed_key`)."""
    row = _first_at(db.execute("SELECT id, url, title FROM feeds ORDER BY id"), url)
    return None if row is None else {"id": row[0], "url": row[1], "title": row[2]}


#: what a removed feed's row remembers besides its id and URL, given back on re-subscribing
PLACES = ("title", "folder", "site_url")


@dataclass(frozen=True)
class Registered:
    """A feed :func:`register_feed` subscribed: its id, and which of :data:`PLACES` it took
    back from when it was subscribed before (empty for a new feed, or when the caller's own
    values won)."""

    id: int
    restored: tuple[str, ...] = ()


def register_feed(
    db: sqlite_utils.Database,
    url: str,
    title: str | None,
    *,
    subscribed_by: str,
    folder: str | None = None,
    site_url: str | None = None,
    feed_title: str | None = None,
) -> Registered | None:
    """:func:`~hermes.storage.records.insert_feed` under the id the feed's items carry: a feed removed
    earlier and subscribed again (same :func:`same_feed_key`) takes its old id back, so its
    items, the clicks on them and the ranking's ``source:<id>`` key are its own again with no
    item rewritten; a new feed never gets an id that a removed feed's items still carry
    (SQLite would hand out the last removed id again).

    ``title``, ``folder`` and ``site_url`` are the caller's (a person's ``--title``, an OPML
    outline's) and win; whichever is missing comes back from the removed feed's row, and the
    title last of all from ``feed_title`` (the feed's own). Returns ``None`` when the URL is
    already subscribed. Call it inside the caller's write transaction."""
    feed_id = insert_feed(db, url, None, subscribed_by=subscribed_by)
    if feed_id is None:
        return None
    former = _former(db, url, feed_id)
    wanted = former["id"] if former else _unused_id(db, feed_id)
    if wanted != feed_id:
        # The row was inserted a moment ago, in this transaction: nothing refers to it yet.
        db.execute("UPDATE feeds SET id = ? WHERE id = ?", [wanted, feed_id])
    db.execute("DELETE FROM removed_feeds WHERE id = ?", [wanted])
    given = {"title": title, "folder": folder, "site_url": site_url}
    kept = {k: v for k, v in (former or {}).items() if k in PLACES and v and not given[k]}
    place = {**given, **kept}
    place["title"] = place["title"] or feed_title
    db.execute(
        "UPDATE feeds SET title = ?, folder = ?, site_url = ? WHERE id = ?",
        [place["title"], place["folder"], place["site_url"], wanted],
    )
    # A remembered title equal to the feed's own gives nothing back worth saying.
    restored = tuple(k for k in PLACES if k in kept and not (k == "title" and kept[k] == feed_title))
    return Registered(wanted, restored)


#: how :func:`taken_back` names what a feed subscribed again took back
_PLACE_WORDS = {"title": "title", "folder": "folder", "site_url": "site link"}


def taken_back(feed: dict, show: Callable[[str], str] | None = None) -> str:
    """What a feed subscribed again took back, as a sentence ("" for a new feed): the title,
    folder and site link it had (``feed["restored"]``), each value shown with ``show`` on a
    person's face — without it they are named, not quoted, since a remembered title may be
    the feed's own text, which an agent's message never carries — and its stored items
    (``feed["items_kept"]``) with their ratings."""
    places = [f"{_PLACE_WORDS[k]} {show(feed[k])}" if show else _PLACE_WORDS[k] for k in feed.get("restored") or ()]
    bits = []
    if places:
        joined = ", ".join(places[:-1]) + " and " + places[-1] if len(places) > 1 else places[0]
        bits.append(f"its {joined} from before {'are' if len(places) > 1 else 'is'} back")
    if feed.get("items_kept"):
        bits.append(f"its {plural(feed['items_kept'], 'stored item')} and every rating of them are its own again")
    return f"It was subscribed before: {', and '.join(bits)}." if bits else ""


def _former(db: sqlite_utils.Database, url: str, inserted: int) -> dict | None:
    """The same feed's row in ``removed_feeds`` (id, url and :data:`PLACES`), unless a feed
    other than the row just ``inserted`` holds its id."""
    names = ("id", "url", *PLACES)
    row = _first_at(
        db.execute(
            f"SELECT {', '.join(names)} FROM removed_feeds "
            "WHERE id NOT IN (SELECT id FROM feeds WHERE id != ?) "
            "ORDER BY removed DESC, id DESC",
            [inserted],
        ),
        url,
    )
    return None if row is None else dict(zip(names, row, strict=True))


def _unused_id(db: sqlite_utils.Database, feed_id: int) -> int:
    """``feed_id``, or past every id a removed feed (or an orphaned item) still carries."""
    top = db.execute(
        "SELECT max(coalesce((SELECT max(id) FROM removed_feeds), 0), coalesce((SELECT max(feed_id) FROM items), 0))"
    ).fetchone()[0]
    return feed_id if feed_id > top else top + 1


def forget_feed(db: sqlite_utils.Database, feed_id: int) -> None:
    """Unsubscribe: delete the feed row and remember its id, URL, title, folder and site
    (:func:`register_feed` gives them back when the same feed is subscribed again). Call it
    inside the caller's write transaction."""
    # Orphan, never cascade: items keep their feed_id, so every click that trained a persona
    # survives and the items stay rankable and searchable.
    db.execute(
        f"INSERT OR REPLACE INTO removed_feeds (id, url, removed, {', '.join(PLACES)}) "
        f"SELECT id, url, ?, {', '.join(PLACES)} FROM feeds WHERE id = ?",
        [now_iso(), feed_id],
    )
    db.execute("DELETE FROM feeds WHERE id = ?", [feed_id])


def add_feeds(db: sqlite_utils.Database, feeds: list[tuple], *, subscribed_by: str = "user") -> list[int]:
    """Register feeds under their canonical location, skipping any already subscribed
    (however spelled); return the ids of the ones added. Each entry is ``(url, title)``, or
    ``(url, title, folder, site_url)`` (an OPML outline).

    ``subscribed_by``: ``user`` for lists a person gave (feeds.toml, OPML, the CLI), ``agent``
    for a URL from an MCP tool or the web form; ingest guards an agent's feeds.
    """
    added = []
    with write_transaction(db):
        for url, title, *place in feeds:
            if find_feed(db, url):
                continue
            folder, site_url = (*place, None, None)[:2]
            done = register_feed(
                db, canonical_location(url), title, subscribed_by=subscribed_by, folder=folder, site_url=site_url
            )
            if done is not None:
                added.append(done.id)
    return added


def seed_feeds(db: sqlite_utils.Database, path: Path | None = None, *, subscribe: bool = True) -> list[int]:
    """Seed the feeds table from ``feeds.toml`` — once per database (:func:`start_database`).

    It runs only while the database has never been seeded and has no feeds; after that the
    database is the truth (``hermes feeds add/remove`` and the tools change it) and editing
    ``feeds.toml`` has no effect, so a removed feed never comes back. Returns the new ids.
    ``subscribe=False`` marks the database seeded with none of them (it was started by a
    command that brings its own feeds)."""
    path = path or config.feeds_toml()
    if db.execute("SELECT 1 FROM meta WHERE key = ?", [SEEDED_KEY]).fetchone():
        return []  # the usual case, answered without waiting for the write lock
    with write_transaction(db):
        if db.execute("SELECT 1 FROM meta WHERE key = ?", [SEEDED_KEY]).fetchone():
            return []
        db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", [SEEDED_KEY, now_iso()])
        if not subscribe or db.execute("SELECT 1 FROM feeds LIMIT 1").fetchone():
            return []
        return add_feeds(db, read_feeds_toml(path))


def start_database(path: Path, *, starters: bool = True) -> tuple[sqlite_utils.Database, bool, list[int], Path]:
    """Open ``path`` for a command meant to start a database: create it when missing, and
    give the starter feeds of ``feeds.toml`` to a database that was never started (a new one,
    or one whose creation was interrupted), once.

    The one rule for starter feeds: the first command that starts a database (a CLI command
    meant to start one, ``hermes serve``, ``hermes web``) subscribes them, and the face says
    so — unless that command subscribes feeds of its own (``starters=False``: ``hermes feeds
    add``, ``hermes feeds import-opml``), whose person chose what to read. Returns the
    database, whether this call created the file, the ids of the feeds subscribed and the
    file they came from.
    """
    # Here, not at the top: opening a database runs migrations, which reach the plugin
    # manager; the feed list itself loads only what reading feeds.toml needs.
    from ..storage.db import get_db

    created = not (path.exists() or path.is_symlink())
    source = config.feeds_toml()
    db = get_db(path)
    try:
        seeded = seed_feeds(db, source, subscribe=starters)
    except HermesError:
        db.conn.close()
        if created:  # leave no half-started database behind: the next command starts afresh
            for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                leftover.unlink(missing_ok=True)
        raise
    return db, created, seeded, source
