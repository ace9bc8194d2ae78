"""Issue 12, item 3: address forms the private-address guard let through.

One classification (:func:`hermes.addresses.is_refused`) serves the fetch guard; one
loopback check (:func:`hermes.addresses.is_loopback`) serves ``hermes web`` and ``hermes
serve``. Python's ``is_global`` calls NAT64, IPv4-compatible, SIIT, 6to4 and site-local
addresses global; each is refused here, and so is every IPv6 form that embeds a refused IPv4
address.
"""

from __future__ import annotations

import socket

import pytest
from ingest_server import FeedServer, rss

from hermes.ingest.fetch import FetchError, fetch
from hermes.net import is_loopback, is_refused
from hermes.tools import call_tool, collect_tools

REFUSED = [
    # NAT64 well-known and local-use prefixes, embedding loopback, private, metadata, public
    "64:ff9b::7f00:1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::a00:1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::5db8:d822",
    "64:ff9b:1::a00:1",
    # IPv4-compatible (deprecated)
    "::7f00:1",
    "::127.0.0.1",
    "::a00:1",
    "::5db8:d822",
    # SIIT IPv4-translated
    "::ffff:0:7f00:1",
    "::ffff:0:a00:1",
    "::ffff:0:5db8:d822",
    # 6to4 embedding loopback, private, public
    "2002:7f00:1::1",
    "2002:a00:1::",
    "2002:5db8:d822::1",
    # Teredo, site-local
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "fec0::1",
    "fec0:1::1",
    "feff::1",
    # IPv4-mapped forms of refused IPv4 addresses
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:100.64.0.1",
    "::ffff:224.0.0.1",
    "::ffff:0.0.0.0",
    # the rest of the non-public space, for completeness
    "127.0.0.1",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
    "240.0.0.1",
    "192.0.2.1",
    "198.18.0.1",
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12::1",
    "ff02::1",
    "ff0e::1",
    "2001:db8::1",
    "100::1",
    "[::1]",
]
PUBLIC = [
    "93.184.216.34",
    "1.1.1.1",
    "2606:2800:220:1:248:1893:25c8:1946",
    "2a00:1450:4001:80e::200e",
    "::ffff:93.184.216.34",
]


@pytest.mark.parametrize("address", REFUSED)
def test_refused(address):
    assert is_refused(address) is True


@pytest.mark.parametrize("address", PUBLIC)
def test_public(address):
    assert is_refused(address) is False


def test_a_host_name_is_not_an_address():
    with pytest.raises(ValueError):
        is_refused("example.org")


@pytest.mark.parametrize(
    "host, expected",
    [
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("example.org", False),
        ("localhost.example.org", False),
    ],
)
def test_one_loopback_check_for_every_bind(host, expected):
    from hermes.web import server

    assert is_loopback(host) is expected
    assert (server.check_bind(host, allow_remote=False) is None) is expected


@pytest.mark.parametrize(
    "literal", ["64:ff9b::7f00:1", "::7f00:1", "::ffff:0:7f00:1", "2002:7f00:1::1", "fec0::1", "64:ff9b::a9fe:a9fe"]
)
def test_the_guard_refuses_them_as_url_literals(db, literal):
    result = call_tool(db, collect_tools()["preview_feed"], {"url": f"http://[{literal}]/feed.xml"})
    assert result["ok"] is False and "refused: private address" in result["message"], result


def test_the_guard_refuses_them_in_dns_answers(monkeypatch):
    """A name whose AAAA answer is NAT64 for loopback (what a DNS64 resolver would make of
    a record pointing at 127.0.0.1) is refused before anything connects."""
    real = socket.getaddrinfo

    def dns(host, port, *args, **kwargs):
        if host == "sneaky.example":
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("64:ff9b::7f00:1", port, 0, 0))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", dns)
    with FeedServer() as server:
        server.add("/feed.xml", body=rss([{"title": "x"}]))
        with pytest.raises(FetchError, match="^refused: private address$"):
            fetch(f"http://sneaky.example:{server.port}/feed.xml", allow_private=False)
        assert server.log == []
