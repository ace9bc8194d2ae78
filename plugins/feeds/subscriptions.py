"""Subscriptions: checking a URL, probing it with one fetch + parse, registering, listing and
removing feeds. Shared by the MCP tools (untrusted callers) and the CLI (a trusted person).

Registering never ingests: the next ``hermes ingest`` (or the background refresh of
``hermes serve`` / ``hermes web``) fetches, parses and embeds the new feed's items, so a
tool call stays one cheap network round trip; the reply says which applies (:func:`arrival`).
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable

from hermes.arguments import local_path
from hermes.config import settings
from hermes.contract import fail, ok
from hermes.errors import InvalidInput, NotFound
from hermes.facekit.faces import Say, plural
from hermes.ingest.refresher import refresh_state
from hermes.ingest.runlock import describe
from hermes.net import is_loopback
from hermes.storage.clicks import clicks_on_feed
from hermes.storage.records import file_of, now_iso
from hermes.storage.transactions import write_transaction

log = logging.getLogger(__name__)

LIST_FEEDS = Say(
    mcp="list_feeds shows the subscribed feeds' ids",
    cli="`hermes feeds list` shows the subscribed feeds' ids",
    web="the Feeds page lists the subscribed feeds",
)
INGEST_NEW = Say(
    mcp="no background refresh runs in this server, so its items arrive when the "
    "person running hermes runs `hermes ingest`",
    cli="run `hermes ingest` to load its items",
    web="its items arrive with the next refresh",
)
ITEM_COUNT = Say(
    mcp="list_feeds then shows its item_count",
    cli="`hermes feeds list` then shows its item count",
    web="the Feeds page then shows its item count",
)
NO_BACKGROUND = Say(
    mcp="`hermes ingest` fetches the feeds (hermes web and hermes serve refresh them on their own)",
    cli="`hermes ingest` fetches the feeds (`hermes web` and `hermes serve` refresh them on their own)",
    web="Refresh now fetches the feeds",
)
PREVIEW = Say(
    mcp="preview_feed shows them before that",
    cli="`hermes feeds preview URL` shows them before that",
    web="they appear in the feed after that",
)

MAX_TITLE = 200
MAX_FOLDER = 200
FEED_COLUMNS = (
    "id",
    "url",
    "title",
    "folder",
    "site_url",
    "added",
    "last_fetched",
    "last_error",
    "error_count",
    "retry_after",
    "last_warning",
    "ttl",
    "subscribed_by",
    "trusted_at",
)


def check_web_url(url: str) -> str:
    """An absolute http(s) URL with a host, or :class:`InvalidInput`.

    Defence in depth: agents pass URLs they read in untrusted feed text. Only web URLs are
    accepted here, so a tool call can never read ``file:///home/…`` or a local path; the
    fetcher separately refuses private, loopback and link-local addresses (on every redirect
    hop and every DNS answer, also at each later ingest) unless the user allowed them.
    """
    if not url.strip():
        raise InvalidInput("url must be a non-empty http(s) URL")
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        meant = with_scheme(url)
        hint = f"; with its scheme it reads {meant[:220]!r}: pass that" if meant else ""
        if not meant and local_path(url):
            # a feed file on this machine: the person subscribes it, never an agent's call
            hint = (
                "; a feed file on this machine is the person's to subscribe, at the terminal: `hermes feeds add PATH`"
            )
        raise InvalidInput(f"only http:// and https:// feed URLs are accepted, got {url[:200]!r}{hint}")
    if not parts.hostname:
        raise InvalidInput(f"the URL {url[:200]!r} has no host name")
    return url


def with_scheme(url: str) -> str | None:
    """``url`` with the scheme it lacks, when it is a host (and port, path) and no scheme:
    ``http://`` for this machine (a loopback server rarely speaks TLS), ``https://`` for any
    other host; None when it has a scheme of its own or names no host (a path)."""
    if "://" in url or local_path(url):
        return None
    try:
        parts = urllib.parse.urlsplit("//" + url)
        host, _ = parts.hostname, parts.port  # a port that is no number raises
    except ValueError:
        return None
    if not host or parts.username is not None or not (host == "localhost" or "." in host or ":" in host):
        return None  # "feeds", "rss:" or "mailto:a@b.org" is no feed's address
    return f"{'http' if is_loopback(host) else 'https'}://{url}"


def normalise_location(location: str) -> str:
    """What the CLI stores for ``hermes feeds add``: the canonical location (local paths and
    ``file://`` URLs as one absolute path, so ``hermes ingest`` finds them from any working
    directory and the same file is never subscribed twice)."""
    # Here, not at the top: httpx and feedparser load only when a feed is fetched or read.
    from hermes.ingest.feedlist import canonical_location
    from hermes.ingest.locations import is_local

    location = location.strip()
    if not location:
        raise InvalidInput("give a feed URL or a path to a feed file")
    if is_local(location):
        return canonical_location(location)
    return canonical_location(check_web_url(location))


def probe(url: str, *, allow_private: bool) -> dict:
    """One fetch + parse of ``url``: ``{"title", "n_entries", "entries", "warning"}``.

    Raises :class:`InvalidInput` with the fetcher's or parser's reason when the URL does not
    give a feed. Nothing is written.
    """
    # Here, not at the top: httpx and the feed parser load only when a feed is fetched, not
    # for `hermes feed` (whose tools module imports this one; issue 36).
    from hermes.ingest.fetch import FetchError, fetch
    from hermes.ingest.guard import REFUSED, refused_here
    from hermes.ingest.parse import ParseError, parse_feed

    # and the link finder (html.parser) for a page that is no feed
    from .discover import feed_links, looks_like_html

    cfg = settings()

    def get(address: str):
        try:
            return fetch(
                address, allow_private=allow_private, timeout=min(cfg.fetch_timeout, 20.0), max_bytes=cfg.max_feed_bytes
            )
        except FetchError as exc:
            if not allow_private and str(exc) == REFUSED:
                # Not a failed fetch: nothing was asked of that address. Say what allows it.
                raise InvalidInput(
                    refused_here(address, "subscribe this one at the terminal: hermes feeds add URL")
                ) from None
            raise InvalidInput(f"could not fetch {address[:200]!r}: {exc}") from None

    got, feed_url, page_url = get(url), url, None
    try:
        parsed = parse_feed(got.body or b"", url=got.final_url or url, headers=got.headers)
    except ParseError as exc:
        if not looks_like_html(got.body or b"", got.headers):
            raise InvalidInput(f"{url[:200]!r} is not a usable feed: {exc}") from None
        # A web page: follow its <link rel="alternate"> to the feed, as feed readers do.
        links = feed_links(got.body or b"", got.final_url or url)
        if not links:
            raise InvalidInput(
                f"{url[:200]!r} is an HTML page, not a feed, and it links no feed "
                '(no <link rel="alternate"> of a feed type); give the feed\'s '
                "own URL"
            ) from None
        page_url, feed_url = url, links[0]
        got = get(feed_url)
        try:
            parsed = parse_feed(got.body or b"", url=got.final_url or feed_url, headers=got.headers)
        except ParseError as inner:
            raise InvalidInput(
                f"{url[:200]!r} is a web page linking the feed {feed_url[:200]!r}, which is not usable: {inner}"
            ) from None
    return {
        "title": parsed.title,
        "n_entries": len(parsed.items),
        "entries": parsed.items,
        "warning": parsed.warning,
        "final_url": got.final_url,
        "feed_url": feed_url,
        "page_url": page_url,
        "site_url": parsed.link,
    }


def probe_to_subscribe(url: str, *, allow_private: bool) -> dict:
    """:func:`probe` before subscribing: a refusal also says that nothing was subscribed."""
    try:
        return probe(url, allow_private=allow_private)
    except InvalidInput as exc:
        raise InvalidInput(f"{exc}; nothing was subscribed") from None


def _row(cursor_row, names) -> dict:
    return dict(zip(names, cursor_row, strict=True))


_SHORT = ("id", "url", "title", "subscribed_by")


def feed_by_url(db, url: str) -> dict | None:
    """The subscribed feed at ``url``, however it is spelled (a path or a ``file://`` URL,
    upper-case host, default port)."""
    # Here, not at the top: the ingest modules load httpx, which loads only when a feed is
    # fetched or read.
    from hermes.ingest.feedlist import find_feed

    found = find_feed(db, url)
    if found is None:
        return None
    row = db.execute(f"SELECT {', '.join(_SHORT)} FROM feeds WHERE id = ?", [found["id"]]).fetchone()
    return _row(row, _SHORT)


def feed_by_id(db, feed_id: int) -> dict:
    """The feed's id, url and title, or :class:`NotFound`. ``feed_id`` was checked as a whole
    number by the caller (a tool's strict arguments, the CLI's int); one beyond SQLite's
    integers (2**63 and up) cannot name a feed, so it is unknown like any other."""
    if not 1 <= feed_id < 2**63:
        raise NotFound(f"unknown feed {str(feed_id)[:40]}; list_feeds shows the subscribed feeds' ids")
    row = db.execute("SELECT id, url, title FROM feeds WHERE id = ?", [feed_id]).fetchone()
    if row is None:
        raise NotFound(f"unknown feed {feed_id} in {file_of(db)}; {LIST_FEEDS}")
    return _row(row, ("id", "url", "title"))


def subscribe(
    db, url: str, title: str | None, *, probe_fn: Callable[[str], dict], subscribed_by: str, folder: str | None = None
) -> dict:
    """Validate ``url`` with ``probe_fn`` (one fetch + parse) and register it, in ``folder``
    when given (a path checked by :func:`folder_path`).

    ``subscribed_by`` is ``user`` (the CLI: a person) or ``agent`` (an MCP tool, the web
    form); ingest fetches an agent's feeds through the private-address guard. A feed
    subscribed before takes back its items, and its title, folder and site unless ``title``
    or ``folder`` say otherwise (the payload's ``restored`` names what came back).
    Returns the tool envelope: an unusable feed is ``ok: false`` and inserts nothing. A
    duplicate inserts nothing either: for an agent it is the work found done (``ok: true``,
    ``already_subscribed: true``: a client retrying after a time-out must not read a
    failure), for a person at the CLI a refusal (they typed a URL they have).
    """
    if title is not None:
        title = " ".join(title.split())[:MAX_TITLE] or None
    folder = folder_path(folder)
    # A person's duplicate is refused before any fetch; an agent hears of a subscription only
    # once the private-address guard let its fetch through ("already subscribed" first told
    # it which LAN addresses are feeds).
    person = subscribed_by == "user"
    existing = feed_by_url(db, url) if person else None
    if existing is None:
        parsed = probe_fn(url)
        existing = None if person else feed_by_url(db, url)
    if existing:
        return _already(f"already subscribed: feed {existing['id']} has this URL; nothing changed.", existing, person)
    found_on = ""
    if parsed.get("page_url"):  # a web page: subscribe to the feed it links
        found_on = f"{url[:200]} is a web page; its feed is {parsed['feed_url'][:200]}. "
        # Here, not at the top: the ingest modules (httpx) load only when a feed is fetched.
        from hermes.ingest.feedlist import canonical_location

        url = canonical_location(parsed["feed_url"])
        existing = feed_by_url(db, url)
        if existing:
            return _already(
                f"{found_on}Already subscribed: feed {existing['id']} has that URL; nothing changed.", existing, person
            )
    # Here, not at the top: the ingest modules (httpx) load only when a feed is fetched.
    from hermes.ingest.feedlist import register_feed, taken_back

    with write_transaction(db):
        done = register_feed(
            db,
            url,
            title,
            subscribed_by=subscribed_by,
            folder=folder,
            site_url=parsed.get("site_url"),
            feed_title=parsed["title"] or url,
        )
    if done is None:  # another process subscribed it between the check and the insert
        existing = feed_by_url(db, url)
        return _already(f"already subscribed: feed {existing['id']} has this URL; nothing changed.", existing, person)
    # A feed subscribed again has its stored items back (register_feed gave it their id).
    kept = db.execute("SELECT count(*) FROM items WHERE feed_id = ?", [done.id]).fetchone()[0]
    name, folder = db.execute("SELECT title, folder FROM feeds WHERE id = ?", [done.id]).fetchone()
    feed = {
        "id": done.id,
        "url": url,
        "title": name,
        "folder": folder,
        "n_entries": parsed["n_entries"],
        "found_on_page": parsed.get("page_url"),
        "subscribed_by": subscribed_by,
        "items_kept": kept,
        "restored": list(done.restored),
    }
    warning = f" (the feed has problems but parses: {parsed['warning']})" if parsed.get("warning") else ""
    back = taken_back(feed)
    if not parsed["n_entries"]:
        warning += " (it is empty now: a new feed may not have published yet; each ingest checks it again)"
    return ok(
        f"{found_on}Subscribed: feed {done.id}, {plural(parsed['n_entries'], 'entry', 'entries')} "
        f"visible now{warning}.{' ' + back if back else ''} Adding a feed does not "
        f"ingest: {arrival(db)}; {PREVIEW}.",
        feed=feed,
        already_subscribed=False,
    )


def _already(message: str, feed: dict, person: bool) -> dict:
    """A duplicate subscription: refused for a person, the work found done for an agent."""
    return (fail if person else ok)(message, feed=feed, already_subscribed=True)


def arrival(db) -> str:
    """When a new feed's items arrive, true for the process subscribing it: under ``hermes
    serve`` or ``hermes web`` the background refresh of this process fetches it (a new feed
    is due at once), so pointing an agent at `hermes ingest`, which it cannot run, would be
    wrong; elsewhere a person runs `hermes ingest`."""
    state = refresh_state(db)
    if not state["background"]:
        return str(INGEST_NEW)
    due = f", due {state['next']}" if state.get("next") else ""
    return (
        f"the background refresh of this process (every {state['every']:g} s) fetches it "
        f"at its next run{due}, and {ITEM_COUNT}"
    )


def feed_rows(db) -> list[dict]:
    have = set(db["feeds"].columns_dict)
    cols = [c for c in FEED_COLUMNS if c in have]
    rows = db.execute(
        f"""SELECT {", ".join("f." + c for c in cols)},
                   (SELECT count(*) FROM items i WHERE i.feed_id = f.id) AS item_count
            FROM feeds f ORDER BY f.id"""
    ).fetchall()
    out = []
    for row in rows:
        d = {c: None for c in FEED_COLUMNS}
        d.update(zip([*cols, "item_count"], row, strict=True))
        d["error_count"] = d["error_count"] or 0
        out.append(d)
    return out


def refresh_summary(db, feeds: list[dict]) -> tuple[dict, str]:
    """The refresh state (``hermes.ingest.refresher.refresh_state``) with each feed's
    ``next_fetch`` filled in, and a sentence for the message."""
    state = refresh_state(db)
    due = state.pop("due")
    for feed in feeds:
        feed["next_fetch"] = due.get(feed["id"])
    last = state["last_refresh"]
    bits = [state["failing"]["words"]] if state.get("failing") else []
    bits.append(f"Last refresh {last}." if last else "Never refreshed yet.")
    if state.get("running"):
        bits.append(f"A refresh is running ({describe(state['running'])}).")
    if state["background"]:
        bits.append(f"Next refresh due {state['next']} (every {state['every']:g} s)." if state.get("next") else "")
    else:
        bits.append(f"No background refresh runs in this process: {NO_BACKGROUND}.")
    return state, " ".join(b for b in bits if b)


def rename(db, feed_id: int, title) -> dict:
    """Set a feed's display title (whitespace collapsed, at most MAX_TITLE characters)."""
    if not " ".join(title.split()):
        raise InvalidInput("title must be a non-empty text")
    title = " ".join(title.split())
    if len(title) > MAX_TITLE:
        raise InvalidInput(f"title is {len(title)} characters long; the limit is {MAX_TITLE}")
    feed = feed_by_id(db, feed_id)
    with write_transaction(db):
        db.execute("UPDATE feeds SET title = ? WHERE id = ?", [title, feed["id"]])
    return {**feed, "title": title}


def folder_path(folder) -> str | None:
    """A folder as stored in ``feeds.folder``: nested folders outermost first, joined by
    ``" / "`` as the OPML import stores them (``Science / Physics``), whitespace collapsed;
    ``None`` (the top level) for no folder or an empty one."""
    if folder is None:
        return None
    # Here, not at the top: the OPML module (xml, the feed parser) loads for a folder only.
    from .opml import FOLDER_SEP, folder_parts

    path = FOLDER_SEP.join(folder_parts(" ".join(folder.split()))) or None
    if path and len(path) > MAX_FOLDER:
        raise InvalidInput(f"folder is {len(path)} characters long; the limit is {MAX_FOLDER}")
    return path


def move_to_folder(db, feed_id: int, folder) -> dict:
    """Put a feed in ``folder`` (:func:`folder_path`; empty or ``None``: the top level).
    Returns the feed with its ``folder`` now and the one it ``was`` in."""
    folder = folder_path(folder)
    feed = feed_by_id(db, feed_id)
    with write_transaction(db):
        was = db.execute("SELECT folder FROM feeds WHERE id = ?", [feed["id"]]).fetchone()[0]
        db.execute("UPDATE feeds SET folder = ? WHERE id = ?", [folder, feed["id"]])
    return {**feed, "folder": folder, "was": was}


def orphaned_count(db) -> int:
    return db.execute(
        "SELECT count(*) FROM items WHERE feed_id IS NOT NULL AND feed_id NOT IN (SELECT id FROM feeds)"
    ).fetchone()[0]


def removal_plan(db, feed_id: int) -> dict:
    """What removing ``feed_id`` touches: the feed row only; its items and clicks stay."""
    feed = feed_by_id(db, feed_id)
    items = db.execute("SELECT count(*) FROM items WHERE feed_id = ?", [feed_id]).fetchone()[0]
    clicks = clicks_on_feed(db, feed_id)
    feed = {**feed, "item_count": items, "click_count": clicks}
    return {
        "feed": feed,
        "item_count": items,
        "click_count": clicks,
        # quoted, not repr(): repr doubled a LaTeX title's backslashes
        "what": f"feed {feed['id']} '{feed['title']}' ({feed['url']})",
    }


def trust(db, feed_id: int) -> dict:
    """Promote an agent's feed to a user's: ingest then fetches it without the private-address
    guard. A person's decision (``hermes feeds trust``), recorded in ``trusted_at`` and logged.
    Returns the feed as it was, with ``already`` true when nothing had to change."""
    feed = feed_by_id(db, feed_id)
    by = db.execute("SELECT subscribed_by FROM feeds WHERE id = ?", [feed_id]).fetchone()[0]
    if by == "user":
        return {**feed, "already": True}
    with write_transaction(db):
        db.execute("UPDATE feeds SET subscribed_by = 'user', trusted_at = ? WHERE id = ?", [now_iso(), feed_id])
    log.info(
        "feed %s (%s), subscribed by an agent, trusted by the user: ingest now fetches "
        "it without the private-address guard",
        feed_id,
        feed["url"][:200],
    )
    return {**feed, "already": False}


def unsubscribe(db, feed_id: int) -> None:
    """Remove the feed row; its items and clicks stay, and subscribing the same feed again
    gives them back to it (:func:`hermes.ingest.feedlist.forget_feed`)."""
    # Here, not at the top: the ingest modules load httpx, which loads only when a feed is
    # fetched or read.
    from hermes.ingest.feedlist import forget_feed

    with write_transaction(db):
        forget_feed(db, feed_id)
