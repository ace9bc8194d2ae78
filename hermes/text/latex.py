"""Readable Unicode from the LaTeX in feed titles and abstracts, for a person to read.

arXiv titles carry ``$\\mathcal{O}(n^2)$ attention``, ``$k$-means``, ``\\emph{et al.}``; a
person reads "𝒪(n²) attention", "k-means", "et al.". :func:`readable` converts only the
LaTeX it finds (math between dollars, ``\\(…\\)``, ``\\[…\\]``, and commands pylatexenc
knows, with their braced arguments) and leaves every other character as the feed wrote it:
outside math, ``%`` is a per cent sign. TeX's text dashes are read as TeX reads them
("mean--field" is "mean–field", "---" an em dash) where they join words (:func:`text_dashes`).

It is called where text is shown to people: web pages, the Atom feed, the terminal, the
sentences hermes writes (a reason quotes a title readably, on every face: cut to 60
characters as written it was neither LaTeX nor text), and the exports their readers take
as plain text (RIS, CSL-JSON, Markdown, vault notes). What is stored, the items' own fields
in MCP answers, JSON lines and BibTeX keep the LaTeX: agents and LaTeX read it fine, and a
conversion cannot be undone.

A ``$…$`` is math by pandoc's rule, so that prices stay prices: the opening ``$`` has a
non-space on its right, the closing one a non-space on its left and no digit after it
("$5 and $10", "$20,000 to $30,000" are not math); and, for news text, no number after a
space either ("US$ 20") and no two words in a row between ("$5 each, or US$ 20"). Math
that is clearly math passes those spacing and digit rules: a command ("$\\nu= 1/2 $",
"$\\sim$10"), a relation alone ("$<$ 5 K"), or a script or "=" not after a leading number
(a price starts with one).
Anything pylatexenc cannot parse strictly, or a command it does not know (``C:\\Users``),
stays as written; math that holds one (``$\\XQM(\\sqrt{5})$``) stays whole, never a mix of
converted commands between dollars (the exports read it with the macro as its name:
:func:`readable`'s ``names``). Accents are combining marks ("G̃₂"), never dropped.

The accented letters of text (``K\\"ahler``, ``Erd\\H{o}s``, ``Fran\\c cois``, ``{\\ss}``) are
read by hermes itself, before the rest (:func:`read_accents`), in every form authors write
them, and the keyphrase tagger reads them the same way: a topic is spelled as the title is
shown ("Kähler manifold").
"""

from __future__ import annotations

import logging
import re
import unicodedata
from functools import lru_cache

