"""``hermes ingest``: fetch every feed concurrently, parse, store, then embed what is new.

Order of work and why:

1. Fetch all due feeds at once (bounded concurrency, one deadline per feed, conditional
   GET). A feed an agent subscribed is fetched through the private-address guard (every
   hop, every DNS answer) unless the user allowed private targets or trusted the feed
   (``hermes feeds trust``); its failures are recorded by their class only, since an agent
   reads them back (``list_feeds``). Each finished fetch is parsed on a worker thread while the others keep
   downloading, then stored from the event-loop thread (the only one touching SQLite).
2. A feed's items and its new ETag / Last-Modified commit in one transaction: a crash
   can never record "seen this version" without its items.
3. Embedding runs last over every item that lacks an embedding, so items left behind by a
   crashed earlier run are completed too; ``hermes_item_tags`` plugins tag each batch from
   the same model pass. A re-run of unchanged feeds costs one 304 per feed, no parsing and
   no model load.
4. Items still waiting for tags are tagged (an archive from before the tag migration, once;
   a ``hermes tags rebuild`` that was interrupted).

The whole run holds the database's ingest lock (:mod:`.runlock`): a second run waits or
says which one is running, and the status it writes shows the progress to other processes.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import sqlite_utils

from hermes.facekit.faces import plural
from hermes.storage.records import now_iso

from .. import config
from ..clock import read_stamp
from ..contract import fail
from ..embed import get_embedder, prewarm
from ..errors import HermesError, NotFound
from ..ranking import matrix_store
from ..ranking.matrix import get_matrix
from ..storage.transactions import write_transaction
from .feedlist import add_feeds, read_feeds_toml, sample_feed_paths, seed_feeds
from .fetch import FetchError, FetchResult, afetch, is_local, new_client, run_sync
from .guard import REFUSED
from .parse import ParsedFeed, ParseError, parse_feed, skipped_note
from .runlock import ingest_run
from .schedule import next_due
from .store import embed_pending, store_items
from .tagging import pending_count, tag_pending, taggers_active
from .text import safe_url

Progress = Callable[[str, int, int], None]  # (stage "fetch" | "embed" | "tag", done, total)

DEFAULT_RATE_LIMIT_BACKOFF = timedelta(minutes=30)  # a 429 without Retry-After
MAX_BACKOFF = timedelta(days=7)
# A feed failing again and again is retried less and less often (15 min after its second
# consecutive failure, doubling, at most a day), so a dead server costs one timeout a day
# rather than one per run. The first failure is retried at the next run: most are transient.
FAILURE_BACKOFF_BASE = timedelta(minutes=15)
FAILURE_BACKOFF_MAX = timedelta(days=1)
EMBED_BATCH = 64


class IngestSummary(list):
    """The per-feed summaries (a plain list of dicts) plus ``embedded``: how many items
    this run embedded, including ones an earlier crashed run left without an embedding,
    and ``not_due``: how many feeds a scheduled run left alone (fetched recently enough),
    and ``tagged``: how many already embedded items it tagged (an archive from before the
    tag migration, or an interrupted ``hermes tags rebuild``)."""

    embedded: int = 0
    not_due: int = 0
    tagged: int = 0

    @property
    def undated(self) -> int:
        """New items of this run without a readable date."""
        return sum(s.get("undated") or 0 for s in self)

    @property
    def first_seen(self) -> int:
        """Of them, the items dated by when this run first saw them (a later fetch)."""
        return sum(s.get("first_seen") or 0 for s in self)

    @property
    def skipped_entries(self) -> dict[str, int]:
        """The entries this run's feeds listed but hermes did not keep, by reason
        (:func:`~.parse.skipped_note` words them)."""
        total: dict[str, int] = {}
        for s in self:
            for reason, n in (s.get("skipped_entries") or {}).items():
                total[reason] = total.get(reason, 0) + n
        return total

    def skipped_words(self) -> str:
        """``"; 1 entry skipped: no title, link or text"`` for the run's message, or ``""``."""
        note = skipped_note(self.skipped_entries)
        return f"; {note}" if note else ""

    def outcome(self) -> dict:
        """The counts kept as the last run's outcome (see :mod:`.runlock`)."""
        counts = {k: sum(1 for s in self if s["status"] == k) for k in ("new", "unchanged", "failed", "skipped")}
        return {
            "ok": True,
            "new_items": sum(s["new"] for s in self),
            "embedded": self.embedded,
            "feeds": len(self),
            "not_due": self.not_due,
            "feeds_by_status": counts,
            "tagged": self.tagged,
            "undated": self.undated,
            "first_seen": self.first_seen,
            "skipped_entries": self.skipped_entries,
        }


