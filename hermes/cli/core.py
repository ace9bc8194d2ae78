"""Core CLI commands: ingest, tags, serve, web, demo. (Plugins register feeds, persona,
digest …)"""

from __future__ import annotations

import os
import shutil
import sys
import time
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from hermes import config
from hermes.facekit import status
from hermes.facekit.faces import plural

from ..errors import HermesError
from ..facekit.terminal import (
    ROOT_DB,
    DbOption,
    JsonOption,
    checked_options,
    database,
    database_path,
    die,
    emit_json,
    open_db,
    run_guarded,
    tool_number,
)
from .progress import StageProgress

# The modules behind the commands (sqlite-utils, the plugins' tools, numpy, filelock) are
# imported in the command that needs them, not at the top: `hermes --version`, `--help`
# and every other command build this module's commands without them (issue 36).

#: The options no tool takes, checked as a tool's arguments are (:func:`checked_options`):
#: ``(type, bounds)``, the one place their limits live.
PORT = (int, {"ge": 1, "le": 65535})
BATCH = (int, {"ge": 1, "le": 512})

NoRefreshOption = Annotated[
    bool, typer.Option("--no-refresh", help="Do not fetch feeds in the background (run `hermes ingest` yourself).")
]


def serve(
    ctx: typer.Context,
    db: DbOption = None,
    transport: Annotated[str, typer.Option(help="stdio, or http (streamable HTTP at http://HOST:PORT/mcp).")] = "stdio",
    tools: Annotated[
        str | None,
        typer.Option(
            metavar="GROUPS",
            help="Tool groups to serve, comma-separated: feeds, persona, digest, "
            "corpus, or a plugin's group (`hermes plugins` lists them). "
            "Default: all.",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Bind address for --transport http (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(parser=tool_number, help="Port for --transport http.")] = 8766,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="HERMES_MCP_TOKEN",
            show_envvar=True,
            help="Bearer token required on every HTTP request (--transport http). Set it in the "
            "HERMES_MCP_TOKEN environment variable: on the command line every local user "
            "can read it (ps, /proc).",
        ),
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote", help="Allow --host to be a non-loopback address (exposes the tools to the network)."
        ),
    ] = False,
    no_refresh: NoRefreshOption = False,
):
    """Serve every registered tool over MCP (stdio by default); Ctrl-C stops it.

    The feeds stay fresh in the background ([ingest] every; --no-refresh turns that off).
    The database path is logged on stderr at start and given to the agent in the server's
    instructions, so a host that does not pass HERMES_HOME / HERMES_DB is noticed.
    """
    port = checked_options("serve", port=(port, *PORT))["port"]
    # Here, not at the top: threadpoolctl loads only for a server. numpy loads in the block
    # below (sqlite-utils, the plugins) on one BLAS thread: OpenBLAS's pool starts at the
    # first tool call, not before tools/list (hermes.ranking.threads).
    from ..ranking.threads import blas_pool_deferred

    with blas_pool_deferred():
        # Here, not at the top: the MCP SDK (pydantic, anyio, starlette; ~1 s) loads only for serve,
        # the background refresher (sqlite-utils, the ingest stack) only for serve and web, and
        # the addresses (socket, ipaddress) only for a server.
        from ..ingest.refresher import start_background
        from ..mcp_server import build_server, cached_listings, keep_listings, run_http, run_stdio
        from ..net import bind, is_loopback
        from ..tools import collect_tools

        if transport not in ("stdio", "http"):
            die(f"unknown transport {transport!r}; use --transport stdio or --transport http")
        groups = {g.strip() for g in tools.split(",") if g.strip()} if tools else None
        try:
            # The tools as an earlier start listed them, when nothing they depend on changed
            # since: served from that listing, each tool is collected when it is first called.
            listed = cached_listings()
            collected = collect_tools() if listed is None else None
            known = sorted(
                {t.group for t in collected.values()}
                if collected is not None
                else {entry["group"] for entry in listed or []}
            )
            if tools is not None and not groups:
                die(f"--tools needs at least one group name; known groups: {', '.join(known)}")
            unknown = (groups or set()) - set(known)
            if unknown:
                die(f"unknown tool group(s): {', '.join(sorted(unknown))}; known: {', '.join(known)}")
            token = _token(ctx, token)
            if transport == "http" and not is_loopback(host):
                if not allow_remote:
                    die(
                        f"refusing to serve on non-loopback address {host!r}: anyone who can reach it "
                        "could call the tools. Pass --allow-remote (and set a --token) if you mean it."
                    )
                typer.echo(
                    f"warning: serving hermes MCP tools on {host}:{port}, reachable from the "
                    "network"
                    + ("" if token else " WITHOUT a token: anyone who can reach it can change your feeds and feedback"),
                    err=True,
                )
            target, origin = database_path(db)
            with database(db, create=True):
                pass  # created (with its starter feeds) or checked now, not at the first tool call
            server = build_server(str(target), groups, listed=listed)
            if collected is not None:
                keep_listings(collected)
            sock = bind(host, port) if transport == "http" else None
        except HermesError as exc:
            die(str(exc))
    served = ", ".join(sorted(groups)) if groups else "all tool groups"
    typer.echo(
        f"hermes MCP server ({transport}): database {target} (from {origin}); {served}; Ctrl-C stops it", err=True
    )
    refresher = None if no_refresh else run_guarded(start_background, str(target))
    try:
        if transport == "stdio":
            run_stdio(server)  # stdout is the protocol stream: nothing else may print to it
        else:
            typer.echo(
                f"listening on http://{host}:{port}/mcp" + (" (bearer token required)" if token else ""), err=True
            )
            if not token and is_loopback(host):
                typer.echo(
                    "note: no token, so any program on this computer can call the tools; "
                    "set HERMES_MCP_TOKEN to require one",
                    err=True,
                )
            run_http(server, sock=sock, host=host, token=token)
    finally:
        if refresher is not None:
            refresher.stop()


