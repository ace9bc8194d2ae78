"""Addresses: whether a host a server binds to is loopback (reachable from this machine only)."""

from __future__ import annotations

import ipaddress

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
