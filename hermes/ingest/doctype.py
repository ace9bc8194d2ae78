"""The entity guard: no XML parser ever sees a feed's entity declarations.

Defence in depth against entity expansion ("billion laughs" and its flat cousin, one
100 kB ``<!ENTITY>`` referenced thousands of times). feedparser keeps a declaration whose
value holds no ``&`` as "safe"; expat expands it until its amplification limit trips, then
feedparser re-parses with its loose parser, which expands it without any limit: a 109 kB
feed cost 41 s and ~1 GB. The cost grows with the references, so the body's size cap bounds
nothing. So, as defusedxml refuses entity declarations, hermes removes a DOCTYPE's internal
subset (``[ … ]``: entity, parameter-entity, element and attribute declarations; a feed
needs none of them) before parsing, and refuses a body in which a declaration would still
reach a parser. References to the removed entities stay as text (``&nbsp;`` and the other
HTML names are still read by feedparser's loose parser). The cost is one more copy of the
body (which the size cap bounds), never more.

The check is made on the text as feedparser will decode it (its own ``convert_to_utf8``,
deterministic), so a declaration spelled in UTF-16, UTF-7 or ``unicode_escape`` is seen too.
"""

from __future__ import annotations

import re

from ..errors import HermesError

_DOCTYPE = re.compile(rb"<!DOCTYPE", re.I)
_ENTITY = re.compile(rb"<!ENTITY", re.I)
# feedparser takes everything before the first "<\w" as the prolog its loose parser reads
# entity declarations from (feedparser.sanitizer.replace_doctype).
_ELEMENT = re.compile(rb"<\w")
# Tokens of a DOCTYPE: a quoted literal, a comment, a processing instruction, a run of
# bytes that are none of those nor a bracket, or one byte (the runs keep a 20 MB body quick).
_TOKEN = re.compile(rb'"[^"]*"|\'[^\']*\'|<!--.*?-->|<\?.*?\?>|[^"\'<\[\]>]+|.', re.S)


class EntityDeclarations(HermesError):
    """A body whose entity declarations could not be removed before parsing."""


def defuse(body: bytes, headers: dict[str, str]) -> tuple[bytes, bool]:
    """``body`` with its DOCTYPE's internal subset removed, and whether one was removed.

    ``headers``: the (lower-cased) response headers feedparser will be given, which decide
    how it decodes the body. Raises :class:`EntityDeclarations` when a declaration would
    still reach a parser (spelled in an encoding that hides it, an unterminated DOCTYPE,
    one outside a DOCTYPE before the root element)."""
    if not _declares(_as_parsed(body, headers)):
        return body, False
    span = _subset(body)
    if span is not None:
        body = body[: span[0]] + body[span[1] :]
        if not _declares(_as_parsed(body, headers)):
            return body, True
    raise EntityDeclarations(
        "refused: the feed declares XML entities (<!ENTITY …>) that hermes cannot remove "
        "safely; entity expansion is never done"
    )


def _as_parsed(body: bytes, headers: dict[str, str]) -> bytes:
    """The body as UTF-8, decoded exactly as :func:`feedparser.parse` will decode it."""
    # Here, not at the top: feedparser loads only when a feed is read.
    from feedparser.encodings import convert_to_utf8

    return convert_to_utf8(dict(headers), body, {})


def _declares(data: bytes) -> bool:
    """Whether a parser reading ``data`` would meet an entity declaration: in the prolog
    feedparser's loose parser reads, or in a DOCTYPE expat reads (to its end, which may lie
    past the first "<\\w" when a literal or comment holds one)."""
    if not _ENTITY.search(data):
        return False
    element = _ELEMENT.search(data)
    prolog = element.start() if element else len(data)
    if _ENTITY.search(data, 0, prolog):
        return True
    doctype = _DOCTYPE.search(data, 0, prolog)
    if doctype is None:
        return False
    end = _doctype_end(data, doctype.end())
    return bool(_ENTITY.search(data, doctype.start(), len(data) if end is None else end))


def _subset(data: bytes) -> tuple[int, int] | None:
    """The span of the first DOCTYPE's internal subset, brackets included; None without a
    DOCTYPE before the first element, without a subset, or with one left unterminated."""
    element = _ELEMENT.search(data)
    doctype = _DOCTYPE.search(data, 0, element.start() if element else len(data))
    if doctype is None:
        return None
    start = None
    pos = doctype.end()
    while (token := _TOKEN.match(data, pos)) is not None:
        pos = token.end()
        text = token.group()
        if start is None and text == b">":
            return None  # a DOCTYPE without an internal subset
        if start is None and text == b"[":
            start = token.start()
        elif start is not None and text == b"]":
            return start, pos
    return None


def _doctype_end(data: bytes, pos: int) -> int | None:
    """Where the DOCTYPE whose name starts at ``pos`` ends (after its ">"); None when it
    never does."""
    inside = False
    while (token := _TOKEN.match(data, pos)) is not None:
        pos = token.end()
        text = token.group()
        if text == b"[":
            inside = True
        elif text == b"]":
            inside = False
        elif text == b">" and not inside:
            return pos
    return None


__all__ = ["EntityDeclarations", "defuse"]