def _token(ctx: typer.Context, token: str | None) -> str | None:
    """The bearer token, or None for no token. A blank one is a mistake (it would have meant
    no authentication at all), and one typed on the command line is readable by every local
    user in the process list: warn."""
    if token is None:
        return None
    if not token.strip():
        die(
            "the MCP token is blank (HERMES_MCP_TOKEN or --token): set a real secret, e.g. "
            "export HERMES_MCP_TOKEN=\"$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')\", "
            "or unset it to serve without a token"
        )
    # By name: typer ships its own copy of click and of its ParameterSource enum.
    if getattr(ctx.get_parameter_source("token"), "name", None) == "COMMANDLINE":
        typer.echo(
            "warning: a --token on the command line is visible to every local user "
            "(ps, /proc/PID/cmdline); set HERMES_MCP_TOKEN in the environment instead",
            err=True,
        )
    return token.strip()


def web(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Bind address (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(parser=tool_number, help="Port to listen on.")] = 8765,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow --host to be a non-loopback address (the UI has no login).")
    ] = False,
    no_refresh: NoRefreshOption = False,
):
    """Serve the web UI: ranked feed, digest, corpus and feeds for each persona, keeping the
    feeds fresh in the background ([ingest] every; --no-refresh turns that off)."""
    port = checked_options("web", port=(port, *PORT))["port"]
    # Here, not at the top: starlette, jinja2 and uvicorn load only for the web UI.
    from ..web.server import check_bind, run

    refusal = check_bind(host, allow_remote)
    if refusal:
        die(refusal)
    target, _ = database_path(db)
    with database(db, create=True):
        pass
    try:
        run(str(target), host, port, allow_remote, typer.echo, refresh=not no_refresh)
    except HermesError as exc:
        die(str(exc))


def demo(
    db: Annotated[
        str | None, typer.Option("--db", metavar="PATH", help="Demo database (default: <HERMES_HOME>/demo.db).")
    ] = None,
):
    """Run the whole loop offline on the bundled sample feeds (uses the real model)."""
    # Here, not at the top: sqlite-utils and the model load only for the demo.
    from ..demo import run_demo
    from ..storage.db import get_db

    path = db or ROOT_DB.get() or str(config.home() / "demo.db")
    database = run_guarded(get_db, path)
    try:
        run_demo(database, typer.echo)
    finally:
        database.conn.close()
    hermes = command_name()
    # One command a line, each with what it does: the person copies one, not a sentence.
    typer.echo(f"\nDemo database: {path}\nNext, try:")
    for command, what in (
        (f"{hermes} --db {path} feed demo --all", "the whole ranked feed, with the reason for each"),
        (f"{hermes} --db {path} feed demo -i", "triage it with single keys (l like, d dislike, e explain)"),
        (f"{hermes} web --db {path}", "the same in a browser"),
    ):
        typer.echo(f"  {command}\n      {what}")