#: where LaTeX may start: display math, inline math, \( \[, a command, an escape, {\em …}
_START = re.compile(r"\$\$|\$|\\[(\[]|\\[a-zA-Z]+\*?|\\[^a-zA-Z\s]|\{\\[a-zA-Z]+")
#: a command's name: ``\\emph`` → ``emph`` (every reader of LaTeX in hermes uses this one)
COMMAND = re.compile(r"\\([a-zA-Z]+)")
_ACCENT = re.compile(r"[\"'`^~=.](?:[a-zA-Z]|\{[a-zA-Z]?\})")
_ESCAPED = set("%&$#_{} ")
#: The text font switches ("{\\em Mixture}"), as LaTeX typesets them in text (the BibTeX
#: export passes them on). pylatexenc drops them, rightly (they print nothing), but its
#: tables do not list them, so they are named here to tell them from a path's "\\Users".
FONT_SWITCHES = frozenset(
    {
        "em",
        "it",
        "bf",
        "sl",
        "sc",
        "rm",
        "tt",
        "sf",
        "itshape",
        "bfseries",
        "scshape",
        "upshape",
        "slshape",
        "ttfamily",
        "rmfamily",
        "sffamily",
        "mdseries",
        "normalfont",
    }
)
#: the switches read as such: the text ones and math's old-style ``{\\cal O}`` (only math
#: mode typesets it, so the export does not pass it on in text)
_SWITCHES = FONT_SWITCHES | {"cal"}
# In a summary that is HTML, "&" and "<tag …>" inside math are entities and markup: left as
# is. A "<" with no ">" after it is a relation ("$0<p\\le 1$"), read as math.
_MARKUP = re.compile(r"&|<[a-zA-Z/!][^<>]*>")
#: a script's mark (not an escaped "\\_"), and an unbraced script: \\prime, \\ast or a character
_SCRIPT_MARK = re.compile(r"(?<!\\)[\^_]")
_ONE_SCRIPT = re.compile(r"\\(?:prime|ast)(?![a-zA-Z])|[a-zA-Z0-9+\-=()*]")
#: how a script's \\prime and \\ast read: U+2032 PRIME and a plain star ("C*-algebra" is
#: how mathematicians write it as text; Unicode has no raised asterisk)
_SCRIPT_SYMBOLS = {"\\prime": "′", "\\ast": "*"}
_NUMBER_AFTER = re.compile(r"\s?\d")
_COMMAND_WITH_ARGUMENT = re.compile(r"\\[a-zA-Z]+(\{[^{}]*\})?")
_WORDS = re.compile(r"[A-Za-z]{2,}[,.;:]?\s+[A-Za-z]{2,}")
_PERCENT = re.compile(r"(?<!\\)%")
_COMMAND_END = re.compile(r"\\[a-zA-Z]+$")
#: a control word, spaces, and then not a brace or script: TeX eats those spaces and sets
#: its own math spacing; as text they are kept ("\\alpha \\approx 0.076" read "α≈ 0.076"),
#: unless the command takes what follows as its argument (:func:`_control_space`); before
#: a group too: "\\mathbb{Z}^2 \\rtimes {\\rm SL}(2)" read "ℤ² ⋊SL(2)", the operator's space lost
_SPACE_AFTER_COMMAND = re.compile(r"\\([a-zA-Z]+)\s+(?=[^\s{^_]|\{(?!\}))")
#: a price's signs are absent from math that is clearly math: a command, or (after no
#: leading number: "$5 = $10") a script or an equals sign
_COMMAND_SIGN = re.compile(r"\\[a-zA-Z]")
_SCRIPT_SIGN = re.compile(r"[\^_=]")
#: a relation or operator alone between dollars, as arXiv abstracts write "$<$ 5 K": no
#: price is one (it was taken for "US$ 5"'s dollar and shown "$<$ 5")
_RELATION_ONLY = re.compile(r"[<>=+\-*/|~\u00b1\u00d7\u2212\u223c\u2248\u2264\u2265]+")
#: the blackboard letters arXiv authors define as their own one-letter macros ("$\\Q(\\sqrt5)$",
#: "$\\R^n$"): their meaning is conventional, so they are read rather than the span kept raw
_BLACKBOARD = re.compile(r"(?<!\\)\\([QRZNC])(?![a-zA-Z])")
#: math accents, each drawn as a combining mark on every character of a short argument
_ACCENTS = {
    "hat": "\u0302",
    "widehat": "\u0302",
    "tilde": "\u0303",
    "widetilde": "\u0303",
    "bar": "\u0304",
    "overline": "\u0305",
    "underline": "\u0332",
    "vec": "\u20d7",
    "dot": "\u0307",
    "ddot": "\u0308",
    "check": "\u030c",
    "breve": "\u0306",
    "acute": "\u0301",
    "grave": "\u0300",
}
#: the longest argument an accent is drawn over, letter by letter; past it (an accent over a
#: formula) Unicode has no way to draw it and the span is kept as written
MAX_ACCENTED = 3
#: standard LaTeX and amsmath that pylatexenc's tables lack, so a span holding one was kept
#: as written: a relation, and the sizes and styles that print nothing in text
_STANDARD = {
    "ne": "≠",
    "colon": ":",
    "det": "det",
    "thinspace": " ",
    **dict.fromkeys(
        [
            "left",
            "right",
            "big",
            "Big",
            "bigg",
            "Bigg",
            "bigl",
            "bigr",
            "Bigl",
            "Bigr",
            "biggl",
            "biggr",
            "Biggl",
            "Biggr",
            "displaystyle",
            "textstyle",
            "scriptstyle",
            "limits",
            "nolimits",
        ],
        "",
    ),
}
#: the empty delimiter of \\left. or \\right.: it prints nothing, and its "." would be shown
_EMPTY_DELIMITER = re.compile(r"\\(?:left|right|[bB]igg?[lr]?)\s*\.")
#: amsmath's and the bm package's bold, read as pylatexenc reads \\mathbf ("𝐱")
_BOLD = re.compile(r"\\(?:bm|boldsymbol)(?![a-zA-Z])")
#: LaTeX 2.09's font switches in math, "{\\rm c}" (cond-mat's "$T_{\\rm c}$"), as the
#: commands LaTeX2e has for them (:func:`math_fonts`)
_OLD_FONT = re.compile(r"(?<!\\)\{\\(rm|bf|it|sf|tt|cal)(?![a-zA-Z])\s*")
#: a script's upright letters, "_{\\mathrm{max}}": Unicode's raised and lowered letters are
#: upright already, so they are read as the letters ("Tₘₐₓ", not "T_(max)")
_UPRIGHT = re.compile(r"\\(?:mathrm|text|textrm)\{([^{}]*)\}")
MAX_MATH = 400
#: LaTeX's accents of text, as the combining mark each puts on its letter ("\\c{c}" is ç)
TEXT_ACCENTS = {
    '"': "\u0308",
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "c": "\u0327",
    "v": "\u030c",
    "u": "\u0306",
    "H": "\u030b",
    "k": "\u0328",
    "r": "\u030a",
    "d": "\u0323",
    "b": "\u0331",
}
#: the letters of other alphabets LaTeX writes as commands ("\\ss" is ß)
TEXT_LETTERS = {
    "ss": "ß",
    "o": "ø",
    "O": "Ø",
    "aa": "å",
    "AA": "Å",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "j": "ȷ",
}
#: An accented letter of text as LaTeX writes it, in each of the forms arXiv's authors use:
#: ``\\"o``, ``\\"{o}``, ``\\H{o}``, ``\\H o``, ``\\c{c}``, ``\\"\\i``, ``\\^{\\i}`` (the
#: dotless i under an accent is LaTeX's i), and a letter command (``\\ss``, ``\\o`` …, with an
#: optional ``{}``). Spaces after a letter command are TeX's and not shown ("Stra\\ss e" is
#: Straße), except after ``\\AA``, which abstracts write as the unit with a space before the
#: next word ("70 \\AA which", arXiv 0704.1793). A doubled backslash is a line break, not
#: an accent; and no space may follow ``\\"`` or ``\\'`` (as TeX allows): in a feed's
#: text ``\\" and`` is an escaped quote more often than "änd". (The pattern starts with its
#: backslash, and :func:`accented_letters` looks for the braces around it: a pattern that
#: began with an optional brace was tried at every character, 150 times slower.)
TEXT_ACCENT = re.compile(
    r"""\\(?<!\\\\)(?:
        (["'`^~=.])(?:([a-zA-Z])|\{\s*([a-zA-Z])\s*\}|\\([ij])(?![a-zA-Z])\s*|\{\\([ij])\})
      | ([cvuHkrdb])(?:\s+([a-zA-Z])|\{\s*([a-zA-Z])\s*\}|\s*\\([ij])(?![a-zA-Z])\s*|\{\\([ij])\})
      | (AA(?![a-zA-Z])|(?:ss|o|O|aa|ae|AE|oe|OE|l|L|i|j)(?![a-zA-Z])(?:\s+(?=[a-zA-Z]))?)(?:\{\})?
    )""",
    re.VERBOSE,
)


