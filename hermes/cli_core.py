"""Core CLI commands: ingest, serve, web, demo. (Plugins register feeds, persona, digest …)"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .cli_support import DbOption, die


def serve(
    db: DbOption = None,
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP on loopback).")] = "stdio",
    tools: Annotated[Optional[str], typer.Option(help="Comma-separated tool groups to serve, e.g. feeds,persona.")] = None,
    host: Annotated[str, typer.Option(help="Bind address for --transport http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for --transport http.")] = 8766,
):
    """Serve every registered tool over MCP (stdio by default)."""
    from . import config
    from .mcp_server import build_server
    from .tools import collect_tools

    groups = {g.strip() for g in tools.split(",") if g.strip()} if tools else None
    if groups:
        known = {t.group for t in collect_tools().values()}
        unknown = groups - known
        if unknown:
            die(f"unknown tool group(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    server = build_server(str(config.db_path(db)), groups)
    if transport == "stdio":
        server.run()
    elif transport == "http":
        server.run(transport="streamable-http", host=host, port=port)
    else:
        die(f"unknown transport {transport!r}; use stdio or http")


def demo(
    db: Annotated[Optional[str], typer.Option("--db", help="Demo database (default: <HERMES_HOME>/demo.db).")] = None,
):
    """Run the whole loop offline on the bundled sample feeds (uses the real model)."""
    from . import config
    from .db import get_db
    from .demo import run_demo

    path = db or str(config.home() / "demo.db")
    database = get_db(path)
    run_demo(database, typer.echo)
    typer.echo(f"\nDemo database: {path}  (try: hermes --help, hermes web --db {path})")


def register(app: typer.Typer) -> None:
    """Attach the core commands to ``app``."""
    app.command()(serve)
    app.command()(demo)
