"""Addresses: the one classification of network addresses — whether a fetch an agent can
steer may reach one (:func:`is_refused`), and whether a host a server binds to is loopback,
reachable from this machine only (:func:`is_loopback`).

Python's ``ip.is_global`` alone is not enough for the first: it calls several IPv6 forms
global that lead to IPv4 space or to nowhere public — NAT64 (``64:ff9b::/96``,
``64:ff9b:1::/48``), the deprecated IPv4-compatible form (``::/96``), SIIT's IPv4-translated
form (``::ffff:0:0:0/96``), 6to4 (``2002::/16``) and site-local (``fec0::/10``). Each of these
is refused whatever IPv4 address it embeds; an IPv4-mapped address (``::ffff:a.b.c.d``, which
a dual-stack socket connects to as ``a.b.c.d``) is judged by the IPv4 address it maps.

Binding the servers' socket before announcing them (``hermes web``, ``hermes serve
--transport http``) lives here too: a busy port is one clear error, not a URL that never
answers.
"""

from __future__ import annotations

import errno
import ipaddress
import socket

from .errors import HermesError

#: the loopback names a local server answers to (checked against Host headers too)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

#: IPv6 prefixes refused outright: they translate to IPv4 (so they can reach the user's LAN
#: or loopback through a NAT64 / 6to4 gateway) or were never public.
REFUSED_IPV6 = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "::/96",  # IPv4-compatible (deprecated, RFC 4291), also :: and ::1
        "::ffff:0:0:0/96",  # SIIT IPv4-translated (RFC 2765)
        "64:ff9b::/96",  # NAT64 well-known prefix (RFC 6052)
        "64:ff9b:1::/48",  # NAT64 local-use prefix (RFC 8215)
        "2002::/16",  # 6to4 (deprecated, RFC 7526)
        "2001::/32",  # Teredo
        "fec0::/10",  # site-local (deprecated, RFC 3879)
    )
)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse(address: str | Address) -> Address:
    """An address object from ``"10.0.0.1"``, ``"[::1]"`` or ``"fe80::1%eth0"``;
    :class:`ValueError` for anything else (a host name)."""
    if isinstance(address, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return address
    return ipaddress.ip_address(address.strip().strip("[]").split("%", 1)[0])


def is_refused(address: str | Address) -> bool:
    """True unless ``address`` is a public unicast address: loopback, private, link-local,
    CGNAT, unique- and site-local, multicast, reserved and unspecified addresses are refused,
    and every IPv6 form that embeds or translates to IPv4 (except an IPv4-mapped form of a
    public IPv4 address)."""
    ip = parse(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return is_refused(ip.ipv4_mapped)
        if any(ip in net for net in REFUSED_IPV6):
            return True
    return not ip.is_global or ip.is_multicast


def is_loopback(host: str) -> bool:
    """True for ``localhost`` (any case, trailing dot allowed) and any loopback IP address
    (``[::1]`` brackets allowed)."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    try:
        return parse(host).is_loopback
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
            raise HermesError(
                f"port {port} on {host} is already in use (another hermes server?); choose another with --port"
            ) from None
        if exc.errno == errno.EACCES:
            raise HermesError(
                f"not allowed to listen on port {port} (ports below 1024 need privileges); choose another with --port"
            ) from None
        raise HermesError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def serve_asgi(app, sock: socket.socket, **options) -> None:
    """Run ``app`` with uvicorn on the already-bound ``sock`` until Ctrl-C."""
    # Here, not at the top: uvicorn loads only for a command that serves HTTP.
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", **options)
    uvicorn.Server(config).run(sockets=[sock])