def _letter(match: re.Match) -> str:
    """The Unicode (NFC) of one :data:`TEXT_ACCENT` match: "ö", "ç", "ï", "ß"."""
    groups = match.groups()
    if groups[10]:
        return TEXT_LETTERS[groups[10].rstrip()]
    accent = groups[0] or groups[5]
    letter = next(g for g in groups[1:5] + groups[6:10] if g)
    return unicodedata.normalize("NFC", letter + TEXT_ACCENTS[accent])


def accented_letters(text: str) -> list[tuple[int, int, str]]:
    """Where ``text`` writes an accented letter of text as LaTeX (:data:`TEXT_ACCENT`) and
    the letter, as ``(start, end, "ö")``; a letter braced on its own, as BibTeX-minded
    authors write it (``Schr{\\"o}dinger``, ``Erd{\\H o}s``, ``Ma{\\ss}e``), spans its braces:
    they keep BibTeX's case, and are not shown."""
    found = []
    for match in TEXT_ACCENT.finditer(text):
        start, end = match.span()
        if text.startswith("}", end) and text[start - 1 : start] == "{" and text[start - 2 : start - 1] != "\\":
            start, end = start - 1, end + 1
        found.append((start, end, _letter(match)))
    return found


def read_accents(text: str) -> str:
    """``text`` with its accented letters of text (:func:`accented_letters`) as Unicode:
    what :func:`readable` shows and the keyphrase tagger reads ("K\\"ahler" is Kähler)."""
    if "\\" not in text:
        return text
    out, done = [], 0
    for start, end, letter in accented_letters(text):
        out += [text[done:start], letter]
        done = end
    return "".join(out) + text[done:]


def readable(text: str | None, *, names: bool = False) -> str:
    """``text`` with its LaTeX as readable Unicode; text without ``\\`` or ``$`` is returned
    as it is, and any failure returns ``text`` unchanged (a page never breaks on a title).

    With ``names``, math holding a command hermes does not know (an author's own macro,
    arXiv 0704.1815's ``$\\Delta <\\sqrt{\\tk D}$``) reads with that command as its name,
    "Δ <√(tk D)", instead of staying whole as written: what the exports give whose readers
    take the text as plain text (RIS, CSL-JSON) or typeset it (a BibTeX span that cannot
    pass as math). There a span kept as written next to spans read ("$\\Delta <\\tk$ … Δ =
    0") showed TeX source beside Unicode; a page keeps it whole, where a reader sees it as
    the feed wrote it."""
    if not text or ("\\" not in text and "$" not in text):
        return text_dashes(text) if text and "--" in text else text or ""
    try:
        return _converted(read_accents(text), names)
    except Exception:  # noqa: BLE001 - pylatexenc is third-party code fed third-party text
        return text


