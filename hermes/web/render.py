"""Rendering: templates with the CSRF token and the one-time flash message, redirects after
a POST, and the template filters (dates, percentages, corpus signals, feed text)."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from datetime import UTC, datetime
from urllib.parse import quote, urlencode, urlsplit

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse

from hermes.facekit.faces import plural
from hermes.storage.records import is_media
from hermes.text.latex import readable

from ..clock import as_precise, read_stamp
from ..contract import ok
from ..ranking.explain_words import weight_note
from ..ranking.match import shown
from . import csrf
from .sanitize import looks_like_html, preview, render_summary, safe_url

FLASH_COOKIE = "hermes_flash"
DENSITY_COOKIE = "hermes_density"
#: the persona this browser used last, by id (ids are never reused, and a rename keeps it):
#: the pages that are nobody's (Feeds, keys) carry its navigation, as a persona's own do
PERSONA_COOKIE = "hermes_persona"
DENSITIES = ("compact", "comfortable", "auto")
FLASH_MAX = 300  # characters of a one-time message (the cookie holds ~4 kB with its undo)


def page_url(page: str, user: str, **params) -> str:
    query = {"user": user, **{k: v for k, v in params.items() if v is not None}}
    return f"/{page}?{urlencode(query)}"


def with_user(path: str, user: dict | str | None, anchor: str = "") -> str:
    """``path`` for ``user`` when there is one. The Feeds pages are nobody's, but a person who
    came from a feed keeps that feed's tabs on them, and after each action there."""
    name = user.get("name") if isinstance(user, dict) else user
    query = f"{'&' if '?' in path else '?'}{urlencode({'user': name})}" if name else ""
    return f"{path}{query}{anchor}"


def set_flash(request: Request, response, message: str, kind: str = "ok", undo: dict | None = None) -> None:
    """The one-time message shown after a redirect (a signed cookie), with an undo form."""
    payload = {"kind": kind, "message": message[:FLASH_MAX]}
    if undo:
        payload["undo"] = undo
    raw = json.dumps(payload, separators=(",", ":")).encode()
    value = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    if len(value) > 3000:  # a cookie holds ~4 kB: drop the undo rather than the message
        return set_flash(request, response, message, kind)
    signed = csrf.sign(request.app.state.secret_fn(), value)
    response.set_cookie(FLASH_COOKIE, signed, max_age=60, httponly=True, samesite="strict")


def pop_flash(request: Request) -> dict | None:
    value = csrf.unsign(request.app.state.secret_fn(), request.cookies.get(FLASH_COOKIE))
    if not value:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return payload if isinstance(payload, dict) and "message" in payload else None


def density(request: Request) -> str:
    """``compact``, ``comfortable`` or ``auto`` (compact on a phone-sized screen)."""
    value = request.cookies.get(DENSITY_COOKIE)
    return value if value in DENSITIES else "auto"


def render(request: Request, name: str, context: dict, status: int = 200):
    flash = pop_flash(request)
    context = {
        "csrf_token": request.scope.get("state", {}).get("csrf_token", ""),
        "flash": flash,
        "path": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        "density": density(request),
        **context,
    }
    response = request.app.state.templates.TemplateResponse(request, name, context, status_code=status)
    if flash or FLASH_COOKIE in request.cookies:
        response.delete_cookie(FLASH_COOKIE)
    user = context.get("user")
    if isinstance(user, dict) and "id" in user and request.cookies.get(PERSONA_COOKIE) != str(user["id"]):
        # how the pages look (as the density), not data: a GET never writes the database
        response.set_cookie(PERSONA_COOKIE, str(user["id"]), max_age=365 * 86400, httponly=True, samesite="lax")
    return response


def macro_text(request: Request, template: str, macro: str, **arguments) -> str:
    """What ``macro`` of ``template`` renders, as plain text: a figure a page shows, for
    the script to put in place after an action (one rendering of it, not a copy in JS)."""
    module = request.app.state.templates.env.get_template(template).module
    return Markup(getattr(module, macro)(**arguments)).striptags()


def wants_json(request: Request) -> bool:
    """A script asked (hermes.js sends ``Accept: application/json``): answer with data, the
    page stays where it is."""
    return "application/json" in request.headers.get("accept", "")


def redirect(request: Request, to: str, message: str | None = None, kind: str = "ok", undo: dict | None = None):
    response = RedirectResponse(to, status_code=303)
    if message:
        set_flash(request, response, message, kind, undo)
    return response