def retry_at(value: str | None, status: int | None, now: datetime) -> str | None:
    """When a rate-limited feed may be fetched again (ISO UTC), from ``Retry-After``
    (seconds or an HTTP date); None when the server did not ask for a pause."""
    delay = None
    if value:
        value = value.strip()
        if value.isdigit():
            delay = timedelta(seconds=int(value))
        else:
            try:
                delay = parsedate_to_datetime(value).astimezone(UTC) - now
            except (TypeError, ValueError, IndexError):
                delay = None
    if delay is None and status == 429:
        delay = DEFAULT_RATE_LIMIT_BACKOFF
    if delay is None or delay.total_seconds() <= 0:
        return None
    return (now + min(delay, MAX_BACKOFF)).isoformat(timespec="seconds")


def failure_backoff(consecutive_failures: int, now: datetime) -> str | None:
    """When a feed that failed ``consecutive_failures`` times in a row is next due."""
    if consecutive_failures < 2:
        return None
    delay = min(FAILURE_BACKOFF_BASE * 2 ** min(consecutive_failures - 2, 16), FAILURE_BACKOFF_MAX)
    return (now + delay).isoformat(timespec="seconds")


def _due(feed: dict, now: datetime, *, named: bool = False) -> bool:
    """Whether ``feed`` may be fetched now. A feed the person named (``--feed ID``) is, after
    its own failures too: they asked for it, and a recovered server waited out a day's
    back-off otherwise. A pause the server asked for (429 / 503) is kept all the same."""
    if not feed.get("retry_after"):
        return True
    if named and SERVER_PAUSE not in (feed.get("last_error") or ""):
        return True
    until = read_stamp(feed["retry_after"])
    return until is None or until <= now


#: how a failure the server asked a pause for is recorded (``feeds.last_error``)
SERVER_PAUSE = "the server asked for a pause"


def skip_reason(feed: dict) -> str:
    """Why a feed is not fetched before its ``retry_after``, as recorded by its last failure:
    the server asked for a pause (429 / 503), or it failed so many times in a row."""
    until = f"wait until {feed['retry_after']}"
    last = (feed.get("last_error") or "").split("; ")[0]
    failures = feed.get("error_count") or 0
    in_a_row = f"{plural(failures, 'failure')} in a row"
    if SERVER_PAUSE in (feed.get("last_error") or ""):
        return f"{until}: {SERVER_PAUSE} ({last}; {in_a_row})"
    if failures >= 2:
        return (
            f"{until}: the feed failed {failures} times in a row"
            + (f" (last: {last})" if last else "")
            + f"; `hermes ingest --feed {feed['id']}` fetches it now"
        )
    return f"{until} (the server asked for a pause, or the feed failed repeatedly)"


def _summary(
    feed: dict,
    status: str,
    new: int = 0,
    error: str | None = None,
    warning: str | None = None,
    title: str | None = None,
    updated: int = 0,
    undated: int = 0,
    first_seen: int = 0,
    known_elsewhere: int = 0,
    adopted: int = 0,
    skipped_entries: dict[str, int] | None = None,
) -> dict:
    return {
        "feed_id": feed["id"],
        "url": feed["url"],
        "title": title or feed.get("title"),
        "status": status,
        "new": new,
        "updated": updated,
        "undated": undated,
        "first_seen": first_seen,
        "known_elsewhere": known_elsewhere,
        "adopted": adopted,
        # entries the feed listed but hermes did not keep, by reason; ``skipped`` words them
        "skipped_entries": skipped_entries or {},
        "skipped": skipped_note(skipped_entries),
        # fetched for the first time: "unchanged" would be no word for what it yielded
        "first_fetch": not feed.get("last_fetched"),
        "error": error,
        "warning": warning,
    }


def _record_failure(db, feed: dict, error: str, retry_after: str | None = None) -> None:
    with write_transaction(db):
        db.execute(
            """UPDATE feeds SET last_error = ?, error_count = error_count + 1,
                      last_fetched = ?, retry_after = ? WHERE id = ?""",
            [error, now_iso(), retry_after, feed["id"]],
        )