@lru_cache(maxsize=4096)
def _converted(text: str, names: bool = False) -> str:
    # Cached: a page shows a summary twice (preview and full), and pages are reloaded.
    out, done = [], 0
    # A search from where the last span ended, not one pass of finditer: in "M$_*$$\\sim$2"
    # that pass had found "$$" at the first span's end, and the next span lost its opening.
    while start := _START.search(text, done):
        span = _span(text, start, names)
        if span is None:  # not LaTeX ("C:\\Users"): what follows its first token is read afresh
            out.append(text_dashes(text, done, start.end()))
            done = start.end()
        else:
            out += [text_dashes(text, done, start.start()), span[1]]
            done = span[0]
    return "".join(out) + text_dashes(text, done)


#: TeX's dashes in text: "--" an en dash ("mean--field", "Blume--Emery--Griffiths",
#: "133--154"), "---" an em dash; only between a word's characters (or a closing bracket
#: or math's "$" and a word), so "--verbose", "<!--", "-->", a rule of hyphens and the
#: " -- " news text writes for a dash stay as written
_TEXT_DASH = re.compile(r"(?<=[^\W_]|[)\]}$])(-{2,3})(?=[^\W_]|[($\\{])")
_DASHES = {"--": "\u2013", "---": "\u2014"}
_TOKEN_END = re.compile(r"\s|$")


def text_dashes(text: str, start: int = 0, end: int | None = None) -> str:
    """``text[start:end]``, text outside LaTeX spans, with TeX's dashes (:data:`_TEXT_DASH`)
    as Unicode's; the characters either side of the slice count as its context."""
    end = len(text) if end is None else end
    piece = text[start:end]
    if "--" not in piece:
        return piece
    out, done = [], start
    for dash in _TEXT_DASH.finditer(text, start):
        if dash.start() >= end or dash.end() > end:
            break
        if _address_or_code(text, dash.start()):
            continue
        out += [text[done : dash.start()], _DASHES[dash.group(1)]]
        done = dash.end()
    return "".join(out) + text[done:end]


def _address_or_code(text: str, at: int) -> bool:
    """Whether ``at`` lies in an address ("https://x.org/a--b", "www.a--b.org") or in code
    between backticks, where hyphens stay hyphens."""
    word = text[max(text.rfind(c, 0, at) for c in " \t\n") + 1 : _TOKEN_END.search(text, at).start()]
    return "://" in word or word.startswith("www.") or text.count("`", 0, at) % 2 == 1


def _span(text: str, start: re.Match, names: bool = False) -> tuple[int, str] | None:
    """The end of the LaTeX that begins at ``start`` and how it reads, or None when it is
    not LaTeX. Math hermes cannot read is kept whole, as written: its commands converted
    one by one read "$\\Q(√(5))$", neither LaTeX nor text."""
    if start.group() == "$":
        found = dollar_span(text, start.start())
        if found is None:
            return None
        end, math = found
        if not math:
            return end, text[start.start() : end]
    else:
        end = _span_end(text, start)
        if end is None:
            return None
    piece = _piece(text[start.start() : end], names)
    if piece is None:
        return (end, text[start.start() : end]) if _is_math(start.group()) else None
    return end, piece


def _span_end(text: str, start: re.Match) -> int | None:
    """Where the LaTeX that begins at ``start`` ends, or None when it is not LaTeX."""
    token, at = start.group(), start.end()
    if token == "$$":
        close = text.find("$$", at)
        return close + 2 if 0 < close - at <= MAX_MATH else None
    if token in ("\\(", "\\["):
        close = text.find("\\)" if token == "\\(" else "\\]", at)
        return close + 2 if 0 < close - at <= MAX_MATH else None
    if token.startswith("{"):
        return group_end(text, start.start())
    if token[1].isalpha():
        while at < len(text) and text[at] == "{":  # the command's braced arguments
            at = group_end(text, at)
            if at is None:
                return None
        return at
    if token[1] in _ESCAPED:
        return at
    accent = _ACCENT.match(text, start.start() + 1)
    return accent.end() if accent else None


def dollar_span(text: str, opening: int) -> tuple[int, bool] | None:
    """Where the dollars opened at ``opening`` end, and True when they hold math
    (:func:`inline_math_end`), False when they are refused as math but kept whole
    (:func:`_refused_math_end`): the reading here and the BibTeX export's tell math alike.
    None for a dollar that opens nothing (a price's): what follows it is read afresh."""
    end = inline_math_end(text, opening)
    if end is not None:
        return end, True
    refused = _refused_math_end(text, opening)
    return None if refused is None else (refused, False)