def command_name() -> str:
    """How to type the running ``hermes`` in this shell: ``hermes`` when that name on PATH is
    this command, else its path (``make demo`` runs ``.venv/bin/hermes``, not on PATH)."""
    running = Path(sys.argv[0])
    if not running.name.startswith("hermes"):
        return "hermes"  # python -m hermes, or a test runner
    on_path = shutil.which("hermes")
    if on_path and Path(on_path).resolve() == running.resolve():
        return "hermes"
    return str(running.absolute()) if running.exists() else "hermes"


def undated_note(undated: int, first_seen: int) -> str:
    """What became of the new items without a usable date: in a feed's first fetch they are
    'date unknown' (they may be years old); in a later one they are dated by when hermes
    first saw them, which every face marks 'first seen' (a trial read the old line, "shown
    as 'date unknown'", above two items dated today)."""
    if not undated:
        return ""
    parts = [
        f"{first_seen} dated by when first seen (marked 'first seen')" if first_seen else "",
        f"{undated - first_seen} shown as 'date unknown', in no recency window" if undated > first_seen else "",
    ]
    return (
        f"; {undated} without a usable date (none, unreadable, before 1980 or more than a "
        f"day in the future): " + ", ".join(p for p in parts if p)
    )


def ingest(
    db: DbOption = None,
    feed: Annotated[
        list[int] | None, typer.Option("--feed", metavar="ID", help="Only this feed id (repeatable).")
    ] = None,
    as_json: JsonOption = False,
    due: Annotated[
        bool,
        typer.Option(
            "--due",
            help=(
                "Only the feeds whose refresh is due (fetched longer than --every ago, and not "
                "asking for a longer pause with their ttl or Retry-After)."
            ),
        ),
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help=("Keep running: fetch each feed when it is due, until Ctrl-C."))
    ] = False,
    every: Annotated[
        str | None,
        typer.Option(
            "--every",
            metavar="INTERVAL",
            help=("Refresh interval for --due / --watch, e.g. 30m or 2h (default: [ingest] every in config.toml, 1h)."),
        ),
    ] = None,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait",
            help=(
                "If another ingest of this database is running, say so and exit (status 75) instead of waiting for it."
            ),
        ),
    ] = False,
):
    """Fetch every feed, store new items and embed them; print what happened per feed.

    A new database starts with the starter feeds (said when it happens). Exit status 1 when
    any feed failed (each is named; the others were stored), 130 on Ctrl-C (what was stored
    is kept and the next run embeds it). Only one ingest of a database runs at a time: a
    second one waits for the first.
    """
    if every is not None and not (due or watch):
        die(
            "--every is the refresh interval of --due or --watch: add one of them (without "
            "them every feed is fetched now)"
        )
    database = run_guarded(open_db, db, create=True)
    interval = (
        run_guarded(config.parse_duration, every, "--every")
        if every is not None
        else run_guarded(config.settings).ingest_every
    )
    if (due or watch) and interval <= 0:
        where = (
            "--every"
            if every is not None
            else "HERMES_INGEST_EVERY"
            if os.environ.get("HERMES_INGEST_EVERY") is not None
            else "[ingest] every"
        )
        die(f"--due and --watch need a refresh interval, and {where} turns the refresh off: pass --every 1h")
    if watch:
        _watch(database, feed or None, interval, as_json)
        return
    ok = _ingest_once(database, feed or None, as_json, due_every=interval if due else None, wait=not no_wait)
    if not ok:
        raise typer.Exit(1)


