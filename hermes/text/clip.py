"""Text shown to a person or an agent, shortened the one way: cut, and end with "…"."""

from __future__ import annotations

ELLIPSIS = "…"


def clip(text: str, limit: int, *, at_word: bool = False) -> str:
    """``text`` if it fits in ``limit`` characters, else cut to fit with "…" at the end.

    ``at_word``: cut at the last space instead of mid-word, and separate the "…" by a space
    (for running text, such as a summary's preview)."""
    text = text or ""
    if len(text) <= limit:
        return text
    if at_word:
        return text[: limit - 1].rsplit(" ", 1)[0] + " " + ELLIPSIS
    return text[: limit - 1].rstrip() + ELLIPSIS