def inline_math_end(text: str, opening: int) -> int | None:
    """The end of inline math opened at ``opening``, else None (a price): pandoc's rule,
    plus two that news text needs ("$5 each, or US$ 20"): a closing ``$`` has no number
    after it even past a space (it is a currency's, "US$ 20"), and what lies between is
    not prose (:func:`_prose`). Math that is clearly math (:func:`_clearly_math`) passes
    with a price's signs: authors write "$\\nu= 1/2 $" and "$\\sim$10"."""
    close = _closing(text, opening)
    if close is None or _prose(text[opening + 1 : close]):
        return None
    if _priced(text, opening, close) and not _clearly_math(text, opening, close):
        return None
    return close + 1


def _closing(text: str, opening: int) -> int | None:
    """The dollar that would close inline math opened at ``opening``: the next one not
    escaped, before a blank line and within :data:`MAX_MATH`; None if there is none."""
    if opening > 0 and text[opening - 1] == "\\":
        return None
    first = opening + 1
    if first >= len(text) or text[first] == "$":
        return None
    close = first
    while True:
        close = text.find("$", close + 1)
        if close < 0 or close - first > MAX_MATH or "\n\n" in text[first:close]:
            return None
        if text[close - 1] != "\\":
            return close


def _refused_math_end(text: str, opening: int) -> int | None:
    """The end of dollars refused as math that hold neither a price nor prose, else None.
    A price's span starts with its number ("$5 and $10"); any other ("$ v$") is the
    author's math, kept whole: its commands converted one by one between dollars read
    "$ν= 1/2 $", and its closing dollar taken for an opening one paired the next span wrong."""
    close = _closing(text, opening)
    between = "" if close is None else text[opening + 1 : close]
    if close is None or between.lstrip()[:1].isdigit() or _prose(between):
        return None  # no pair, a price, or prose between two dollars: read on as text
    return close + 1


def _priced(text: str, opening: int, close: int) -> bool:
    """Pandoc's signs of a currency's dollars: a space inside either, a number after the
    closing one, even past a space ("$5 and $10", "US$ 20")."""
    return text[opening + 1].isspace() or text[close - 1].isspace() or _NUMBER_AFTER.match(text, close + 1) is not None


def _clearly_math(text: str, opening: int, close: int) -> bool:
    """Whether dollars with a price's signs hold math all the same: "$\\nu= 1/2 $",
    "$\\sim$10", "Im$ \\mu$", "$<$ 5 K". A price holds no command and is no relation alone,
    so those are math; a script or "=" is, after no leading number (a price's: "$5 = $10"),
    unless a dollar with a space inside has a word touching it outside: that dollar is the
    word's ("$A_B $C")."""
    body = text[opening + 1 : close].strip()
    if _COMMAND_SIGN.search(body) or _RELATION_ONLY.fullmatch(body):
        return True
    touching = (text[opening + 1].isspace() and opening > 0 and text[opening - 1].isalnum()) or (
        text[close - 1].isspace() and text[close + 1 : close + 2].isalnum()
    )
    return bool(body) and not body[0].isdigit() and not touching and bool(_SCRIPT_SIGN.search(body))


def _prose(between: str) -> bool:
    """Two words in a row once commands and their arguments are gone: prose, not math.
    A command parts the words it stands between: "$nm \\times nm$" is math."""
    return bool(_WORDS.search(_COMMAND_WITH_ARGUMENT.sub(" | ", between)))


def group_end(text: str, opening: int, limit: int | None = MAX_MATH) -> int | None:
    """The end of the balanced ``{…}`` opened at ``opening`` (an escaped brace does not
    count, as in LaTeX), or None when it does not close within ``limit`` characters."""
    depth, at = 0, opening
    stop = len(text) if limit is None else min(len(text), opening + limit)
    while at < stop:
        char = text[at]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 2 if char == "\\" else 1  # an escaped brace does not count
    return None


@lru_cache(maxsize=1)
def _library():
    """pylatexenc's converter, its table of known macros, and its parser."""
    # pylatexenc loads only when a text holds LaTeX: the CLI and `hermes serve`, which load
    # the digest plugin's terminal rendering, do not pay its import on every start.
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
    from pylatexenc.latexwalker import LatexWalker
    from pylatexenc.latexwalker import get_default_latex_context_db as parsing_db

    # pylatexenc logs a warning for every macro it cannot fill in; a bad title is not news.
    logging.getLogger("pylatexenc").setLevel(logging.ERROR)
    known = get_default_latex_context_db()  # a fresh table: pylatexenc's own is not changed
    # hermes's readings before pylatexenc's: it drops the wide accents (\widetilde{AB} read
    # "AB") and a root's index (\sqrt[3]{2} read "√(2)"), which change the maths
    known.add_context_category(
        "hermes",
        prepend=True,
        macros=[
            *(MacroTextSpec(name, _accent) for name in _ACCENTS),
            MacroTextSpec("sqrt", _root),
            *(MacroTextSpec(name, text) for name, text in _STANDARD.items()),
        ],
    )
    return LatexNodes2Text(latex_context=known, math_mode="text"), known, LatexWalker, parsing_db()


