"""Making feed text safe to show.

Feed text is untrusted: an agent or a person reads it, and a hostile feed must not run
script in the browser that holds the CSRF token. Everything is escaped by jinja2's autoescape;
the only HTML that reaches a page goes through :func:`clean_html` (nh3, an allow-list
sanitiser): no ``<script>``/``<style>``/frames/forms/embeds, no ``on*`` handlers, no ``style``
attributes, and links only to http(s)/mailto. Images are dropped too: loading them would fetch
from the internet and tell a tracker the page was read.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

import nh3
from markupsafe import Markup, escape

from hermes.text.clip import clip
from hermes.text.markup import has_markup

ALLOWED_TAGS = {
    "a",
    "abbr",
    "acronym",
    "b",
    "blockquote",
    "br",
    "caption",
    "cite",
    "code",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "hreflang"},
    "abbr": {"title"},
    "acronym": {"title"},
    "blockquote": {"cite"},
    "del": {"cite", "datetime"},
    "ins": {"cite", "datetime"},
    "q": {"cite"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "ol": {"start", "type"},
    "*": {"lang", "dir"},
}
URL_SCHEMES = {"http", "https", "mailto"}
# Removed together with everything inside them (their text is code or chrome, not prose).
DROP_WITH_CONTENT = {
    "script",
    "style",
    "iframe",
    "object",
    "embed",
    "noscript",
    "template",
    "svg",
    "math",
    "frame",
    "frameset",
    "applet",
    "select",
    "textarea",
    "title",
}

_CLEANER = nh3.Cleaner(
    tags=ALLOWED_TAGS,
    clean_content_tags=DROP_WITH_CONTENT,
    attributes=ALLOWED_ATTRIBUTES,
    url_schemes=URL_SCHEMES,
    link_rel="noopener noreferrer nofollow",
    strip_comments=True,
)


def clean_html(html: str | None) -> Markup:
    """Sanitised HTML, safe to insert into a page as is."""
    return Markup(_CLEANER.clean(html or ""))


def looks_like_html(text: str | None) -> bool:
    """Whether ``text`` holds HTML markup (:func:`hermes.text.markup.has_markup`): a stored
    summary is text, and its "$x_1<...<x_n$. We show … $P_x(\\tau>t)$" or "a<b" is no tag
    (read as one, the page dropped the sentence between)."""
    return bool(text) and has_markup(text)


def render_summary(text: str | None, *, markup: bool | None = None) -> Markup:
    """A summary as page content: HTML is sanitised, plain text escaped into paragraphs.
    ``markup``: whether it is HTML, when the caller judged it before converting its LaTeX
    (math's "<" read as Unicode is no longer known to be math)."""
    if not text:
        return Markup("")
    if looks_like_html(text) if markup is None else markup:
        return clean_html(text)
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return Markup("").join(Markup("<p>{}</p>").format(p) for p in paragraphs)


def preview(text: str | None, limit: int = 240, *, markup: bool | None = None) -> str:
    """The first words of a summary as plain text (markup removed, entities decoded); the
    template escapes the result. ``markup`` as for :func:`render_summary`."""
    if not text:
        return ""
    if looks_like_html(text) if markup is None else markup:
        text = html.unescape(nh3.clean(text, tags=set(), clean_content_tags=DROP_WITH_CONTENT))
    text = " ".join(text.split())
    return clip(text, limit, at_word=True)


def safe_url(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) link, else ``None`` (no ``javascript:`` or
    ``data:`` href can be built from feed text). Autoescape still escapes the value."""
    if not url or not isinstance(url, str):
        return None
    url = url.strip()
    # Browsers drop control characters and whitespace inside a scheme ("java\tscript:"),
    # so judge the URL the way they will read it.
    probe = re.sub(r"[\x00-\x20\x7f]", "", url)
    try:
        parts = urlsplit(probe)
    except ValueError:
        return None
    if parts.scheme.lower() not in {"http", "https"} or not parts.netloc:
        return None
    return probe


__all__ = ["clean_html", "escape", "preview", "render_summary", "safe_url"]