def _record_not_modified(db, feed: dict, res: FetchResult) -> None:
    with write_transaction(db):
        db.execute(
            """UPDATE feeds SET etag = ?, last_modified = ?, last_fetched = ?, last_error = NULL,
                      error_count = 0, retry_after = NULL WHERE id = ?""",
            [res.etag, res.last_modified, now_iso(), feed["id"]],
        )


def _store(db, feed: dict, res: FetchResult, parsed: ParsedFeed):
    with write_transaction(db):
        stored = store_items(db, feed["id"], parsed.items)
        db.execute(
            """UPDATE feeds SET etag = ?, last_modified = ?, last_fetched = ?, last_error = NULL,
                      error_count = 0, retry_after = NULL, last_warning = ?, ttl = ?,
                      title = COALESCE(NULLIF(title, ''), ?),
                      site_url = COALESCE(site_url, ?) WHERE id = ?""",
            [
                res.etag,
                res.last_modified,
                now_iso(),
                "; ".join(filter(None, [parsed.warning, skipped_note(parsed.skipped)])) or None,
                parsed.ttl,
                parsed.title or None,
                safe_url(parsed.link),
                feed["id"],
            ],
        )
    return stored


def _parse(res: FetchResult) -> ParsedFeed:
    try:
        parsed = parse_feed(res.body or b"", url=res.final_url, headers=res.headers)
    except ParseError:
        raise
    except Exception as exc:  # feedparser on hostile input: a bad feed, not a crashed run
        raise ParseError(f"parser failed: {type(exc).__name__}: {exc}") from exc
    return parsed


def trusted(feed: dict, settings: config.Settings) -> bool:
    """Whether ``feed`` is fetched without the private-address guard: one a person subscribed
    (CLI, OPML, feeds.toml) or trusted, or any feed once the user allowed private targets."""
    return settings.allow_private or feed.get("subscribed_by") == "user"


async def _ingest_feeds(
    db,
    feeds: list[dict],
    settings: config.Settings,
    progress: Progress | None,
    on_new: Callable[[], None] = lambda: None,
) -> list[dict]:
    limit = asyncio.Semaphore(max(1, settings.fetch_concurrency))
    out: list[dict] = []

    clients: dict[bool, object] = {}

    def client_for(feed: dict, allow: bool):
        # Made at the first web feed that needs it: each client builds a TLS context (~30 ms
        # of CPU), which an ingest of local files, or of no agent's feed, never uses.
        if is_local(feed["url"]):
            return None
        if allow not in clients:
            clients[allow] = new_client(settings.fetch_timeout, allow_private=allow)
        return clients[allow]

    async def one(feed: dict):
        allow = trusted(feed, settings)
        async with limit:
            try:
                return (
                    feed,
                    await afetch(
                        feed["url"],
                        client=client_for(feed, allow),
                        etag=feed["etag"],
                        last_modified=feed["last_modified"],
                        timeout=settings.fetch_timeout,
                        max_bytes=settings.max_feed_bytes,
                        allow_private=allow,
                    ),
                    None,
                )
            except FetchError as exc:
                return feed, None, exc
            except Exception as exc:  # noqa: BLE001 - one broken feed never stops the others
                error = FetchError(f"fetch failed: {type(exc).__name__}: {exc}", kind="fetch failed")
                return feed, None, error if allow else error.generic()

    try:
        tasks = [asyncio.ensure_future(one(feed)) for feed in feeds]
        for done, next_done in enumerate(asyncio.as_completed(tasks), 1):
            feed, res, err = await next_done
            out.append(await _handle(db, feed, res, err))
            if out[-1]["new"]:
                on_new()
            if progress:
                progress("fetch", done, len(feeds))
    finally:
        for client in clients.values():
            await client.aclose()
    return out