def spelled_out(text: str) -> str | None:
    """The words the LaTeX of a feed's text is indexed under, for the Unicode a person reads
    and types: "ΛCDM" → "Lambda CDM", "ℓ₁" → "ell 1" (the faces show ``$\\Lambda$CDM`` as
    "ΛCDM", and a search for what is shown found nothing); ``None`` when ``text`` has no
    symbol LaTeX writes as a command. Accented letters are left to the full-text index,
    which folds them."""
    if text.isascii():
        return None
    # pylatexenc loads only for a search with such a symbol
    from pylatexenc.latexencode import unicode_to_latex

    scripts = "".join(
        unicodedata.normalize("NFKC", c)
        if "SCRIPT" in unicodedata.name(c, "") and unicodedata.normalize("NFKC", c).isdigit()
        else c
        for c in text
    )
    latex = unicode_to_latex(scripts, non_ascii_only=True)
    if "\\ensuremath" not in latex:
        return None
    words = COMMAND.sub(r" \1 ", latex.replace("\\ensuremath", ""))
    return " ".join(re.sub(r"[^\w\s]|_", " ", words).split()) or None


#: the tables of pylatexenc's that hold standard LaTeX's symbols, letters, accents and math
#: fonts; its others guess at document commands (\includegraphics, \footnote, \url), and
#: a command in none of them is never passed on
_PASSED_ON_TABLES = ("latex-base", "advanced-symbols")
#: of pylatexenc's guesses, the standard text and math commands arXiv's titles use
_PASSED_ON_TOO = frozenset(
    {
        "emph",
        "textrm",
        "textit",
        "textbf",
        "textsc",
        "textsl",
        "text",
        "frac",
        "overline",
        "underline",
        "widehat",
        "widetilde",
        "overbrace",
        "underbrace",
        "overrightarrow",
        "overleftarrow",
    }
)
#: of the standard tables, what reads a file, prints the day of compiling, or needs hyperref
_NOT_PASSED_ON = frozenset({"input", "include", "today", "texorpdfstring"})
#: TeX reads "^^5c" as a backslash ("^^5cinput" is \input) and "^^69" as an "i": a
#: character written by its code is never the feed's maths
_CHARACTER_CODE = "^^"


@lru_cache(maxsize=1)
def _passed_on() -> frozenset[str]:
    known = _library()[1]
    names = {spec.macroname for spec in known.iter_macro_specs(list(_PASSED_ON_TABLES))}
    # _STANDARD's commands are LaTeX's own too (\ne, \left, \displaystyle …): pylatexenc's
    # tables lack them, and math holding one was read into Unicode instead of passed on
    return frozenset((names | _PASSED_ON_TOO | set(_STANDARD)) - _NOT_PASSED_ON)


def harmless(latex: str) -> bool:
    """Whether LaTeX from a feed may be passed on to be typeset as it is (a BibTeX export):
    every command in it is one of standard LaTeX's symbols, letters, accents, fonts or
    math commands (``\\mathcal``, ``\\alpha``, ``\\frac``), and no character is written by
    its code. A title's ``$\\input{/etc/passwd}$``, ``$^^5cinput{…}$``,
    ``$\\includegraphics{…}$`` or ``$\\def…$`` is the feed's author's code, not math."""
    if _CHARACTER_CODE in latex:
        return False
    allowed = _passed_on()
    return all(name in allowed for name in COMMAND.findall(latex))


class _Unreadable(Exception):
    """Raised from a reading of a macro Unicode cannot draw: its span is kept as written."""


def _is_math(latex: str) -> bool:
    return latex.startswith(("$", "\\(", "\\["))


def own_macros(latex: str) -> frozenset[str]:
    """The commands of ``latex`` that neither pylatexenc nor hermes reads: an author's own
    macros ("\\tk", arXiv 0704.1815's Kondo temperature), or no LaTeX at all ("C:\\Users").
    Math's conventional ones (:func:`_standardised`: "\\Q", "\\bm", "{\\rm c}") are read."""
    known = _library()[1]
    commands = COMMAND.findall(_standardised(latex) if _is_math(latex) else latex)
    return frozenset(name for name in commands if name not in _SWITCHES and known.get_macro_spec(name) is None)


