"""Plain text and safe URLs out of whatever a feed carries."""

from __future__ import annotations

import html
import html.entities
import re
import urllib.parse

import nh3

from hermes.text.markup import Reading, could_act, literal_less_than

_BLOCK = re.compile(r"<(/?)(p|br|div|li|ul|ol|h[1-6]|tr|td|th|blockquote|pre|dd|dt|hr)\b", re.I)
# The end of a list item, heading, paragraph or definition: as one line of text it needs a
# full stop where the feed wrote none, or "Resample dead latents</li><li>Normalise decoder
# columns" runs together as one phrase (in exports, reasons and the embedded text).
_ENDS = re.compile(r"</(li|p|h[1-6]|dt|dd|caption)\s*>", re.I)
# A table row's cells, kept apart (a trial's "Layer Head Role 1 4 previous token" read as one
# phrase): "Layer | Head | Role. 1 | 4 | previous token".
_CELLS = re.compile(r"</t[dh]\s*>(?=\s*<t[dh]\b)", re.I)
# A row ends inside its last cell: text between a table's tags is moved out of the table by
# the HTML parser (foster parenting), so a stop after </tr> would land before the table.
_ROW_END = re.compile(r"(?=</t[dh]\s*>\s*</tr\s*>)", re.I)
# An image's alt text is the words the author gave it; the tag itself leaves no text, and
# "Image: <img alt='Attention heads'>" read "Image:".
_IMAGE = re.compile(r"""<img\b[^>]*?\balt\s*=\s*(?:"([^"<]*)"|'([^'<]*)')[^>]*>""", re.I)
_END_MARK = "\u2029"  # a paragraph separator: never kept, turned into ". " or a space
_UNENDED = re.compile(r"(?<=[^\W_])\s*\u2029")
_LAST_ENDS = re.compile(r"[\s\u2029]*\u2029[\s\u2029]*$")  # nothing follows: no stop needed
# An entity reference left in text once its HTML is decoded: a feed that escapes its HTML
# twice (arXiv listings: "3&amp;percnt;", "M&amp;odot;" read "3&percnt;", "M&odot;").
# Only a whole reference, a number or a name HTML5 defines, with its semicolon: "AT&T",
# "R&D;" and "&c." stay as written.
_LEFT_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\ufeff]")
# What only HTML parsing can change: markup, entities, NUL. Text without any of them skips
# the parser (tag names and keyphrases are normalised by the thousand at ingest).
_MARKUP = re.compile(r"[<&\x00]")
_TRACKING = re.compile(r"^(utm_\w+|fbclid|gclid|mc_cid|mc_eid)$", re.I)


def plain_text(value: str | None, *, limit: int | None = None) -> str:
    """HTML (or text) → one line of plain text: no tags, entities decoded, whitespace
    collapsed. Script and style bodies are dropped, not kept as text. A "<" that opens no
    markup (:func:`hermes.text.markup.literal_less_than`: any in TeX math, one before no
    HTML element's tag) is the less-than sign it is."""
    if not value:
        return ""
    # Lone surrogates (from broken encodings) cannot be stored as UTF-8, nor given to nh3.
    text = str(value).encode("utf-8", "replace").decode("utf-8")
    if _MARKUP.search(text):
        # before any parser: html5ever reads "<" before a letter as a tag, and an abstract's
        # "$x_1<...<x_n$. We show … $P_x(\tau>t)$" lost the sentence between (arXiv 0704.0215)
        text = literal_less_than(text)
        text = _IMAGE.sub(lambda m: f" {m.group(1) or m.group(2) or ''} ", text)
        text = _CELLS.sub(" | ", text)
        text = _ENDS.sub(lambda m: m.group(0) + _END_MARK, text.replace(_END_MARK, " "))
        text = _ROW_END.sub(_END_MARK, text)
        text = _BLOCK.sub(r" <\1\2", text)  # keep words of adjacent blocks apart
        text = nh3.clean(text, tags=set(), clean_content_tags={"script", "style"})
        # Decoded once more after the tags are gone: a double escape's "&amp;lt;b&amp;gt;"
        # is the text "<b>", never markup (it is neutralised just below).
        text = _LEFT_ENTITY.sub(_decoded, html.unescape(text))
        text = _neutralised(text)
        text = _UNENDED.sub(".", _LAST_ENDS.sub("", text)).replace(_END_MARK, " ")
    text = _CONTROL.sub(" ", text)
    text = " ".join(text.split())
    if limit and len(text) > limit:
        cut = text[: limit - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2 :] else cut) + "\u2026"
    return text


