"""Addresses and listening: whether a host a server binds to is loopback (reachable from this
machine only), and binding the servers' socket before announcing them (``hermes web``,
``hermes serve --transport http``): a busy port is one clear error, not a URL that never
answers."""

from __future__ import annotations

import errno
import ipaddress
import socket

from .errors import HermesError

#: the loopback names a local server answers to (checked against Host headers too)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and any loopback IP address (``[::1]`` brackets allowed)."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (uvicorn listens on it), or :class:`HermesError`
    saying why not and what to do."""
    name = host.strip("[]")
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((name, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise HermesError(f"port {port} on {host} is already in use (another hermes "
                              f"server?); choose another with --port") from None
        if exc.errno == errno.EACCES:
            raise HermesError(f"not allowed to listen on port {port} (ports below 1024 need "
                              "privileges); choose another with --port") from None
        raise HermesError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def serve_asgi(app, sock: socket.socket, **options) -> None:
    """Run ``app`` with uvicorn on the already-bound ``sock`` until Ctrl-C."""
    # Here, not at the top: uvicorn loads only for a command that serves HTTP.
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", **options)
    uvicorn.Server(config).run(sockets=[sock])