def _piece(latex: str, names: bool = False) -> str | None:
    """The readable text of one LaTeX span, or None to keep the span as written; with
    ``names``, math's unknown commands read as their names (:func:`readable`)."""
    to_text, _, walker, _ = _library()
    math = _is_math(latex)
    unknown = own_macros(latex)
    if math:
        latex = _standardised(latex)
    if unknown and math and names:
        # outside math an unknown command may be no LaTeX at all ("C:\\Users"): left to the rule below
        latex = COMMAND.sub(lambda c: c[1] if c[1] in unknown else c[0], latex)
    elif unknown:
        return None  # not LaTeX hermes can read, or not LaTeX at all (a Windows path)
    if math and _MARKUP.search(latex):
        return None
    if math:
        # "--" in math is two minus signs, no dash: pylatexenc's text ligature is kept off
        latex = _with_scripts(latex).replace("--", "-{}-")
        # the norm's double bar, which pylatexenc drops ("\\|W\\|_1" read "W₁"), and the
        # spaces after a command as TeX's control space (pylatexenc drops plain ones in math)
        latex = _SPACE_AFTER_COMMAND.sub(_control_space, latex.replace("\\|", "‖"))
    # A feed's text is not a TeX file: a bare "%" ("$\approx 75 %$") is a per cent sign,
    # not a comment that would swallow the rest.
    latex = _PERCENT.sub(r"\\%", latex)
    try:
        text = to_text.nodelist_to_text(walker(latex, tolerant_parsing=False).get_latex_nodes()[0])
    except _Unreadable:
        return None
    return text.strip() if math else text


def math_fonts(math: str) -> str:
    """``math`` with LaTeX 2.09's font switches as LaTeX2e's commands: "{\\rm c}" as
    "{\\mathrm{c}}", which pylatexenc reads and every document class typesets (KOMA-Script's
    refuse "\\rm"); the BibTeX export passes them on so, and a page reads them."""
    if "{\\" not in math:
        return math
    out, done = [], 0
    for found in _OLD_FONT.finditer(math):
        if found.start() < done or (end := group_end(math, found.start())) is None:
            continue
        inner = math_fonts(math[found.end() : end - 1]).strip()
        if inner.startswith("{") and group_end(inner, 0) == len(inner):  # "{\\rm{B}}", as authors write it too
            inner = inner[1:-1]
        # its group kept: "T_{\\rm c}"'s script is the group
        out += [math[done : found.start()], rf"{{\math{found[1]}{{{inner}}}}}"]
        done = end
    return "".join(out) + math[done:]


def _standardised(math: str) -> str:
    """Math with the conventional macros hermes reads spelled as pylatexenc knows them: the
    blackboard letters authors define (\\Q as \\mathbb{Q}), the bold of \\bm and
    \\boldsymbol, LaTeX2e's font commands (:func:`math_fonts`), and no empty delimiter."""
    math = _BLACKBOARD.sub(r"\\mathbb{\1}", math_fonts(math))
    return _EMPTY_DELIMITER.sub("", _BOLD.sub(r"\\mathbf", math))


def _control_space(match: re.Match) -> str:
    """A command and the spaces after it, as the command and TeX's control space; but a
    command that takes an argument keeps its plain space, which TeX skips to reach it:
    "\\tilde G" is G with a tilde (as "\\tilde\\ G" the tilde fell on the space, and G lost it)."""
    spec = _library()[3].get_macro_spec(match.group(1))
    if spec is not None and spec.args_parser.argspec:
        return match.group()
    return f"\\{match.group(1)}\\ "


def _accent(node, l2tobj, macroname: str) -> str:
    """A math accent as its combining mark on each character of a short argument ("G̃",
    "A̅B̅"); over a longer one (a formula) Unicode cannot draw it, and pylatexenc's reading
    (the wide ones dropped, the narrow ones on every character) would change the maths."""
    args = node.nodeargd.argnlist if node.nodeargd else []
    body = l2tobj.nodelist_to_text(args[-1:]).strip() if args and args[-1] else ""
    letters = _clusters(body)
    if not letters or len(letters) > MAX_ACCENTED or any(c.isspace() for c in body):
        raise _Unreadable(macroname)
    return unicodedata.normalize("NFC", "".join(c + _ACCENTS[macroname] for c in letters))


def _root(node, l2tobj) -> str:
    """``\\sqrt{5}`` as √5 (pylatexenc's √(5) brackets even one symbol), ``\\sqrt{n+1}`` as
    √(n+1), and a cube or fourth root as ∛ or ∜; any other index, which pylatexenc drops,
    has no Unicode sign, so that span is kept as written."""
    index, radicand = (l2tobj.nodelist_to_text([arg]).strip() if arg else "" for arg in node.nodeargd.argnlist[-2:])
    sign = {"": "√", "3": "∛", "4": "∜"}.get(index)
    if sign is None or not radicand:
        raise _Unreadable("sqrt")
    return sign + (radicand if radicand.isdigit() or len(_clusters(radicand)) == 1 else f"({radicand})")


