"""Core CLI commands: ingest, serve, web, demo. (Plugins register feeds, persona, digest …)"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Optional

import typer

from .. import config
from ..demo import run_demo
from ..errors import HermesError
from ..ingest.refresher import start_background
from ..ingest.runlock import IngestBusy, describe
from ..ingest.schedule import next_refresh, seconds_until
from ..net import is_loopback
from ..storage.db import get_db
from ..tools import collect_tools
from .support import DbOption, JsonOption, die, emit_json, open_db, run_guarded

NoRefreshOption = Annotated[bool, typer.Option(
    "--no-refresh", help="Do not fetch feeds in the background (run `hermes ingest` yourself).")]


def serve(
    ctx: typer.Context,
    db: DbOption = None,
    transport: Annotated[str, typer.Option(help="stdio, or http (streamable HTTP at http://HOST:PORT/mcp).")] = "stdio",
    tools: Annotated[Optional[str], typer.Option(help="Comma-separated tool groups to serve, e.g. feeds,persona.")] = None,
    host: Annotated[str, typer.Option(help="Bind address for --transport http (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --transport http.")] = 8766,
    token: Annotated[Optional[str], typer.Option(
        envvar="HERMES_MCP_TOKEN", show_envvar=True,
        help="Bearer token required on every HTTP request (--transport http). Set it in the "
             "HERMES_MCP_TOKEN environment variable: on the command line every local user "
             "can read it (ps, /proc).")] = None,
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="Allow --host to be a non-loopback address (exposes the tools to the network).")] = False,
    no_refresh: NoRefreshOption = False,
):
    """Serve every registered tool over MCP (stdio by default), keeping the feeds fresh in
    the background ([ingest] every; --no-refresh turns that off)."""
    # Here, not at the top: the MCP SDK (pydantic, anyio, starlette; ~1 s) loads only for serve.
    from ..mcp_server import build_server, run_http, run_stdio

    if transport not in ("stdio", "http"):
        die(f"unknown transport {transport!r}; use stdio or http")
    groups = {g.strip() for g in tools.split(",") if g.strip()} if tools else None
    if tools is not None and not groups:
        die("--tools needs at least one group name, e.g. --tools feeds,persona")
    try:
        if groups:
            known = {t.group for t in collect_tools().values()}
            unknown = groups - known
            if unknown:
                die(f"unknown tool group(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
        token = _token(ctx, token)
        if transport == "http" and not is_loopback(host):
            if not allow_remote:
                die(f"refusing to serve on non-loopback address {host!r}: anyone who can reach it "
                    "could call the tools. Pass --allow-remote (and set a --token) if you mean it.")
            typer.echo(f"warning: serving hermes MCP tools on {host}:{port}, reachable from the "
                       "network" + ("" if token else " WITHOUT a token: anyone who can reach it can "
                                    "change your feeds and feedback"), err=True)
        server = build_server(str(config.db_path(db)), groups)
    except HermesError as exc:
        die(str(exc))
    refresher = None if no_refresh else run_guarded(start_background, db)
    try:
        if transport == "stdio":
            run_stdio(server)  # stdout is the protocol stream: nothing else may print to it
        else:
            typer.echo(f"hermes MCP server on http://{host}:{port}/mcp"
                       + (" (bearer token required)" if token else ""), err=True)
            run_http(server, host=host, port=port, token=token)
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
        die("the MCP token is blank (HERMES_MCP_TOKEN or --token): set a real secret, e.g. "
            "export HERMES_MCP_TOKEN=\"$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')\", "
            "or unset it to serve without a token")
    # By name: typer ships its own copy of click and of its ParameterSource enum.
    if getattr(ctx.get_parameter_source("token"), "name", None) == "COMMANDLINE":
        typer.echo("warning: a --token on the command line is visible to every local user "
                   "(ps, /proc/PID/cmdline); set HERMES_MCP_TOKEN in the environment instead",
                   err=True)
    return token.strip()


def web(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Bind address (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8765,
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="Allow --host to be a non-loopback address (the UI has no login).")] = False,
    no_refresh: NoRefreshOption = False,
):
    """Serve the web UI: ranked feed, digest, corpus and feeds for each persona, keeping the
    feeds fresh in the background ([ingest] every; --no-refresh turns that off)."""
    # Here, not at the top: starlette, jinja2 and uvicorn load only for the web UI.
    from ..web.server import check_bind, run

    refusal = check_bind(host, allow_remote)
    if refusal:
        die(refusal)
    try:
        run(db, host, port, allow_remote, typer.echo, refresh=not no_refresh)
    except HermesError as exc:
        die(str(exc))



def demo(
    db: Annotated[Optional[str], typer.Option("--db", help="Demo database (default: <HERMES_HOME>/demo.db).")] = None,
):
    """Run the whole loop offline on the bundled sample feeds (uses the real model)."""
    path = db or str(config.home() / "demo.db")
    database = get_db(path)
    run_demo(database, typer.echo)
    typer.echo(f"\nDemo database: {path}  (try: hermes --help, hermes web --db {path})")


BUSY_EXIT = 75  # EX_TEMPFAIL: another ingest runs; try later (the background refresh does)


def ingest(
    db: DbOption = None,
    feed: Annotated[Optional[list[int]], typer.Option("--feed", help="Only this feed id (repeatable).")] = None,
    as_json: JsonOption = False,
    due: Annotated[bool, typer.Option("--due", help=(
        "Only the feeds whose refresh is due (fetched longer than --every ago, and not "
        "asking for a longer pause with their ttl or Retry-After)."))] = False,
    watch: Annotated[bool, typer.Option("--watch", help=(
        "Keep running: fetch each feed when it is due, until Ctrl-C."))] = False,
    every: Annotated[Optional[str], typer.Option("--every", help=(
        "Refresh interval for --due / --watch, e.g. 30m or 2h (default: [ingest] every in "
        "config.toml, 1h)."))] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help=(
        "If another ingest of this database is running, say so and exit (status 75) "
        "instead of waiting for it."))] = False,
):
    """Fetch every feed, store new items and embed them; print what happened per feed.

    On the first run of a new database the feeds table is seeded from feeds.toml; after
    that the database is the truth. Exit status 1 only when every fetched feed failed.
    Only one ingest of a database runs at a time: a second one waits for the first.
    """
    # Here, not at the top: httpx and feedparser load only for a command that fetches.
    from ..ingest.pipeline import seed_feeds

    database = run_guarded(open_db, db)
    interval = run_guarded(config.parse_duration, every, "--every") if every is not None \
        else run_guarded(config.settings).ingest_every
    if (due or watch) and interval <= 0:
        die("--due and --watch need a refresh interval: pass --every 1h (or set [ingest] every)")
    if not due:
        run_guarded(seed_feeds, database)
    if watch:
        _watch(database, feed or None, interval, as_json)
        return
    ok = _ingest_once(database, feed or None, as_json, due_every=interval if due else None,
                      wait=not no_wait)
    if not ok:
        raise typer.Exit(1)


def _ingest_once(database, feed_ids, as_json: bool, *, due_every, wait: bool) -> bool:
    # Here, not at the top: httpx and feedparser load only for a command that fetches.
    from ..ingest.guard import REFUSED
    from ..ingest.pipeline import run_ingest

    def waiting(running):
        typer.echo(f"another hermes ingest is running ({describe(running)}); waiting for it "
                   "to finish…", err=True)

    show_bar = sys.stdout.isatty() and not as_json
    with _progress_bar(show_bar) as progress:
        try:
            summary = run_ingest(database, feed_ids=feed_ids, progress=progress,
                                 due_every=due_every, wait=wait, on_wait=waiting)
        except IngestBusy as exc:
            if as_json:
                emit_json({"ok": False, "busy": True, "message": str(exc), "feeds": []})
            else:
                typer.echo(f"error: {exc}; not waiting (--no-wait)", err=True)
            raise typer.Exit(BUSY_EXIT)
        except HermesError as exc:
            if as_json and getattr(exc, "summary", None) is not None:
                emit_json({"ok": False, "message": str(exc), "feeds": exc.summary})
                raise typer.Exit(1)
            die(str(exc))
    tried = [s for s in summary if s["status"] != "skipped"]
    ok = not tried or any(s["status"] != "failed" for s in tried)
    counts = {k: sum(1 for s in summary if s["status"] == k)
              for k in ("new", "unchanged", "failed", "skipped")}
    message = (f"{sum(s['new'] for s in summary)} new items from {len(summary)} feeds "
               f"({counts['new']} with new items, {counts['unchanged']} unchanged, "
               f"{counts['failed']} failed, {counts['skipped']} skipped); "
               f"{summary.embedded} embedded")
    if summary.not_due:
        message += f"; {summary.not_due} not due yet"
    if as_json:
        emit_json({"ok": ok, "message": message, "new_items": sum(s["new"] for s in summary),
                   "embedded": summary.embedded, "feeds_by_status": counts,
                   "not_due": summary.not_due, "feeds": list(summary)})
    else:
        for s in summary:
            label = s["title"] or s["url"]
            detail = {"new": f"{s['new']} new", "unchanged": "unchanged"}.get(s["status"], s["error"])
            if (s["error"] or "").startswith(REFUSED):
                detail += (f" (an agent subscribed it; `hermes feeds trust {s['feed_id']}` lets "
                           "ingest fetch it from private addresses)")
            line = f"{s['status']:>9}  #{s['feed_id']} {label}: {detail}"
            if s.get("warning"):
                line += f"  (warning: {s['warning']})"
            typer.secho(line, fg={"failed": "red", "skipped": "yellow", "new": "green"}.get(s["status"]))
        if summary or summary.not_due:
            typer.echo(message)
        else:
            typer.echo("no feeds: add one with `hermes feeds add URL_OR_PATH`")
    return ok


def _watch(database, feed_ids, every: float, as_json: bool) -> None:
    """``hermes ingest --watch``: fetch what is due, sleep until the next feed is due, again."""
    typer.echo(f"watching: each feed is fetched every {every:g} s or as it asks; Ctrl-C stops",
               err=True)
    try:
        while True:
            _ingest_once(database, feed_ids, as_json, due_every=every, wait=True)
            pause = seconds_until(next_refresh(database, every), every)
            if not as_json:
                at = datetime.now().astimezone().timestamp() + pause
                typer.echo(f"next check at {datetime.fromtimestamp(at).strftime('%H:%M:%S')}",
                           err=True)
            time.sleep(pause)
    except KeyboardInterrupt:
        typer.echo("stopped watching", err=True)


@contextmanager
def _progress_bar(enabled: bool):
    """A rich progress bar fed by run_ingest's ``progress(stage, done, total)`` callback."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        tasks: dict[str, int] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                label = {"fetch": "Fetching feeds", "embed": "Embedding items"}.get(stage, stage)
                tasks[stage] = bar.add_task(label, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def register(app: typer.Typer) -> None:
    """Attach the core commands to ``app``."""
    app.command()(ingest)
    app.command()(serve)
    app.command()(web)
    app.command()(demo)
