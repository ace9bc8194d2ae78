"""Which "<" in feed text opens HTML markup, and which is a less-than sign.

The HTML tokenizer reads any "<" before a letter as a tag, so an abstract's
"$x_1<...<x_n$. We show … $P_x(\\tau>t)$" lost a sentence to a "tag" named "x_n$.", and
"$0<p\\le 1$, $0<q\\le \\infty$. We discuss …" everything after "$0" (arXiv 0704.0215,
0704.0054). Feed text is read here by two rules before any HTML parser sees it:

- inside TeX math (``$…$`` by :func:`hermes.text.latex.dollar_span`'s reading, ``$$…$$``,
  ``\\(…\\)``, ``\\[…\\]``) every "<" is a relation: TeX math holds no HTML;
- elsewhere a "<" opens markup only where it begins a comment, a declaration or an
  instruction (``<!``, ``<?``), or a whole start or end tag (up to its ``>``) of an element
  HTML, SVG or MathML defines (:data:`ELEMENTS`, the WHATWG index of elements with the
  obsolete ones a feed still carries). "a<b and c>d" stays text unless "b and c" reads as
  a tag of ``<b>``; "{a1,...,c |ai<c}" is text.

:func:`literal_less_than` writes the others ``&lt;``, so that nh3 (html5ever, the HTML
spec's parser) keeps them as text; :func:`opens_markup` is the same reading for one "<"
(the pages' choice between sanitising and escaping a summary).

Text no longer HTML (entities decoded: a feed's escaped ``&lt;script&gt;`` is now
"<script>") is checked by :func:`could_act`, the stored text's last defence should a face
ever forget to escape it: a "<" a browser would make an element of that runs, loads or
swallows anything is turned into "‹" (:func:`hermes.ingest.text.plain_text`). A less-than
sign in math stays one, even before a letter, unless it opens such an element.
"""

from __future__ import annotations

import re

from .latex import MAX_MATH, dollar_span

#: the WHATWG HTML index of elements, its obsolete elements (section 16), and the SVG 2 and
#: MathML Core elements a feed embeds (compared in lower case, as HTML names are)
ELEMENTS = frozenset(
    (
        # HTML
        "a abbr address area article aside audio b base bdi bdo blockquote body br button "
        "canvas caption cite code col colgroup data datalist dd del details dfn dialog div dl "
        "dt em embed fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 head header "
        "hgroup hr html i iframe img input ins kbd label legend li link main map mark menu "
        "meta meter nav noscript object ol optgroup option output p picture pre progress q "
        "rp rt ruby s samp script search section select slot small source span strong style "
        "sub summary sup table tbody td template textarea tfoot th thead time title tr track "
        "u ul var video wbr "
        # obsolete, still in old feeds
        "acronym applet basefont bgsound big blink center dir font frame frameset image "
        "isindex keygen listing marquee menuitem multicol nextid nobr noembed noframes param "
        "plaintext rb rtc spacer strike tt xmp "
        # SVG 2
        "svg animate animatemotion animatetransform circle clippath defs desc ellipse "
        "feblend fecolormatrix fecomponenttransfer fecomposite feconvolvematrix "
        "fediffuselighting fedisplacementmap fedistantlight fedropshadow feflood fefunca "
        "fefuncb fefuncg fefuncr fegaussianblur feimage femerge femergenode femorphology "
        "feoffset fepointlight fespecularlighting fespotlight fetile feturbulence filter "
        "foreignobject g line lineargradient marker mask metadata mpath path pattern polygon "
        "polyline radialgradient rect set stop switch symbol text textpath tspan use view "
        # MathML
        "math annotation annotation-xml maction menclose merror mfenced mfrac mi mmultiscripts "
        "mn mo mover mpadded mphantom mprescripts mroot mrow ms mspace msqrt mstyle msub "
        "msubsup msup mtable mtd mtext mtr munder munderover none semantics"
    ).split()
)
#: a start or end tag, whole: its name (as the tokenizer ends one: at a space, "/" or ">"),
#: then attributes (quoted values may hold "<" and ">") up to its ">", with no "<" between.
#: A prefixed name is Word's ``<o:p>``, common in pasted posts.
_TAG = re.compile(r"""</?([A-Za-z][A-Za-z0-9-]*)(:[A-Za-z][A-Za-z0-9-]*)?(?=[\s/>])(?:"[^"]*"|'[^']*'|[^<>"'])*>""")
_MARKUP_OPENER = re.compile(r"<[!?]")
#: the elements whose content the HTML tokenizer does not read as text (script data,
#: RAWTEXT, RCDATA, PLAINTEXT) or reads as foreign content: one opened runs or hides what
#: follows, attributes or not
_RAW_CONTENT = frozenset(
    "script style title textarea xmp iframe noembed noframes noscript plaintext template svg math".split()
)
#: an attribute that runs script or loads an address, by the name the tokenizer gives it
#: (after a space, "/" or a quote); any element carries an event handler
_ACTIVE_ATTRIBUTE = re.compile(
    r"""[\s/"'](?:on[a-z]+|href|src|srcset|srcdoc|action|formaction|data|style|xlink:href|background|poster|content)\s*=""",
    re.I,
)
_TAG_NAME = re.compile(r"[^\s/>]*")
_MATH_START = re.compile(r"\$\$|\$|\\[(\[]")
#: an end tag of an element: TeX math never holds one, so dollars around one are a price's
#: and real markup ("costs $5</p><p>now x$")
_END_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>")