def _clusters(text: str) -> list[str]:
    """``text``'s characters, each with the combining marks that follow it ("x̃" is one)."""
    out: list[str] = []
    for char in text:
        if out and unicodedata.combining(char):
            out[-1] += char
        else:
            out.append(char)
    return out


def _with_scripts(latex: str) -> str:
    """``latex`` with each base's scripts as :func:`_scripted` writes them. A scan, not a
    pattern: a braced script may hold braces ("e^{\\frac{i}{\\epsilon}S}"), and a base may
    have a sub- and a superscript, in either order ("B_d^0")."""
    out, done = [], 0
    for mark in _SCRIPT_MARK.finditer(latex):
        if mark.start() < done:
            continue
        first = _script_end(latex, mark.end())
        if first is None:
            continue
        scripts, end = [(mark.group(), latex[mark.end() : first])], first
        other = "_" if mark.group() == "^" else "^"
        if latex.startswith(other, first) and (second := _script_end(latex, first + 1)):
            scripts.append((other, latex[first + 1 : second]))
            end = second
        out += [latex[done : mark.start()], _scripted(scripts, latex[: mark.start()])]
        done = end
    return "".join(out) + latex[done:]


def _script_end(latex: str, at: int) -> int | None:
    """The end of the script that starts at ``at``: a balanced group, or one token."""
    if latex.startswith("{", at):
        return group_end(latex, at)
    token = _ONE_SCRIPT.match(latex, at)
    return token.end() if token else None


def _scripted(scripts: list[tuple[str, str]], before: str) -> str:
    """A base's scripts as Unicode: ``^2`` as ², ``_{ij}`` as ᵢⱼ, ``^{(\\prime)}`` as ⁽′⁾. A
    script Unicode cannot raise or lower whole stays as LaTeX writes it (:func:`_script`)
    and comes after one it can: "B_d^0" reads "B⁰_d", as physicists write it too ("B_d⁰"
    read as B with the subscript d⁰)."""
    shown = sorted(
        (_script(mark, written) for mark, written in scripts), key=lambda script: not script[1]
    )  # stable: the Unicode one first
    text = "".join(written for written, _ in shown)
    # after a command ("\\sum_{i}") an empty group ends its name: "\\sumᵢ" would be one
    # unknown command, and dropped
    return "{}" + text if shown[0][1] and _COMMAND_END.search(before) else text


def _script(mark: str, written: str) -> tuple[str, bool]:
    """One script as Unicode and True, else as LaTeX pylatexenc shows as written and False:
    ``_d`` as it is, and ``^(…)`` around a longer script, so "10^{-3a}" reads 10^(-3a),
    not 10^-3a."""
    braced = written.startswith("{")
    body = _UPRIGHT.sub(r"\1", written[1:-1] if braced else written)
    if not body:
        return mark + written, False
    for command, symbol in _SCRIPT_SYMBOLS.items():
        body = re.sub(re.escape(command) + r"(?![a-zA-Z])", symbol, body)
    chars = _forms(raised=mark == "^")
    if all(c in chars for c in body):
        return "".join(chars[c] for c in body), True
    if braced and len(body) > 1:
        return f"{mark}({{{body}}})", False
    # one character unbraced: pylatexenc drops the space after a group ("B_{d} \\to" read "B_d→")
    return mark + body, False


@lru_cache(maxsize=2)
def _forms(raised: bool) -> dict[str, str]:
    """Each ASCII character's raised (or lowered) form where Unicode has one, found by its
    Unicode name ("SUPERSCRIPT TWO", "LATIN SUBSCRIPT SMALL LETTER I")."""
    found = {}
    for char in "0123456789+-=()abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ":
        if char.isalpha():
            case = "SMALL" if char.islower() else "CAPITAL"
            names = (
                [f"SUPERSCRIPT LATIN {case} LETTER {char.upper()}", f"MODIFIER LETTER {case} {char.upper()}"]
                if raised
                else [f"LATIN SUBSCRIPT {case} LETTER {char.upper()}"]
            )
        else:
            name = "MINUS" if char == "-" else unicodedata.name(char).removeprefix("DIGIT ")
            names = [f"{'SUPERSCRIPT' if raised else 'SUBSCRIPT'} {name}"]
        for name in names:
            try:
                found[char] = unicodedata.lookup(name)
                break
            except KeyError:
                continue
    if raised:  # a prime is raised already; Unicode has no raised star, and "C*" is usual
        found.update({"′": "′", "*": "*"})
    return found
