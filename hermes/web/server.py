"""``hermes web``: serve the web UI with uvicorn, on loopback unless told otherwise."""

from __future__ import annotations

from .. import net
from ..ingest.refresher import start_background, start_manual
from ..net import LOOPBACK_HOSTS, is_loopback
from .app import create_app
from .csrf import load_secret


def check_bind(host: str, allow_remote: bool) -> str | None:
    """``None`` when ``host`` may be bound; else the reason to refuse. Loopback only unless
    ``--allow-remote``: the UI has no login, so anyone who reaches it acts as every persona."""
    if is_loopback(host) or allow_remote:
        return None
    return (
        f"refusing to serve the web UI on non-loopback address {host!r}: it has no login, so "
        "anyone who can reach it could read and change every persona. Pass --allow-remote "
        "if you mean it."
    )


def allowed_hosts(host: str, allow_remote: bool) -> list[str] | None:
    """Host header names to accept: the loopback names on a loopback bind (a DNS-rebinding
    page arrives with its own name); any name once the user opened the UI to the network."""
    if allow_remote and not is_loopback(host):
        return None
    return sorted({*LOOPBACK_HOSTS, host.strip("[]").lower()})


def run(db_path: str | None, host: str, port: int, allow_remote: bool, echo, refresh: bool = True) -> None:
    # Read (or make) the form-signing secret now: an unsafe one stops the server at start.
    app = create_app(db_path, secret=load_secret(), allowed_hosts=allowed_hosts(host, allow_remote))
    sock = net.bind(host, port)  # before the announcement: a busy port is an error, not a dead URL
    shown = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        echo(
            f"warning: the hermes web UI is reachable from the network on {shown}:{port} "
            "with no login; anyone who can reach it can read and change every persona.",
            err=True,
        )
    refresher = (start_background(app.state.db_path) if refresh else None) or start_manual(app.state.db_path)
    every = f"refreshing feeds every {refresher.every:g} s" if refresher.every else "no background refresh"
    echo(f"hermes web UI on http://{shown}:{port}/  (database: {app.state.db_path}; {every}; Ctrl-C stops)", err=True)
    try:
        net.serve_asgi(app, sock)
    finally:
        refresher.stop()