def _decoded(match: re.Match) -> str:
    """A reference left in decoded text as its character; an unknown name as written."""
    ref = match.group()
    return html.unescape(ref) if ref[1] == "#" or ref[1:] in html.entities.html5 else ref


def _neutralised(text: str) -> str:
    """Text with every ``<`` a browser would open acting markup at
    (:func:`hermes.text.markup.could_act`) turned into "‹". Escaped markup in the source
    (``&lt;script&gt;``) decodes to a literal tag: as text it is harmless only while every
    renderer escapes it, so no stored field may be mistaken for such markup. A relation is
    kept: "3<z<8", "$x_1<...<x_n$. We show … $P_x(\tau>t)$"; "<!", "</", "<?" never are one."""
    if "<" not in text:
        return text
    reading = Reading(text)
    chars = list(text)
    for at in (m.start() for m in re.finditer("<", text)):
        if could_act(text, at, reading):
            chars[at] = "\u2039"
    return "".join(chars)


def safe_url(value: str | None) -> str | None:
    """An absolute http(s) URL, or None: ``javascript:``, ``data:`` and relative leftovers
    must never become a link someone clicks."""
    if not value:
        return None
    url = _CONTROL.sub("", str(value)).strip()
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    if any(c in url for c in "<>\"' "):
        url = urllib.parse.quote(url, safe=":/?#[]@!$&()*+,;=%~")
    return url


def without_tracking(query: str) -> str:
    """A URL's query without campaign-tracking parameters (``utm_*``, ``fbclid`` …); every
    other parameter exactly as written (re-encoded, ``a=b%20c`` read ``a=b+c`` and a bare
    ``flag`` ``flag=``: another URL to a server)."""
    pairs = query.split("&")
    kept = [p for p in pairs if not _TRACKING.match(urllib.parse.unquote_plus(p.split("=", 1)[0]))]
    return query if len(kept) == len(pairs) else "&".join(kept)


def remove_dot_segments(path: str) -> str:
    """RFC 3986's remove_dot_segments (section 5.2.4): ``/a/./b/../c`` is ``/a/c``, and
    nothing else changes. An empty segment is a segment: ``http://www.michele.io//feed`` is
    not ``http://www.michele.io/feed`` (``urljoin`` read a path's leading ``//`` as a host)."""
    out: list[str] = []
    while path:
        if path.startswith(("../", "./")):
            path = path[path.index("/") + 1 :]
        elif path.startswith("/./") or path == "/.":
            path = "/" + path[3:]
        elif path.startswith("/../") or path == "/..":
            path = "/" + path[4:]
            if out:
                out.pop()
        elif path in (".", ".."):
            path = ""
        else:
            end = path.find("/", 1)
            end = len(path) if end < 0 else end
            out.append(path[:end])
            path = path[end:]
    return "".join(out)


def canonical_url(value: str | None) -> str | None:
    """:func:`safe_url`, lower-cased scheme and host, no default port, no fragment, no
    tracking parameters; the rest as written (RFC 3986 section 6: a user name and the path
    are case-sensitive, and ``//`` in a path is an empty segment, not nothing)."""
    url = safe_url(value)
    if url is None:
        return None
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    userinfo, at, hostport = parts.netloc.rpartition("@")
    hostport = hostport.lower()
    if (scheme, hostport.rpartition(":")[2]) in (("http", "80"), ("https", "443")):
        hostport = hostport.rpartition(":")[0]
    return urllib.parse.urlunsplit(
        (scheme, userinfo + at + hostport, parts.path or "/", without_tracking(parts.query), "")
    )


#: a sentence of a summary that is only a label and a link or a count ("Comments URL:
#: https://…", "Points: 12", "# Comments: 3"): an aggregator's boilerplate, the same on every
#: item of its feed. Embedded, it made any two Hacker News items 0.32 alike (their titles
#: alone: 0.05), so the feed's items all looked close to one liked item.
LABELLED_LINK = re.compile(r"(?:#\s*)?[A-Za-z][\w ]{0,30}:\s*(?:https?://\S+|\d+)\.?")


def embedding_text(title: str, summary: str) -> str:
    """What the model embeds of an item (and what token spans index): "title. summary",
    without the summary's sentences that are only a label and a link or a count
    (:data:`LABELLED_LINK`; the stored summary keeps them)."""
    if summary:
        summary = ". ".join(s for s in summary.split(". ") if not LABELLED_LINK.fullmatch(s))
    return f"{title}. {summary}".strip(". ").strip() if summary else (title or "")