def _ingest_once(database, feed_ids, as_json: bool, *, due_every, wait: bool) -> bool:
    """One ingest run, reported; ``False`` when a feed failed (each one is named)."""
    # Here, not at the top: httpx, feedparser and filelock load only for a command that fetches.
    from ..ingest.guard import REFUSED
    from ..ingest.pipeline import run_ingest
    from ..ingest.runlock import BUSY_EXIT, IngestBusy, describe

    def waiting(running):
        typer.echo(f"another hermes ingest is running ({describe(running)}); waiting for it to finish…", err=True)

    before = _ingest_state(database)
    try:
        with _progress(as_json) as progress:
            try:
                summary = run_ingest(
                    database, feed_ids=feed_ids, progress=progress, due_every=due_every, wait=wait, on_wait=waiting
                )
            except IngestBusy as exc:
                if as_json:
                    # Here, not at the top: pydantic (the contract's) loads only when a command answers --json.
                    from ..contract import fail

                    emit_json(fail(str(exc), busy=True, feeds=[]))
                else:
                    typer.echo(f"error: {exc}; not waiting (--no-wait)", err=True)
                raise typer.Exit(BUSY_EXIT) from None
            except HermesError as exc:
                if as_json and getattr(exc, "summary", None) is not None:
                    # Here, not at the top: pydantic (the contract's) loads only when a command answers --json.
                    from ..contract import fail

                    emit_json(fail(str(exc), feeds=exc.summary))
                    raise typer.Exit(1) from None
                die(str(exc))
    except KeyboardInterrupt:
        typer.echo(f"\ninterrupted: {_interrupted_report(database, before)}", err=True)
        raise typer.Exit(130) from None
    failed = [s for s in summary if s["status"] == "failed"]
    counts = {k: sum(1 for s in summary if s["status"] == k) for k in ("new", "unchanged", "failed", "skipped")}
    new_items = sum(s["new"] for s in summary)
    updated = sum(s.get("updated") or 0 for s in summary)
    message = (
        f"{plural(new_items, 'new item')} from {plural(len(summary), 'feed')} "
        f"({counts['new']} with new items, {counts['unchanged']} unchanged, "
        f"{counts['failed']} failed, {counts['skipped']} skipped); "
        f"{summary.embedded} embedded"
        + (f"; {updated} updated (revised or cross-listed papers)" if updated else "")
        + undated_note(summary.undated, summary.first_seen)
        + (f"; {summary.tagged} earlier items tagged" if summary.tagged else "")
        + summary.skipped_words()
    )
    if summary.not_due:
        message += f"; {summary.not_due} not due yet"
    if as_json:
        # Here, not at the top: pydantic (the contract's) loads only when a command answers --json.
        from ..contract import fail, ok

        emit_json(
            (fail if failed else ok)(
                message,
                new_items=new_items,
                embedded=summary.embedded,
                updated=updated,
                undated=summary.undated,
                first_seen=summary.first_seen,
                tagged=summary.tagged,
                feeds_by_status=counts,
                not_due=summary.not_due,
                feeds=list(summary),
            )
        )
    else:
        for s in summary:
            label = s["title"] or s["url"]
            detail = {"new": f"{s['new']} new", "unchanged": "unchanged"}.get(s["status"], s["error"])
            status = s["status"]
            if status == "unchanged" and s.get("first_fetch"):
                status, detail = "fetched", "nothing new to store"  # a first fetch changed from nothing
            if s.get("skipped"):
                detail += f", {s['skipped']}"
            if s.get("undated"):
                detail += f", {s['undated']} without a usable date"
            if s.get("updated"):
                detail += f", {s['updated']} updated"
            if s.get("known_elsewhere"):
                detail += (
                    f", {s['known_elsewhere']} already in the archive (stored once: "
                    "listed by another feed too, or saved)"
                )
            if s.get("adopted"):
                detail += (
                    f", {s['adopted']} stored under a feed since removed are this feed's "
                    "now (the same feed under another address)"
                )
            if (s["error"] or "").startswith(REFUSED):
                detail += (
                    f" (an agent subscribed it; `hermes feeds trust {s['feed_id']}` lets "
                    "ingest fetch it from private addresses)"
                )
            line = f"{status:>9}  #{s['feed_id']} {label}: {detail}"
            if s.get("warning"):
                line += f"  (warning: {s['warning']})"
            typer.secho(line, fg={"failed": "red", "skipped": "yellow", "new": "green"}.get(s["status"]))
        if summary or summary.not_due:
            typer.echo(message)
        else:
            typer.echo("no feeds: add one with `hermes feeds add URL_OR_PATH`")
        if failed:
            names = ", ".join(f"#{s['feed_id']} ({s['url']})" for s in failed)
            kept = "; the other feeds were stored" if len(failed) < len(summary) else ""
            typer.echo(
                f"error: {plural(len(failed), 'feed')} failed: {names}{kept}. `hermes feeds list` shows each error",
                err=True,
            )
    return not failed


