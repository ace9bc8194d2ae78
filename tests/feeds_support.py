"""Helpers for the feeds and MCP tests: a loopback HTTP server serving canned responses,
and small RSS documents."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape


def rss(title: str, entries: list[dict]) -> bytes:
    """A minimal RSS 2.0 document; entries have title, link, description, category."""
    items = []
    for e in entries:
        cats = "".join(f"<category>{escape(c)}</category>" for c in e.get("tags", []))
        items.append(
            f"<item><title>{escape(e['title'])}</title><link>{escape(e['link'])}</link>"
            f"<guid>{escape(e.get('guid', e['link']))}</guid>"
            f"<description>{escape(e.get('description', ''))}</description>{cats}"
            f"<pubDate>{e.get('pubDate', 'Mon, 23 Nov 2026 10:00:00 GMT')}</pubDate></item>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title>{escape(title)}</title><link>https://example.org/</link>"
        f"<description>test</description>{''.join(items)}</channel></rss>"
    ).encode()


SAMPLE_ENTRIES = [
    {
        "title": "Surface codes below threshold",
        "link": "https://example.org/a",
        "description": "Quantum error correction with superconducting qubits.",
        "tags": ["quant-ph"],
    },
    {
        "title": "Sparse autoencoders for interpretability",
        "link": "https://example.org/b",
        "description": "Dictionary learning on language model activations.",
        "tags": ["cs.lg"],
    },
    {
        "title": "Tomato growing tips",
        "link": "https://example.org/c",
        "description": "Gardening for beginners.",
        "tags": ["garden"],
    },
]


class CannedServer:
    """``routes[path] = (status, headers, body)``; records the paths requested."""

    def __init__(self):
        self.routes: dict[str, tuple[int, dict, bytes]] = {}
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                status, headers, body = outer.routes.get(self.path, (404, {}, b"not found"))
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