async def _handle(db, feed: dict, res: FetchResult | None, err: FetchError | None) -> dict:
    if err is not None:
        now = datetime.now(UTC)
        paused = retry_at(err.retry_after, err.status, now) if err.status in (429, 503) else None
        backoff = paused or failure_backoff((feed.get("error_count") or 0) + 1, now)
        message = str(err) + (
            f"; {SERVER_PAUSE} until {paused}"
            if paused
            else f"; {_refused_again(backoff)}"
            if err.kind == REFUSED and backoff
            else f"; retrying after {backoff}"
            if backoff
            else ""
        )
        _record_failure(db, feed, message, backoff)
        return _summary(feed, "failed", error=message)
    if res.not_modified:
        _record_not_modified(db, feed, res)
        return _summary(feed, "unchanged")
    try:
        parsed = await asyncio.to_thread(_parse, res)
    except ParseError as exc:
        # The ETag is not stored, so a fixed feed is fetched and parsed in full next time;
        # and it backs off like a feed that cannot be fetched (a page that is no feed failed
        # every run, a --watch said so every minute).
        backoff = failure_backoff((feed.get("error_count") or 0) + 1, datetime.now(UTC))
        message = str(exc) + (f"; retrying after {backoff}" if backoff else "")
        _record_failure(db, feed, message, backoff)
        return _summary(feed, "failed", error=message)
    try:
        stored = _store(db, feed, res, parsed)
    except (sqlite3.IntegrityError, sqlite3.InterfaceError, ValueError, TypeError) as exc:
        _record_failure(db, feed, f"could not store items: {exc}")
        return _summary(feed, "failed", error=f"could not store items: {exc}")
    new = len(stored.new_ids)
    return _summary(
        feed,
        "new" if new else "unchanged",
        new=new,
        warning=parsed.warning,
        title=feed.get("title") or parsed.title,
        updated=len(stored.updated_ids),
        undated=stored.undated,
        first_seen=stored.first_seen,
        known_elsewhere=stored.known_elsewhere,
        adopted=stored.adopted,
        skipped_entries=parsed.skipped,
    )


def _refused_again(backoff: str) -> str:
    # "retrying after …" promised what a retry cannot do: the guard refuses every try
    return f"refused on every try until the feed is trusted or private addresses are allowed (next try after {backoff})"


def select_feeds(db: sqlite_utils.Database, feed_ids: list[int] | None = None) -> list[dict]:
    cols = [
        "id",
        "url",
        "title",
        "etag",
        "last_modified",
        "retry_after",
        "error_count",
        "last_error",
        "last_fetched",
        "ttl",
        "subscribed_by",
    ]
    rows = [
        dict(zip(cols, r, strict=True))
        for r in db.execute(f"SELECT {', '.join(cols)} FROM feeds ORDER BY id").fetchall()
    ]
    if feed_ids is None:
        return rows
    wanted = set(feed_ids)
    missing = sorted(wanted - {r["id"] for r in rows})
    if missing:
        raise NotFound(f"unknown feed id(s): {', '.join(map(str, missing))}; see `hermes feeds list`")
    return [r for r in rows if r["id"] in wanted]


def run_ingest(
    db: sqlite_utils.Database,
    *,
    feed_ids: list[int] | None = None,
    embedder=None,
    progress: Progress | None = None,
    settings: config.Settings | None = None,
    due_every: float | None = None,
    wait: bool = True,
    on_wait: Callable[[dict | None], None] | None = None,
) -> IngestSummary:
    """Ingest the feeds in the database (or only ``feed_ids``) and embed what is new.

    Returns one summary per feed: ``{feed_id, url, title, status, new, error, warning}``
    with ``status`` one of ``new`` / ``unchanged`` / ``failed`` / ``skipped`` (a server asked
    us to wait: ``feeds.retry_after``). Failures are recorded on the feed row and never stop
    the other feeds. Feeds an agent subscribed are fetched through the private-address guard
    (see :func:`trusted`); a person's feeds may be local paths and LAN servers.

    :param due_every: a scheduled run: only the feeds due with this refresh interval
        (seconds; see :mod:`.schedule`) are fetched, the others are left out of the summary.
    :param wait: when another ingest of this database runs, wait for it (True) or raise
        :class:`~.runlock.IngestBusy` (False); ``on_wait(running)`` is told before waiting.
    :raises HermesError: when embedding fails; the items stay stored without an embedding
        and the next run completes them (``exc.summary`` holds the per-feed summaries).
    """
    settings = settings or config.settings()
    mode = "due" if due_every is not None else "all"
    if feed_ids is not None:
        # an unknown id is the caller's mistake, refused before the run starts: it leaves
        # no trace in the refresh status ("Refreshing fails: unknown feed id(s)", trial finding)
        select_feeds(db, feed_ids)
    with ingest_run(db, wait=wait, mode=mode, on_wait=on_wait) as status:

        def report(stage: str, done: int, total: int) -> None:
            if status is not None:
                status.progress(stage, done, total)
            if progress:
                progress(stage, done, total)

        try:
            summary = _run(db, feed_ids, embedder, report, settings, due_every)
        except HermesError as exc:
            if status is not None:
                status.finish(fail(str(exc)))
            raise
        if status is not None:
            status.finish(summary.outcome())
    return summary