def _watch(database, feed_ids, every: float, as_json: bool) -> None:
    """``hermes ingest --watch``: fetch what is due, sleep until the next feed is due, again."""
    # Here, not at the top: sqlite-utils loads only for a command that fetches.
    from ..ingest.schedule import next_refresh, seconds_until

    typer.echo(f"watching: each feed is fetched every {every:g} s or as it asks; Ctrl-C stops", err=True)
    try:
        while True:
            _ingest_once(database, feed_ids, as_json, due_every=every, wait=True)
            pause = seconds_until(next_refresh(database, every), every)
            if not as_json:
                at = datetime.now().astimezone().timestamp() + pause
                typer.echo(f"next check at {datetime.fromtimestamp(at).strftime('%H:%M:%S')}", err=True)
            time.sleep(pause)
    except KeyboardInterrupt:
        typer.echo("stopped watching", err=True)


def _ingest_state(db) -> dict:
    return {"max_id": db.execute("SELECT coalesce(max(id), 0) FROM items").fetchone()[0]}


def _interrupted_report(db, before: dict) -> str:
    """What an interrupted ingest leaves: every feed's items commit with the feed, and
    embedding resumes on the next run (it embeds whatever lacks an embedding)."""
    try:
        new, feeds = db.execute(
            "SELECT count(*), count(DISTINCT feed_id) FROM items WHERE id > ?", [before["max_id"]]
        ).fetchone()
        pending = db.execute("SELECT count(*) FROM items WHERE embedding IS NULL").fetchone()[0]
    except Exception:  # noqa: BLE001 - the database may be mid-rollback; say what is sure
        return (
            "the items of every feed that finished are stored; the next `hermes ingest` "
            "fetches the rest and embeds what is missing"
        )
    stored = f"{plural(new, 'new item')} from {plural(feeds, 'feed')} stored"
    if pending:
        return (
            f"{stored}; {pending} not embedded yet — the next `hermes ingest` embeds them "
            "(and fetches what was not reached)"
        )
    return f"{stored}, all embedded; the next `hermes ingest` fetches what was not reached"


@contextmanager
def _progress(as_json: bool):
    """The command's one progress display on stderr (:mod:`.progress`): a bar on a terminal
    (not under ``--json``), with the slow steps in its label; lines otherwise."""
    live = sys.stderr.isatty()
    if live and as_json:
        yield None
        return
    with StageProgress(sys.stderr, live=live) as display:
        with status.listen(display.step) if live else nullcontext():
            yield display


tags_app = typer.Typer(help="Topic tags that plugins such as the keyphrase tagger add to items.", no_args_is_help=True)


@tags_app.command("rebuild")
def tags_rebuild(
    db: DbOption = None,
    as_json: JsonOption = False,
    batch: Annotated[int, typer.Option(parser=tool_number, help="Items per model batch.")] = 32,
):
    """Tag every item of the archive again with the tagger plugins (the keyphrase tagger).

    Runs the embedding model over every item once. Resumable: an interrupted rebuild
    continues where it stopped, here or at the next `hermes ingest`; a second rebuild gives
    the same tags."""
    batch = checked_options("tags_rebuild", batch=(batch, *BATCH))["batch"]
    # The ingest stack (and through it the model) loads only when a command needs it.
    from ..embed import get_embedder
    from ..ingest.tagging import keyphrase_counts, start_rebuild, tag_pending, taggers_active

    database = run_guarded(open_db, db)
    try:
        if not taggers_active():
            die("no tagger plugin is enabled: nothing would add tags (see `hermes plugins`)")
        fresh = start_rebuild(database)
        with _progress(as_json) as progress:
            tick = (lambda done, total: progress("tag", done, total)) if progress else None
            try:
                done = tag_pending(database, get_embedder(), progress=tick, batch_size=batch)
            except HermesError as exc:
                die(f"{exc}; run `hermes tags rebuild` again to continue")
        counts = keyphrase_counts(database)
    finally:
        database.conn.close()
    message = (
        f"{'Re-tagged' if fresh else 'Finished an interrupted rebuild:'} {done} items; "
        f"{counts['items_with_keyphrases']} items carry {counts['distinct_keyphrases']} "
        "distinct keyphrases. See the topics with `hermes topics`."
    )
    if as_json:
        # Here, not at the top: pydantic (the contract's) loads only when a command answers --json.
        from ..contract import ok

        emit_json(ok(message, tagged=done, **counts))
    else:
        typer.echo(message)


def register(app: typer.Typer) -> None:
    """Attach the core commands to ``app``."""
    app.command()(ingest)
    app.add_typer(tags_app, name="tags")
    app.command()(serve)
    app.command()(web)
    app.command()(demo)
