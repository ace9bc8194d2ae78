"""Third-party text on its way into Markdown (the export and the vault's notes) and into
file names.

Feed text reaches here as plain text, but plain text is Markdown source: a summary that says
``![](https://tracker.example/p.gif)`` became a tracking pixel in the person's vault,
``[read more](javascript:…)`` a live script link, ``<img src=…>`` (an entity-decoded
``&lt;img&gt;``) raw HTML, and a title with a right-to-left override a file name that reads
backwards (``txt.exe``). Defence in depth: every construct that can load or link something
starts with ``[`` or ``<``, so those are escaped (with a backslash that would escape the
escape); link targets must be http(s) or mailto; bidi controls leave file names.
"""

from __future__ import annotations

import re
import urllib.parse

# A backslash is an escape in Markdown only before ASCII punctuation: such a backslash is
# doubled first, or "\[" would turn the "[" escaped below back into a live one.
_ESCAPE_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
_LIVE = re.compile(r"[\[\]<`]")
_EMPHASIS = re.compile(r"[*_]")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINK_SCHEMES = ("http", "https", "mailto")


def md_text(text: str, *, emphasis: bool = False) -> str:
    """``text`` as Markdown that shows it and does nothing else: no link, image, HTML or
    code span; ``emphasis`` escapes ``*`` and ``_`` too (text set inside ``*…*``)."""
    text = _ESCAPE_BACKSLASH.sub(r"\\\\", text)
    text = _LIVE.sub(lambda m: "\\" + m.group(), text)
    return _EMPHASIS.sub(lambda m: "\\" + m.group(), text) if emphasis else text


def md_url(url: str | None) -> str | None:
    """``url`` when a note may link to it (http, https or mailto, nothing that would end the
    ``<…>`` around it); else None."""
    if not url or any(c in url for c in "<>\n\r \t"):
        return None
    return url if urllib.parse.urlsplit(url).scheme.lower() in _LINK_SCHEMES else None


def md_code(text: str) -> str:
    """``text`` for inside a code span (`` `…` ``): a backtick would end it early."""
    return text.replace("`", "'")


def without_bidi(text: str) -> str:
    """``text`` without bidirectional controls (overrides, embeddings, isolates, marks)."""
    return _BIDI.sub("", text)


__all__ = ["md_code", "md_text", "md_url", "without_bidi"]