def math_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each TeX math span in ``text``, as :mod:`hermes.text.latex` reads
    math (a price's dollars are none)."""
    spans, at = [], 0
    while start := _MATH_START.search(text, at):
        token, end = start.group(), None
        if token == "$":
            found = dollar_span(text, start.start())
            end = found and found[0]
        else:
            closer = {"$$": "$$", "\\(": "\\)", "\\[": "\\]"}[token]
            close = text.find(closer, start.end())
            end = close + 2 if 0 < close - start.end() <= MAX_MATH else None
        if end is None or _END_TAG.search(text, start.start(), end):
            at = start.end()
            continue
        spans.append((start.start(), end))
        at = end
    return spans


class Reading:
    """What the "<" of one text are read by: its math spans (:func:`math_spans`) and where
    each element's last end tag stands (read once per text, not once per "<")."""

    def __init__(self, text: str):
        self.spans = math_spans(text)
        self.last_end = {m.group(1).lower(): m.start() for m in _END_TAG.finditer(text)}

    def span_at(self, at: int) -> tuple[int, int] | None:
        return next(((s, e) for s, e in self.spans if s < at < e), None)


def opens_markup(text: str, at: int, reading: Reading | None = None) -> bool:
    """Whether the "<" at ``at`` opens markup (the module's rules); ``reading``: the text's
    :class:`Reading`, when the caller has it."""
    reading = reading or Reading(text)
    if reading.span_at(at):
        return False
    return _MARKUP_OPENER.match(text, at) is not None or _whole_tag(text, at, reading) is not None


def _whole_tag(text: str, at: int, reading: Reading) -> re.Match | None:
    """The whole tag at ``at`` when it is markup: an element a list names (or a prefixed
    name), else an end tag or a self-closing one (prose writes no "</" or "/>"), or a
    start tag whose end tag follows (``<command>…</command>``); "x<y and z>w" is none."""
    tag = _TAG.match(text, at)
    if tag is None:
        return None
    name, whole = tag.group(1).lower(), tag.group()
    if tag.group(2) is not None or name in ELEMENTS or whole.startswith("</") or whole.endswith("/>"):
        return tag
    return tag if reading.last_end.get(name, -1) > at else None


def could_act(text: str, at: int, reading: Reading) -> bool:
    """Whether a browser reading ``text`` as HTML would open at the "<" at ``at`` markup
    that acts: "<!", "</" or "<?"; an element of :data:`_RAW_CONTENT`; an attribute of
    :data:`_ACTIVE_ATTRIBUTE` before the tag's ">" (or the end of the text: a template's
    own ">" may close it); outside math, a whole tag (:func:`opens_markup`). In math
    "$0<p \\le 1$ … $x>0$" and "$a<b>c$" are relations, kept: a browser makes harmless
    elements of them. A "<" before no letter is a relation to every browser."""
    following = text[at + 1 : at + 2]
    if following in ("!", "/", "?"):
        return True
    if not (following.isascii() and following.isalpha()):
        return False
    if _TAG_NAME.match(text, at + 1).group().lower() in _RAW_CONTENT:
        return True
    close = text.find(">", at)
    if _ACTIVE_ATTRIBUTE.search(text, at, len(text) if close < 0 else close):
        return True
    return reading.span_at(at) is None and _whole_tag(text, at, reading) is not None


def literal_less_than(html: str) -> str:
    """``html`` with every "<" that opens no markup (:func:`opens_markup`) written ``&lt;``:
    an HTML parser keeps it as the text it is."""
    if "<" not in html:
        return html
    reading = Reading(html)
    parts, done = [], 0
    for at in (m.start() for m in re.finditer("<", html)):
        if not opens_markup(html, at, reading):
            parts += [html[done:at], "&lt;"]
            done = at + 1
    return "".join(parts) + html[done:]


def paired_tags_only(text: str) -> str:
    """Text (a feed value typed ``text``) as HTML for :func:`hermes.ingest.text.plain_text`:
    its "&" escaped, and every "<" but those of a tag closed again in it (``<b>…</b>``, the
    arXiv API's ``&lt;b&gt;stellar streams&lt;/b&gt;``: HTML a feed calls text) written
    ``&lt;``, so a lone tag named in prose stays ("Use the <b> tag sparingly", a trial's
    news feed lost it)."""
    text = text.replace("&", "&amp;")
    names = [(m.start(), m.group(0).startswith("</"), m.group(1).lower()) for m in _TAG.finditer(text)]
    keep = set()
    for i, (at, closing, name) in enumerate(names):
        if closing:
            continue
        end = next((j for j in range(i + 1, len(names)) if names[j][1] and names[j][2] == name), None)
        if end is not None:
            keep |= {at, names[end][0]}
    return "".join("&lt;" if c == "<" and k not in keep else c for k, c in enumerate(text))


def has_markup(text: str) -> bool:
    """Whether any "<" of ``text`` opens markup (:func:`opens_markup`)."""
    if "<" not in text:
        return False
    reading = Reading(text)
    return any(opens_markup(text, m.start(), reading) for m in re.finditer("<", text))


__all__ = ["ELEMENTS", "Reading", "could_act", "has_markup", "literal_less_than", "math_spans", "opens_markup"]
