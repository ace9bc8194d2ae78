"""A loopback HTTP server for the ingest tests: routes serve fixed bodies, honour
conditional GET, redirect, sleep, drip or stream huge bodies; every request is logged."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    headers: dict = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    sleep: float = 0.0  # before answering (a hung server)
    drip: float | None = None  # seconds between single bytes of the body
    stream_bytes: int = 0  # stream this many filler bytes instead of body
    gzip: bool = False

    def serve(self, h: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        if self.sleep and stop.wait(self.sleep):
            return
        if (self.etag and h.headers.get("If-None-Match") == self.etag) or (
            self.last_modified and not self.etag and h.headers.get("If-Modified-Since") == self.last_modified
        ):
            h.send_response(304)
            h.end_headers()
            return
        body = gzip.compress(self.body) if self.gzip else self.body
        h.send_response(self.status)
        for k, v in self.headers.items():
            h.send_header(k, v)
        if self.etag:
            h.send_header("ETag", self.etag)
        if self.last_modified:
            h.send_header("Last-Modified", self.last_modified)
        if self.gzip:
            h.send_header("Content-Encoding", "gzip")
        if self.stream_bytes or self.drip:
            h.send_header("Connection", "close")
        else:
            h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            if self.stream_bytes:
                chunk = b"<!-- filler -->" * 4096
                sent = 0
                while sent < self.stream_bytes and not stop.is_set():
                    h.wfile.write(chunk)
                    sent += len(chunk)
            elif self.drip:
                for byte in body:
                    if stop.wait(self.drip):
                        return
                    h.wfile.write(bytes([byte]))
                    h.wfile.flush()
            else:
                h.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (size cap, deadline): that is the point


class _Server(ThreadingHTTPServer):
    # The default listen backlog (5) drops connections when a client opens more at once,
    # and the kernel retries them a second later: that would be measured, not hermes.
    request_queue_size = 128


class FeedServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.routes: dict[str, Route] = {}
        self.log: list[tuple[str, dict]] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.log.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404, "Not Found")
                    return
                route.serve(self, server.stop)

            def log_message(self, *args):
                pass

        self.host = host
        self.httpd = _Server((host, port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def add(self, path: str, route: Route | None = None, **kwargs) -> str:
        self.routes[path] = route or Route(**kwargs)
        return self.url(path)

    def hits(self, path: str) -> int:
        return sum(1 for p, _ in self.log if p == path)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def rss(items: list[dict], title: str = "Test feed") -> bytes:
    """A small RSS 2.0 document; each item dict may hold title, link, guid, description,
    categories, pubDate."""
    from xml.sax.saxutils import escape

    out = [
        (
            '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
            f"<title>{escape(title)}</title><link>http://example.org/</link>"
        )
    ]
    for it in items:
        out.append("<item>")
        for key in ("title", "link", "guid", "description", "pubDate"):
            if key in it:
                out.append(f"<{key}>{escape(it[key])}</{key}>")
        for cat in it.get("categories", []):
            out.append(f"<category>{escape(cat)}</category>")
        out.append("</item>")
    out.append("</channel></rss>")
    return "".join(out).encode("utf-8")
