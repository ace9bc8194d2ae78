"""fetch: local files, conditional GET, deadlines, the size cap, redirects and the
private-address guard — against a loopback server, never the network."""

from __future__ import annotations

import socket

import pytest
from ingest_server import FeedServer, rss

from hermes.ingest.fetch import FetchError, fetch

FEED = rss([{"title": "One", "link": "http://example.org/1"}])


@pytest.fixture
def server():
    with FeedServer() as s:
        yield s


def test_local_path_and_file_url(tmp_path):
    path = tmp_path / "feed.xml"
    path.write_bytes(FEED)
    for url in (str(path), path.as_uri()):
        res = fetch(url)
        assert res.status == 200 and res.body == FEED and not res.not_modified
    again = fetch(path.as_uri(), etag=res.etag)
    assert again.not_modified and again.body is None


def test_missing_local_file_and_directory(tmp_path):
    with pytest.raises(FetchError, match="file not found"):
        fetch(str(tmp_path / "nope.xml"))
    with pytest.raises(FetchError, match="not a file"):
        fetch(str(tmp_path))


def test_local_file_over_the_cap(tmp_path):
    path = tmp_path / "big.xml"
    path.write_bytes(b"x" * 2000)
    with pytest.raises(FetchError, match="size cap"):
        fetch(str(path), max_bytes=1000)


def test_conditional_get_with_etag_and_last_modified(server):
    url = server.add("/feed", body=FEED, etag='"v1"', last_modified="Mon, 02 Apr 2007 00:00:00 GMT")
    first = fetch(url)
    assert first.status == 200 and first.etag == '"v1"'
    assert first.last_modified == "Mon, 02 Apr 2007 00:00:00 GMT"
    second = fetch(url, etag=first.etag, last_modified=first.last_modified)
    assert second.not_modified and second.status == 304 and second.body is None
    assert second.etag == '"v1"'  # kept when the 304 does not repeat it
    sent = server.log[-1][1]
    assert sent["if-none-match"] == '"v1"'
    assert sent["if-modified-since"] == "Mon, 02 Apr 2007 00:00:00 GMT"


def test_http_error_is_one_line(server):
    with pytest.raises(FetchError) as info:
        fetch(server.url("/missing"))
    assert str(info.value) == "HTTP 404 Not Found" and info.value.status == 404


def test_rate_limit_carries_retry_after(server):
    url = server.add("/busy", status=429, headers={"Retry-After": "120"})
    with pytest.raises(FetchError) as info:
        fetch(url)
    assert info.value.status == 429 and info.value.retry_after == "120"


def test_hung_server_times_out(server):
    url = server.add("/hang", body=FEED, sleep=30)
    with pytest.raises(FetchError, match="timeout"):
        fetch(url, timeout=0.5)


def test_slow_drip_is_bounded_by_the_whole_response_deadline(server):
    # Each byte arrives well inside httpx's per-read timeout; only an overall deadline ends it.
    url = server.add("/drip", body=FEED * 50, drip=0.05)
    with pytest.raises(FetchError, match="timeout"):
        fetch(url, timeout=1.0)


def test_size_cap_while_streaming_without_content_length(server):
    url = server.add("/huge", stream_bytes=50 * 1024 * 1024)
    with pytest.raises(FetchError, match="size cap"):
        fetch(url, max_bytes=1024 * 1024)


def test_size_cap_from_content_length(server):
    url = server.add("/big", body=b"x" * 200_000)
    with pytest.raises(FetchError, match="size cap"):
        fetch(url, max_bytes=100_000)


def test_gzip_bomb_is_capped_on_the_decoded_size(server):
    url = server.add("/bomb", body=b"\0" * (20 * 1024 * 1024), gzip=True)
    assert server.routes["/bomb"].gzip
    with pytest.raises(FetchError, match="size cap"):
        fetch(url, max_bytes=1024 * 1024)
    small = server.add("/gz", body=FEED, gzip=True)
    assert fetch(small).body == FEED


def test_redirects_followed_and_loops_refused(server):
    target = server.add("/new", body=FEED)
    server.add("/old", status=301, headers={"Location": "/new"})
    res = fetch(server.url("/old"))
    assert res.body == FEED and res.final_url == target
    server.add("/loop", status=302, headers={"Location": "/loop"})
    with pytest.raises(FetchError, match="too many redirects"):
        fetch(server.url("/loop"))


