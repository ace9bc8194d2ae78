"""Tags: the one rule that decides when two spellings are the same tag, and the stored form.

Ingest stores tags in this form, the preference keys (``tag:<tag>``), the tag graph and the
feed suggestions all compare tags through :func:`normalize_tag`, so a tag counted in one
place is the same tag everywhere.
"""

from __future__ import annotations

import json


def normalize_tag(tag) -> str:
    """Whitespace collapsed, trimmed and case-folded; ``""`` for a blank or non-text tag."""
    if not isinstance(tag, str):
        return ""
    return " ".join(tag.split()).casefold()


def parse_tags(raw) -> list:
    """The stored JSON tag list, or ``[]`` when it is missing or not a JSON list."""
    try:
        tags = json.loads(raw or "[]")
    except (TypeError, ValueError):
        return []
    return tags if isinstance(tags, list) else []
