"""The JSON lines export: the stored text exactly (for tools), one object a line, and the
only format that carries deletions."""

from __future__ import annotations

import json

_JSONL_FIELDS = (
    "key",
    "item_id",
    "facet",
    "revision",
    "title",
    "authors",
    "year",
    "published",
    "url",
    "arxiv",
    "doi",
    "abstract",
    "content_type",
    "source",
    "media",
    "tags",
    "strength",
    "favorited",
    "read_fraction",
    "added",
    "first_seen",
    "last_seen",
    "highlights",
    "notes",
    "citation",
)


def jsonl(records: list[dict], tombstones: list[dict] | None = None) -> str:
    """One JSON object a line, ordered by revision: ``{"op": "upsert", ...record}`` and, for
    an export ``since`` a revision, ``{"op": "delete", key, item_id, facet, revision}`` for
    each item that left the exported facets (the only format that can carry deletions)."""
    events = [(r["revision"], {"op": "upsert", **{k: r.get(k) for k in _JSONL_FIELDS}}) for r in records]
    events += [(t["revision"], {"op": "delete", **t}) for t in tombstones or []]
    events.sort(key=lambda e: e[0])
    return "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for _, e in events)