def test_redirect_to_file_url_refused(server):
    server.add("/sneaky", status=302, headers={"Location": "file:///etc/passwd"})
    with pytest.raises(FetchError, match="refused redirect to file URL"):
        fetch(server.url("/sneaky"))


def test_private_guard_refuses_loopback_and_local_files(server, tmp_path):
    url = server.add("/feed", body=FEED)
    with pytest.raises(FetchError, match="^refused: private address$"):
        fetch(url, allow_private=False)
    assert server.hits("/feed") == 0  # refused before connecting
    with pytest.raises(FetchError, match="^refused: a local file$"):
        fetch(str(tmp_path / "x.xml"), allow_private=False)
    assert fetch(url).body == FEED  # allowed by default (a person at the CLI is trusted)


def test_the_unguarded_refusal_names_the_address_for_a_person():
    from hermes.ingest.guard import refusal

    message = str(refusal("intranet.example", "10.0.0.7"))
    assert "10.0.0.7" in message and "allow_private" in message


def _fake_dns(monkeypatch, table):
    """``table[host]``: a list of addresses, or a list of such lists answered in turn."""
    real = socket.getaddrinfo
    calls = {}

    def getaddrinfo(host, port, *args, **kwargs):
        if host in table:
            answers = table[host]
            if answers and isinstance(answers[0], list):
                answers = answers[min(calls.get(host, 0), len(answers) - 1)]
            calls[host] = calls.get(host, 0) + 1
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return calls


def test_name_resolving_to_a_private_address_is_refused(monkeypatch):
    # One private address among public ones is enough to refuse (DNS answers rotate); the
    # guarded error says no more than that (no address an agent could map the LAN with).
    _fake_dns(monkeypatch, {"feeds.example": ["93.184.216.34", "10.0.0.7"]})
    with pytest.raises(FetchError, match="^refused: private address$"):
        fetch("http://feeds.example/rss", allow_private=False)


def test_every_redirect_hop_is_checked_and_the_checked_address_is_the_one_connected(server, monkeypatch):
    from hermes.ingest import guard

    # Pretend 127.0.0.1 is public so the first hop is allowed; 127.0.0.2 stays private.
    monkeypatch.setattr(guard, "is_refused", lambda addr: addr != "127.0.0.1")
    # DNS rebinding: the name answers a public address, then a private one. Resolving
    # again at connect time would reach 127.0.0.2 (where nothing listens).
    calls = _fake_dns(monkeypatch, {"public.example": [["127.0.0.1"], ["127.0.0.2"]]})
    server.add("/feed", body=FEED)
    res = fetch(f"http://public.example:{server.port}/feed", allow_private=False)
    assert res.body == FEED and calls["public.example"] == 1
    # The name stays in the URL: Host header (and TLS SNI) carry it.
    assert server.log[-1][1]["host"] == f"public.example:{server.port}"
    server.add("/hop", status=302, headers={"Location": f"http://127.0.0.2:{server.port}/feed"})
    _fake_dns(monkeypatch, {"public.example": ["127.0.0.1"]})
    with pytest.raises(FetchError, match="^refused: private address$"):
        fetch(f"http://public.example:{server.port}/hop", allow_private=False)
    assert server.hits("/hop") == 1 and server.hits("/feed") == 1


def test_unresolvable_host_and_bad_scheme(monkeypatch):
    def fail(*a, **k):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    with pytest.raises(FetchError, match="^cannot resolve host$"):
        fetch("http://nowhere.invalid/feed", allow_private=False)
    with pytest.raises(FetchError, match="only http"):
        fetch("ftp://example.org/feed.xml")


def test_connection_refused_is_a_clean_error():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(FetchError, match="connection failed"):
        fetch(f"http://127.0.0.1:{port}/feed", timeout=5)


@pytest.mark.anyio
async def test_sync_fetch_works_inside_a_running_event_loop(tmp_path):
    path = tmp_path / "feed.xml"
    path.write_bytes(FEED)
    assert fetch(str(path)).body == FEED
