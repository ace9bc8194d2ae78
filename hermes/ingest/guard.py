"""The private-address guard, enforced where connections are made.

Defence in depth: an agent reading untrusted feed text can be steered into subscribing hermes
to ``http://192.168.1.1/`` or to a public name that later redirects — or re-resolves — to
loopback, turning hermes into a probe of the user's local network (SSRF) whose answers the
agent then reads back. So a guarded client checks at the one point every request passes
through, the opening of a TCP connection: the host name is resolved, *every* address of
the answer must be public (:func:`hermes.net.is_refused`), and the socket connects to
an address that was checked. Every redirect hop opens its connection the same way, and a
DNS answer that changes between check and connect (rebinding) never reaches a socket.

Checking in the transport rather than rewriting the URL to an address keeps the host name
in the URL, so the Host header, TLS SNI, certificate verification and the connection pool
all key on the name (a pooled TLS connection is never reused for another name).
"""

from __future__ import annotations

import asyncio
import socket

import httpcore
import httpx

from ..config import config_toml
from ..net import is_refused, parse
from .errors import FetchError

REFUSED = "refused: private address"


def refused_here(address: str, terminal: str) -> str:
    """The one wording of a guarded fetch's refusal, for every tool that fetches a URL an
    agent or a web page named (``add_feed``, ``preview_feed``, ``save_item``): what was not
    fetched, why, and both ways out for the person running hermes — lift the guard, or do
    this one thing at the terminal (``terminal``, e.g. ``hermes feeds add URL``), where a
    person is trusted. The caller adds what was left undone ("nothing was subscribed")."""
    return (
        f"did not fetch {address[:200]!r}: {REFUSED} (loopback, private and local-network "
        "addresses are refused here, since an agent or a web page could point hermes at "
        "them; the person running hermes can allow them with [fetch] allow_private = true "
        f"in {config_toml()} or HERMES_ALLOW_PRIVATE=1, or {terminal})"
    )


def refusal(host: str, address: str) -> FetchError:
    """The error for a private target: its detail (which address) is for the person at the
    CLI; a guarded fetch reports only its kind."""
    return FetchError(
        f"{REFUSED} {address} for host {host!r} (allow it with [fetch] "
        "allow_private = true in config.toml or HERMES_ALLOW_PRIVATE=1)",
        kind=REFUSED,
    )


async def checked_addresses(host: str, port: int) -> list[str]:
    """The addresses of ``host`` in resolver order, once every one of them is public."""
    try:
        addresses = [str(parse(host))]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise FetchError(
                f"cannot resolve host {host!r} ({exc.strerror or exc})", kind="cannot resolve host"
            ) from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise FetchError(f"cannot resolve host {host!r}", kind="cannot resolve host")
    for address in addresses:
        if is_refused(address):
            raise refusal(host, address)
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with :func:`checked_addresses` before every connect."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend):
        self._inner = inner

    async def connect_tcp(
        self, host, port, timeout=None, local_address=None, socket_options=None
    ) -> httpcore.AsyncNetworkStream:
        failure = None
        for address in await checked_addresses(host, port):
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectError as exc:  # the next checked address, if any
                failure = exc
        raise failure

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise FetchError("refused: a unix socket", kind="refused: a unix socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connections opened through :class:`GuardedBackend`.

    httpx takes no network backend, so the transport's httpcore pool (httpx keeps it in
    ``_pool``) is rebuilt with the same settings and the guarded backend. No proxy: a proxy
    resolves names itself, which would void the guard.
    """

    def __init__(self, *, limits: httpx.Limits):
        super().__init__(limits=limits, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(httpcore.AnyIOBackend()),
        )


__all__ = ["REFUSED", "GuardedBackend", "GuardedTransport", "checked_addresses", "refusal", "refused_here"]