def _run(db, feed_ids, embedder, progress, settings, due_every) -> IngestSummary:
    now = datetime.now(UTC)
    feeds = select_feeds(db, feed_ids)
    not_due = 0
    if due_every is not None:
        before = len(feeds)
        feeds = [f for f in feeds if next_due(f, due_every) <= now]
        not_due = before - len(feeds)
    named = bool(feed_ids)
    due = [f for f in feeds if _due(f, now, named=named)]
    summary = IngestSummary(
        _summary(f, "skipped", error=skip_reason(f)) for f in feeds if not _due(f, now, named=named)
    )
    summary.not_due = not_due
    warming: dict = {}

    def on_new() -> None:
        # New items will need the model: load it now, while the other feeds download,
        # rather than after the last one (the load takes seconds; a 304 run never pays it).
        # The run so far is announced first, so the path it will embed with is the one
        # loaded; when more items tip it to the bulk path, that one is loaded too.
        model = embedder or get_embedder()
        path = announce(db, model)[1]
        if path not in warming:
            warming[path] = prewarm(model)

    if due:
        results = run_sync(lambda: _ingest_feeds(db, due, settings, progress, on_new))
        order = {f["id"]: k for k, f in enumerate(feeds)}
        summary.extend(results)
        summary.sort(key=lambda s: order[s["feed_id"]])
    for thread in warming.values():
        if thread is not None:
            thread.join()
    summary.embedded = embed_new(db, embedder, progress=progress, summary=summary)
    summary.tagged = tag_archive(db, embedder, progress=progress)
    if summary.embedded + summary.tagged >= matrix_store.MIN_ROWS:
        _warm_matrix(db, embedder)
    return summary


def _warm_matrix(db, embedder=None) -> None:
    """After a large batch, load the matrix here so its on-disk snapshot is written: the
    next fresh process (a CLI call, the MCP server) then ranks without reading every row."""
    embedder = embedder or get_embedder()
    get_matrix(db, embedder.name, embedder.dimension)


def tag_archive(db, embedder=None, *, progress: Progress | None = None) -> int:
    """Tag the already embedded items still waiting for tags (see :mod:`.tagging`): costs
    a model pass per item, once. Cheap when nothing waits (one count)."""
    if not taggers_active():
        return 0
    embedder = embedder or get_embedder()
    if not pending_count(db, embedder.name):
        return 0
    tick = (lambda done, total: progress("tag", done, total)) if progress else None
    return tag_pending(db, embedder, progress=tick)


def announce(db, embedder) -> tuple[int, str | None]:
    """How many items wait for an embedding from ``embedder``, told to an embedder that
    chooses its path by the size of the run (``expect``: the default model), and the path
    it chose (None for any other embedder)."""
    total = db.execute(
        "SELECT count(*) FROM items WHERE embedding IS NULL OR embedding_model IS NOT ?", [embedder.name]
    ).fetchone()[0]
    expect = getattr(embedder, "expect", None)
    return total, (expect(total) if expect else None)


def embed_new(db, embedder=None, *, progress: Progress | None = None, summary=None) -> int:
    """Embed every item without an embedding from the active model, in batches."""
    if embedder is None:
        embedder = get_embedder()  # cheap: the model itself loads on the first embed call
    total = announce(db, embedder)[0]
    if not total:
        return 0
    done = 0
    if progress:
        progress("embed", 0, total)  # shown before the first batch, which may load the model

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress("embed", done, total)

    try:
        return embed_pending(db, embedder, batch_size=EMBED_BATCH, progress=tick)
    except Exception as exc:
        error = HermesError(
            f"embedding failed after {done} of {total} items ({type(exc).__name__}: {exc}); "
            "the items are stored and the next `hermes ingest` embeds them"
        )
        error.summary = summary
        raise error from exc


__all__ = [
    "IngestSummary",
    "add_feeds",
    "embed_new",
    "read_feeds_toml",
    "retry_at",
    "run_ingest",
    "sample_feed_paths",
    "seed_feeds",
    "select_feeds",
    "tag_archive",
]
