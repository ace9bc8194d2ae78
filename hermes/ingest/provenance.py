"""Whose word a feed's entry is for the arXiv paper it names.

A paper's title, authors and abstract are arXiv's: only arXiv's own listings and API (and a
feed file on this machine, which only a person can subscribe: a listing saved to disk, a
bridge they run) may change what is stored for it. Any other feed that names the paper (a
blog, an aggregator, a feed an agent subscribed) brings its own entry, which links to the
paper; were it folded into the stored paper, it could rewrite a paper the person read and
highlighted, and the rewritten text would be exported under the real arXiv id and DOI.
"""

from __future__ import annotations

import urllib.parse

#: the hosts of arXiv's listings (rss.arxiv.org), API (export.arxiv.org) and pages
ARXIV_HOST = "arxiv.org"


def speaks_for_papers(feed_url: str | None) -> bool:
    """Whether entries of the feed at ``feed_url`` may update the arXiv papers they name:
    arXiv's own feeds, and a local feed file. ``None`` (no feed: ``hermes save`` looked the
    paper up in the arXiv API) speaks for it too."""
    if feed_url is None:
        return True
    parts = urllib.parse.urlsplit(feed_url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        return True  # a path or file:// URL: a file on this machine, subscribed by a person
    host = (parts.hostname or "").lower()
    return host == ARXIV_HOST or host.endswith("." + ARXIV_HOST)