def done(request: Request, back: str, message: str, *, kind: str = "ok", undo: dict | None = None, **state):
    """The answer to an action: JSON for the script (message, undo, the item's new state),
    else a redirect back to where the button was, with the message and its undo."""
    if wants_json(request):
        return JSONResponse(ok(message, kind=kind, undo=undo, **state))
    return redirect(request, back, message, kind, undo)


# --- template filters --------------------------------------------------------------------------


def fmt_date(value) -> str:
    """``2026-11-02`` from an ISO timestamp (or the text itself when it is not one)."""
    if not value:
        return ""
    when = read_stamp(value)
    return str(value)[:10] if when is None else when.strftime("%Y-%m-%d")


def fmt_ago(value) -> str:
    when = read_stamp(value)
    if when is None:
        return ""
    seconds = (datetime.now(UTC) - when).total_seconds()
    if seconds < 0:
        return "scheduled"
    for unit, size in (("d", 86400), ("h", 3600), (" min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def fmt_pct(value) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(number) else f"{number:.0%}"


def fmt_num(value, digits: int = 2) -> str:
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return ""


def fmt_media(enclosure) -> str:
    """A podcast's media file in words: "audio · mpeg · 1 h 02 min · 42 MB" (the parts the
    feed gave)."""
    kind, _, subtype = str((enclosure or {}).get("type") or "").partition("/")
    size = (enclosure or {}).get("length")
    parts = [kind or "media", subtype.removeprefix("x-"), fmt_duration((enclosure or {}).get("duration"))]
    parts += (
        [f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{max(1, round(size / 1e3))} kB"]
        if isinstance(size, int) and size > 0
        else []
    )
    return " · ".join(p for p in parts if p)


def fmt_duration(seconds) -> str:
    """An episode's length: "48 min", "1 h 02 min", "40 s"; "" when unknown."""
    if not isinstance(seconds, int) or seconds <= 0:
        return ""
    if seconds < 60:
        return f"{seconds} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def playable(enclosure) -> str:
    """The safe URL of an enclosure that is an episode's media (:func:`hermes.storage.records.is_media`),
    else "": a newsletter's cover image/jpeg is not an episode."""
    return (safe_url(enclosure.get("url")) or "") if is_media(enclosure) else ""


def fmt_figure(value) -> str:
    """A similarity or probability, cut as the CLI and MCP phrases cut it
    (:func:`hermes.ranking.match.shown`)."""
    try:
        return shown(float(value))
    except (TypeError, ValueError):
        return ""


def fmt_signals(row) -> str:
    """``read 100% · 2 highlights · ★`` for a corpus_ranked row."""
    if not isinstance(row, dict):
        return ""
    bits = []
    if row.get("max_fraction"):
        bits.append(f"read {fmt_pct(row['max_fraction'])}")
    if row.get("highlights"):
        bits.append(plural(row["highlights"], "highlight"))
    if row.get("notes"):
        bits.append(plural(row["notes"], "note"))
    if row.get("favorited"):
        bits.append("★ saved")
    if row.get("reopens"):
        bits.append(plural(row["reopens"], "re-read"))
    return " · ".join(bits)


_URL_BREAK = re.compile(r"(?<=[/])(?!/)|(?=[.?&=#_-])")


def url_breaks(url) -> Markup:
    """A URL that wraps at its slashes and before dots, ``?``, ``&``, ``=``, ``#``, ``_``
    and ``-`` (a ``<wbr>`` each), never inside a word; escaped."""
    parts = _URL_BREAK.split(str(url or ""))
    return Markup("<wbr>").join(escape(p) for p in parts if p)


def fmt_until(value) -> str:
    """``in 48 min`` / ``now`` for a future ISO timestamp."""
    when = read_stamp(value)
    if when is None:
        return ""
    seconds = (when - datetime.now(UTC)).total_seconds()
    if seconds < 60:
        return "now"
    for unit, size in (("d", 86400), ("h", 3600), (" min", 60)):
        if seconds >= size:
            return f"in {int(seconds // size)}{unit}"
    return "now"


#: :func:`hermes.text.latex.readable`'s own spelling of a script Unicode cannot raise or
#: lower whole: "_(4-δ)", "^(63,65)" around several characters (one level of parentheses
#: inside: "_(f(x))"), "_c" for one. The faces that show plain text (the terminal, the Atom
#: feed, MCP's sentences) keep it; a page can set it as a script. One character is taken for
#: a script only after a base that is no word's or address's end ("T_c", "ϵⁱ_R", "(x)_c"; not
#: "file_a", "/a_b") and before no letter or digit ("snake_case"), as text LaTeX never saw is
#: read by these rules too.
_SCRIPT_AS_READ = re.compile(
    r"([_^])\(((?:[^()\n]|\([^()\n]*\))+)\)"
    r"|(?<=[^\s_^\\])(?<![A-Za-z]{2})(?<![/.:@#=&?%~]\S)([_^])([^\W_])(?![^\W_])"
)
_WORD_END = re.compile(r"\S*$")
#: a tag of sanitised HTML (its text has "<" and ">" as entities), and the tags whose text
#: is code, shown as written
_HTML_TAG = re.compile(r"(<[^>]*>)")
_CODE_TAG = re.compile(r"</?(code|pre|kbd|samp)\b", re.IGNORECASE)


def scripts_html(text: str | None, *, escaped: bool = False) -> Markup:
    """Text as :func:`~hermes.text.latex.readable` wrote it, as page content: escaped, with
    its scripts set as ``<sub>``/``<sup>`` (:data:`_SCRIPT_AS_READ`; a script's hyphen is a
    minus, "4−δ"). Only these two tags are added, around escaped text: a feed's text brings
    no markup. ``escaped``: ``text`` is the text of sanitised HTML, its entities kept."""
    text = text or ""
    quote = Markup if escaped else escape
    out, done = [], 0
    for match in _SCRIPT_AS_READ.finditer(text):
        mark, body = (match.group(1), match.group(2).strip()) if match.group(1) else match.group(3, 4)
        if not body or "://" in _WORD_END.search(text, 0, match.start()).group():
            continue  # an address's "wiki/Kondo_(film)"
        tag = "sup" if mark == "^" else "sub"
        inner = scripts_html(body.replace("-", "−"), escaped=escaped)
        out += [quote(text[done : match.start()]), Markup(f"<{tag}>{{}}</{tag}>").format(inner)]
        done = match.end()
    return Markup("").join([*out, quote(text[done:])])


def _html_scripts(html: Markup) -> Markup:
    """Sanitised HTML with the scripts of its text set (:func:`scripts_html`), not in code."""
    out, code = [], 0
    for part in _HTML_TAG.split(str(html)):
        if part.startswith("<"):
            opened = _CODE_TAG.match(part)
            code += 0 if opened is None else (-1 if part.startswith("</") else 1)
            out.append(part)
        else:
            out.append(part if code > 0 else str(scripts_html(part, escaped=True)))
    return Markup("".join(out))


def readable_html(text: str | None) -> Markup:
    """A title or a sentence as page content: its LaTeX as Unicode, the scripts Unicode has
    no characters for as ``<sub>``/``<sup>``, all else escaped. Attributes and the window's
    title take the plain :func:`~hermes.text.latex.readable`."""
    return scripts_html(readable(text))


def readable_preview(text: str | None, limit: int = 240) -> str:
    """A summary's first words as a person reads them: its LaTeX as Unicode
    (:func:`hermes.text.latex.readable`), then markup removed; the template escapes the result
    (with its scripts set: the ``scripts`` filter)."""
    return preview(readable(text), limit, markup=looks_like_html(text))


def readable_summary(text: str | None) -> Markup:
    """A summary as page content, its LaTeX as Unicode: converted first, then sanitised or
    escaped as any summary is (:func:`.sanitize.render_summary`, which is judged before the
    conversion: math's "<" read as Unicode is no longer known to be math), so no conversion
    can bring markup past the sanitiser; then its text's scripts set (:func:`_html_scripts`)."""
    return _html_scripts(render_summary(readable(text), markup=looks_like_html(text)))


FILTERS = {
    "signals": fmt_signals,
    "date": fmt_date,
    # a stored date as precisely as its source gave it ("1998" for a library's year alone)
    "precise": as_precise,
    "ago": fmt_ago,
    "pct": fmt_pct,
    "num": fmt_num,
    "figure": fmt_figure,
    "media": fmt_media,
    "playable": playable,
    "weight_note": lambda weight, n_clicks: weight_note(n_clicks, weight),
    "q": lambda v: quote(str(v), safe=""),
    "with_user": with_user,
    # feed text: sanitised HTML, a plain-text preview, links only when http(s); LaTeX shown
    # as Unicode (``readable``: titles, reasons that quote them). Pages only: the database and
    # the MCP tools keep the LaTeX, which agents read fine.
    "readable": readable,
    # the same as page content: scripts as <sub>/<sup> (element text only, not attributes)
    "readable_html": readable_html,
    "scripts": scripts_html,
    "summary_html": readable_summary,
    "preview": readable_preview,
    "is_html": looks_like_html,
    "safe_url": safe_url,
    "url_breaks": url_breaks,
    "until": fmt_until,
    "host": lambda u: (urlsplit(u).hostname or "") if u else "",
}
