"""Where a feed's address points: a local file or the web.

Kept apart from :mod:`hermes.ingest.fetch` so that code which only asks the question (the
feed list, OPML import, a plain database check at start-up) does not import httpx and the
transport with it."""

from __future__ import annotations

import urllib.parse
import urllib.request
from pathlib import Path


def is_local(url: str) -> bool:
    """True for ``file://`` URLs and plain filesystem paths (anything without a web scheme)."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    return scheme == "file" or (
        scheme not in ("http", "https")
        and (
            len(scheme) <= 1 or "://" not in url  # "C:\\feeds\\x.xml" has a one-letter scheme
        )
    )


def local_path(url: str) -> Path:
    if urllib.parse.urlsplit(url).scheme.lower() == "file":
        return Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
    return Path(url).expanduser()
