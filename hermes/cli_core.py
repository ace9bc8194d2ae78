"""Core CLI commands: ingest, serve, web, demo. (Plugins register feeds, persona, digest …)"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Attach the core commands to ``app``."""
