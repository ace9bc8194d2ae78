"""The BibTeX export: titles and abstracts for LaTeX to typeset, names as BibTeX reads them.

Nothing from a feed reaches the .bib as live TeX: math passes through only when it holds
standard LaTeX's symbols and math commands (:func:`hermes.text.latex.harmless`), an author's
own macro in it named in upright letters ("$\\mathrm{tk}$"); other math is the text it reads
as, never its TeX source beside typeset math, unless it would read a file (then it is shown
escaped, as the feed wrote it); a few text commands and accents pass, everything else is
escaped. Non-ASCII text is written as LaTeX
(pylatexenc: "{\\L}ukasz", "$\\simeq$"), so pdflatex with classic BibTeX styles compiles
it and cuts no letter in half.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import combinations
from urllib.parse import urlsplit

from hermes.text.latex import (
    COMMAND,
    FONT_SWITCHES,
    dollar_span,
    group_end,
    harmless,
    math_fonts,
    own_macros,
    readable,
)

from .fields import _date, _media_url, duration_text, media, note_text, subject_tags
from .langid import langid
from .references import person

_BIB_ESCAPES = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    # "z~2" as LaTeX prints it and Zotero reads it back: Zotero's BibTeX import knows neither
    # \textasciitilde nor \textasciicircum, and kept "z\textasciitilde2" in a title
    "~": r"\~{}",
    "^": r"\^{}",
}
# BibTeX counts braces whatever precedes them, so "\{" still opens a group: fine while the
# text's own braces balance, fatal to the whole file when one is left open. Those get the
# text commands, which carry no bare brace.
_LONE_BRACES = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}


_ESCAPE = str.maketrans(_BIB_ESCAPES)
_ESCAPE_LONE = str.maketrans({**_BIB_ESCAPES, **_LONE_BRACES})


def _balanced(text: str) -> bool:
    if "{" not in text and "}" not in text:
        return True
    depth = 0
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return False
    return depth == 0


def bib_escape(text: str) -> str:
    """Text with nothing LaTeX reads as markup, its non-ASCII characters as LaTeX."""
    return tex_unicode(text.translate(_ESCAPE if _balanced(text) else _ESCAPE_LONE))


#: what pylatexenc writes a math symbol as, in text: \ensuremath{…}, which Zotero's import
#: does not read; "$…$" it does ("$\alpha$" is α), and LaTeX typesets both alike
_ENSUREMATH = re.compile(r"\\ensuremath\{((?:[^{}]|\{[^{}]*\})*)\}")


def tex_unicode(text: str, *, math: bool = False) -> str:
    """``text`` with every non-ASCII character as LaTeX (pylatexenc): pdflatex stops on a
    raw "≃" or "α" its fonts lack, and classic BibTeX styles, which count bytes, cut the
    "Ł" of "Łukasz" in half when they abbreviate it. Each is braced ("{\\L}ukasz",
    "{\\'e}") so BibTeX takes it for one letter. Inside ``math`` a symbol is written bare."""
    # one form of "í" (a feed's "i" + U+0301 is pylatexenc's "i" and an unknown mark)
    text = unicodedata.normalize("NFC", text)
    if text.isascii():
        return text
    if not _UNTYPESET.isdisjoint(text) or not _MATH_FOR.keys().isdisjoint(text):
        text = "".join(_written(c, math) for c in text)
    latex = _SCRIPT.sub(_calligraphic, dotted(_encoder().unicode_to_latex(text)))
    return latex if math else _ENSUREMATH.sub(r"$\1$", latex)


def _written(char: str, math: bool) -> str:
    if char in _UNTYPESET:
        return _unknown_character(char)
    if char in _MATH_FOR:
        return "{" + _MATH_FOR[char] + "}" if math else "{$" + _MATH_FOR[char] + "$}"
    return char


#: pylatexenc's script letters ("ℋ", "𝒜"), \mathscr, are mathrsfs's: standard LaTeX's script
#: capitals are \mathcal's, and it has no script small letters (a math letter, as "𝐱" is)
_SCRIPT = re.compile(r"\\mathscr\{([A-Za-z])\}")


def _calligraphic(m: re.Match) -> str:
    return rf"\mathcal{{{m[1]}}}" if m[1].isupper() else m[1]


#: an accent on a dotless letter, "\\'\\i", "\\'{\\i}", "\\u{\\i}": what pylatexenc writes for "í"
_DOTLESS = re.compile(r"\\(?:([`'^\"~=.])|([uvHckdbrt])(?![a-zA-Z]))\s*(?:\\([ij])(?![a-zA-Z])\s?|\{\\([ij])\})")


def dotted(latex: str) -> str:
    """``latex`` with every accent on a dotless i or j put on the letter itself: "{\\'\\i}"
    as "{\\'i}". Classic BibTeX and LaTeX typeset both alike (T1's "\\'i" is the accented
    dotless i), but biber reads "\\'\\i" as a dotless i and a combining acute, U+0131
    U+0301, which no precomposed letter joins and pdflatex stops on ("Unicode character ́
    (U+0301)"); "\\'i" it reads as "í"."""
    if "\\i" not in latex and "\\j" not in latex:
        return latex
    return _DOTLESS.sub(lambda m: f"\\{m[1]}{m[3] or m[4]}" if m[1] else f"\\{m[2]}{{{m[3] or m[4]}}}", latex)


#: letters pylatexenc writes as LaTeX that a standard document (T1 fonts, amsmath) cannot
#: typeset from the .bib, so they are written as :func:`_unknown_character` does. Measured on
#: every letter of Latin-1, Latin Extended-A/B, IPA and Latin Extended Additional with pdflatex
#: + bibtex and pdflatex + biber 2.18 + biblatex (tests/test_export_compile.py has a line of
#: them): "ȩ" and "ƕ" as pylatexenc writes them biber reads back into the letter, which
#: LaTeX's utf8 input does not define ("Unicode character ȩ (U+0229)"); "ħ", "ŧ" and "ŀ" it
#: writes as another letter, with a macron or a dot above (\={h}, \.{l}), which biber gives as
#: h + U+0304, a pair no precomposed letter joins; "ə", "ʔ",
#: "ƞ", "ɸ", "ʞ" (tipa's \textschwa …), "ŉ" (\nument), "⅓" (\textfrac) and "♩" are commands
#: LaTeX does not know, under bibtex too.
_UNTYPESET = frozenset(
    "\u0126\u0127\u0166\u0167\u013f\u0140\u0149\u0195\u0228\u0229"
    "\u0259\u0294\u019e\u0278\u029e\u2669\u2153\u2154\u2155\u2156\u2157\u2158\u2159\u215a\u215b\u215c\u215d\u215e"
    # math symbols pylatexenc writes as commands neither LaTeX nor amssymb defines
    # (\approxnotequal, \surfintegral …): their code point, inside math too
    "\u219c\u219d\u21c5\u21f5\u221f\u222f\u2230\u2231\u223b\u223e\u2246\u224b\u224c\u2259\u225b"
    "\u2278\u2279\u22ab\u22b6\u22b7\u22b9\u22be\u22e8\u22f0\u2306\u2315\u2a0f\u2a16"
)
#: what pylatexenc writes as a math command outside math ("ɛ" as "\varepsilon", which stops
#: pdflatex in text) or as a command LaTeX lacks ("⊨" as \forcesextra): LaTeX's own, in math
_MATH_FOR = {
    "\u025b": r"\varepsilon",
    "\u03d2": r"\Upsilon",
    "\u0390": r"\acute{\ddot{\iota}}",
    # pylatexenc's "\sqrt{}" typesets an empty root: "√(tk D)" read from an author's macro
    "\u221a": r"\surd",
    "\u266d": r"\flat",
    "\u266e": r"\natural",
    "\u266f": r"\sharp",
    "\u22a7": r"\models",
    "\u22a8": r"\models",
    "\u22d8": r"\lll",
    "\u22d9": r"\ggg",
}
#: letters Unicode does not decompose to a letter and its marks, as the letter they are read
#: as: "Ħ" (Maltese) without its stroke, "Ŀ" (Catalan) without its middle dot, "ŉ" (Afrikaans,
#: deprecated) as the apostrophe and n it stands for
_PLAIN = {"\u0126": "H", "\u0127": "h", "\u0166": "T", "\u0167": "t", "\u013f": "L", "\u0140": "l", "\u0149": "'n"}


@lru_cache(maxsize=1)
def _encoder():
    # Here, not at the top: pylatexenc's tables load only for an export that needs them.
    from pylatexenc.latexencode import UnicodeToLatexEncoder

    return UnicodeToLatexEncoder(
        non_ascii_only=True,
        replacement_latex_protection="braces-all",
        unknown_char_policy=_unknown_character,
        unknown_char_warning=False,
    )


def _unknown_character(char: str) -> str:
    """A character pylatexenc has no LaTeX for: the same letter with as many of its marks
    as pylatexenc can write ("ệ" as "ê", "ả" as "a": Vietnamese's dot below and hook, like
    the math alphabets' "𝐱", need fonts a standard document lacks), else its code point,
    "[U+4E2D]", so the document compiles."""
    if char in _PLAIN:
        return _PLAIN[char]
    spelled = unicodedata.normalize("NFKD", char).replace("\u2044", "/")  # "⅓" as "1/3"
    if len(spelled) > 1 and spelled.isascii():
        return spelled
    base, *marks = unicodedata.normalize("NFKD", char)
    if not all(unicodedata.combining(m) for m in marks):
        return f"[U+{ord(char):04X}]"  # a sequence ("∯" is "∮∮"), not a letter and its marks
    for size in range(len(marks), -1, -1):
        for kept in combinations(marks, size):
            letter = unicodedata.normalize("NFC", base + "".join(kept))
            if letter != char and len(letter) == 1 and (written := _known(letter)) is not None:
                return written
    return f"[U+{ord(char):04X}]"


def _known(char: str) -> str | None:
    """pylatexenc's LaTeX for ``char``, or None when it has none."""
    if char.isascii():
        return char
    if char in _UNTYPESET:
        return None
    from pylatexenc.latexencode import UnicodeToLatexEncoder

    try:
        return UnicodeToLatexEncoder(
            replacement_latex_protection="braces-all", unknown_char_policy="fail", unknown_char_warning=False
        ).unicode_to_latex(char)
    except ValueError:
        return None


# Display math, or the dollar that may open inline math: where inline math ends, and whether
# it is math at all, is hermes.text.latex's rule (pandoc's, with a price's signs allowed in
# math that is clearly math: "$\\nu= 1/2 $", "($\\sim$1nm)"), as the other exports read it;
# an escaped "\$" is a dollar sign, never a delimiter.
MATH = re.compile(r"(?<!\\)(?:\$\$(?:[^$\\]|\\.)+?\$\$|\$)", re.S)
# Inside math only these would break the LaTeX run (a comment, an alignment tab, a macro
# parameter); their escaped forms are valid in math mode too.
_MATH_SPECIAL = re.compile(r"(?<!\\)([%&#])")
# Text commands arXiv writes in titles and abstracts, passed through with their argument
# (``\emph{In vivo}``), and the font switches that open a group (``{\em Mixture}``). Only
# these: any other command is escaped, so what reaches LaTeX is something it typesets.
_TEXT_COMMANDS = (
    "emph",
    "textit",
    "textbf",
    "textsc",
    "textsl",
    "texttt",
    "textsf",
    "textrm",
    "textup",
    "textmd",
    "textnormal",
    "underline",
    "mbox",
)
#: the font switches, longest first (hermes.text.latex's one table)
_SWITCHES = sorted(FONT_SWITCHES, key=lambda s: (-len(s), s))
_LATEX = re.compile(
    rf"(?P<math>{MATH.pattern})|\\(?:{'|'.join(_TEXT_COMMANDS)})\{{"
    rf"|(?<!\\)\{{\\(?:{'|'.join(_SWITCHES)})(?![a-zA-Z])\s?",
    re.S,
)
# Inside a command's argument a brace is LaTeX's too (``\emph{{In} vivo}``): a group, as
# hermes.text.latex reads it; outside, the feed's braces are text.
_LATEX_INNER = re.compile(rf"{_LATEX.pattern}|(?<!\\)\{{", re.S)
#: an accented or special letter: \'e, \"{o}, \c{c}, \ss, \o{}, and an accent on a dotless
#: i, \'\i or \'{\i}, as arXiv's LaTeX writes "í" (passed on as \'i: :func:`dotted`)
_ACCENT = re.compile(
    r"\\(?:['`^\"~=.](?:[a-zA-Z]|\{[a-zA-Z]\}|\\[ij](?![a-zA-Z])\s?|\{\\[ij]\})|[cvuHkrdb]\{(?:[a-zA-Z]|\\[ij])\}"
    r"|(?:ss|aa|AA|ae|AE|oe|OE|o|O|l|L|i|j)(?![a-zA-Z])(?:\{\})?)"
)
#: a LaTeX escape of a special character: \& \% \$ \# \_ \{ \}
_ESCAPED_CHAR = re.compile(r"\\([&%$#_{}])")
_LETTER = rf"(?:[^\W_]|{_ACCENT.pattern})"
#: a word for case protection: letters (accented ones too) and digits, joined by hyphens or
#: apostrophes
_WORD = re.compile(rf"{_LETTER}+(?:['\u2019-]{_LETTER}+)*")


#: commands a title's math may not be read as text for: their reading is empty or a
#: placeholder, and the feed's attempt is better shown escaped
_NOT_READ = frozenset(
    {
        "input",
        "include",
        "includeonly",
        "includegraphics",
        "url",
        "href",
        "cite",
        "ref",
        "eqref",
        "pageref",
        "label",
        "footnote",
        "write",
        "immediate",
        "openin",
        "openout",
        "read",
        "def",
        "edef",
        "gdef",
        "xdef",
        "let",
        "catcode",
        "csname",
        "special",
        "usepackage",
        "newcommand",
        "renewcommand",
    }
)


def _math_kind(math: str) -> str | None:
    """What math is: ``"math"`` to pass through (its braces balance on their own, else it
    could close the field early and break the whole file; and it is
    :func:`hermes.text.latex.harmless`), ``"read"`` for any other math, given as the text it
    reads as (:func:`_reading`), or None: math to show escaped as written."""
    # a command that reads a file or points elsewhere, or a character code, reads as nothing
    # (pylatexenc drops it): escaped as written, the reader sees what the feed tried
    if "^^" in math or any(name in _NOT_READ for name in COMMAND.findall(math)):
        return None
    return "math" if _balanced(math) and harmless(math) else "read"


def _reading(math: str) -> str | None:
    """Math that cannot pass as math, as the text it reads as, or None when it reads as no
    text (pylatexenc cannot parse it: "$\\frac{1$"), to show escaped as written: amsmath's
    "$\\boldsymbol{x}$" is "𝐱", which Zotero's import and any style print (escaped, it read
    "\\textbackslash{}boldsymbol"); a span whose braces do not balance reads without them."""
    reading = readable(math, names=True)
    return reading if reading and reading != math and "\\" not in reading else None


def _named(math: str) -> str | None:
    """Math whose only commands LaTeX may not run are an author's own macros
    (:func:`hermes.text.latex.own_macros`), with each as its name in upright letters:
    arXiv 0704.1815's "$\\Delta <\\sqrt{\\tk D}$" as "$\\Delta <\\sqrt{\\mathrm{tk} D}$",
    typeset as the abstract's "$\\Delta = 0$" is (escaped, it printed as TeX source beside
    it), and named as the RIS and CSL-JSON exports read it ("Δ <√(tk D)"). None when
    other commands still may not pass."""
    own = own_macros(math)
    if not own:
        return None
    named = COMMAND.sub(lambda c: rf"\mathrm{{{c[1]}}}" if c[1] in own else c[0], math)
    return named if _balanced(named) and harmless(named) else None


def _segments(text: str, inner: bool = False) -> list[tuple[str, str]]:
    """``(kind, piece)`` in order: "math" and "prose", and the "open" (``\\emph{``, ``{\\em``,
    a ``{`` in an argument) and "close" of a group around its own pieces. Math or a command
    whose braces do not close is prose: escaped, so the .bib stays valid."""
    out, at, scan = [], 0, 0
    while m := (_LATEX_INNER if inner else _LATEX).search(text, scan):
        scan = m.end()
        if m.group("math"):
            found = (m.end(), True) if m.group() != "$" else dollar_span(text, m.start())
            if found is None:  # a dollar sign ("$5 each, or US$ 20"): prose
                continue
            scan, math = found  # math refused as math is prose to its closing dollar, which opens nothing
            span = math_fonts(text[m.start() : scan])  # "$T_{\rm c}$" as "$T_{\mathrm{c}}$"
            kind = _math_kind(span) if math else None
            if kind == "math":
                out += [("prose", text[at : m.start()]), ("math", span)]
                at = scan
            elif kind == "read" and (named := _named(span)):
                out += [("prose", text[at : m.start()]), ("math", named)]
                at = scan
            elif kind == "read" and (reading := _reading(span)):
                # what is read is text, escaped as prose: it runs nothing either way
                out += [("prose", text[at : m.start()]), ("prose", reading)]
                at = scan
            continue
        brace = m.start() if m.group().startswith("{") else m.end() - 1
        end = group_end(text, brace, limit=None)
        if end is not None:
            out += [
                ("prose", text[at : m.start()]),
                ("open", m.group()),
                *_segments(text[m.end() : end - 1], inner=True),
                ("close", "}"),
            ]
            at = scan = end
    return [*out, ("prose", text[at:])]


def _protected(word: str, proper: bool) -> bool:
    """Whether BibTeX styles must keep ``word``'s case: capitals after its first character
    ("SAE", "LLaMA", "GPT-4"), digits with capitals ("7B"), or, in a sentence-case title,
    a capitalised word (a proper noun: "Transformer", "Bayesian")."""
    upper = [c.isupper() for c in readable(word) if c.isalnum()]  # \"Uber is judged as Über
    if any(upper[1:]) or (any(upper) and any(c.isdigit() for c in word)):
        return True
    return proper and bool(upper) and upper[0] and len(upper) > 1


def _sentence_case(words: list[str]) -> bool:
    # Title Case capitalises the content words; sentence case leaves them lower. Judged on
    # the longer words after the first, where the two conventions differ.
    content = [w for w in words[1:] if len(w) > 3 and w[0].isalpha() and w[1:].islower()]
    # Half is enough: "The Gaia mission" is sentence case, and its Gaia a proper noun.
    return bool(content) and sum(w[0].islower() for w in content) >= len(content) / 2


def _bib_text(text: str, table: dict) -> str:
    """Escape text; a LaTeX escape the feed wrote (``\\&``) is the character it stands for."""
    out, at = [], 0
    for m in _ESCAPED_CHAR.finditer(text):
        out += [text[at : m.start()].translate(table), m.group(1).translate(table)]
        at = m.end()
    return tex_unicode("".join(out) + text[at:].translate(table))


def _bib_prose(text: str, balanced: bool, protect: bool = False, proper: bool = False, lead: str = "") -> str:
    """Escape a prose piece, its accents kept; with ``protect``, brace its case-sensitive
    words (``lead``: the title before this piece, to tell a sentence's first word)."""
    table = _ESCAPE if balanced else _ESCAPE_LONE
    out, at = [], 0
    for m in _WORD.finditer(text):
        # An accent in braces ({\"o}): the form BibTeX's case changes and sorting read.
        word = tex_unicode(_ACCENT.sub(lambda a: "{" + dotted(a.group()).rstrip() + "}", m.group()))
        # Not the first word of the title or of a sentence in it: capitalised by grammar.
        prior = (lead + text[: m.start()]).rstrip()
        start = not prior or prior[-1] in ".:?!"
        guarded = protect and _protected(m.group(), proper and not start)
        out += [_bib_text(text[at : m.start()], table), "{" + word + "}" if guarded else word]
        at = m.end()
    return "".join(out) + _bib_text(text[at:], table)


def bib_tex(text: str, *, title: bool = False, guess: bool = True) -> str:
    """A title or abstract for BibTeX: math (``$\\ell_1$``, as arXiv writes it), text commands
    (``\\emph{…}``, ``{\\em …}``) and accents (``\\'e``) pass through for LaTeX to typeset;
    everything else is escaped as :func:`bib_escape` does. A title's words whose case
    matters are braced so styles that recase titles leave them alone (not with ``guess``
    False: the library said which, :func:`bib_title`); its math with capitals always is."""
    # composed first: a decomposed "í" ("i" + U+0301) is one letter of one word
    pieces = _segments(unicodedata.normalize("NFC", text))
    prose = "".join(p for kind, p in pieces if kind == "prose")
    balanced = _balanced(prose)
    proper = title and _sentence_case(_WORD.findall(prose))
    out, lead, groups = [], "", []
    for kind, piece in pieces:
        # Within the author's own braces the case is kept already: no second pair.
        protect = title and "{" not in groups
        if kind == "math":
            piece = tex_unicode(_MATH_SPECIAL.sub(r"\\\1", piece), math=True)
            # A title's math with capitals ($L_1$) would be lowercased by the style too.
            out.append("{" + piece + "}" if protect and any(c.isupper() for c in piece) else piece)
        elif kind == "prose":
            out.append(_bib_prose(piece, balanced, protect=protect and guess, proper=proper, lead=lead))
        else:
            groups = [*groups, piece] if kind == "open" else groups[:-1]
            out.append(piece)
            continue  # a command's name is not text before the next word
        lead += piece
    return "".join(out)


#: what a URL, DOI or eprint may not carry into a .bib as it is: braces would end the field,
#: and a backslash or TeX's "^^" character code would be live TeX where a style prints the
#: field without \url (plainnat's fallback \texttt{…}); percent-encoded, the address is the same
_VERBATIM_UNSAFE = str.maketrans({"{": "%7B", "}": "%7D", "\\": "%5C", "^": "%5E"})


def _bib_verbatim(text: str) -> str:
    return text.translate(_VERBATIM_UNSAFE)


def _bib_name(name: str, source: str | None = None) -> str:
    """A name as BibTeX reads it: "von Last, Jr, First" (the particle and suffix in their
    own places, so no style takes "Jr" for a surname), an organisation's braced whole."""
    p = person(name, source)
    if "literal" in p:  # braces stop BibTeX splitting it ("{heise online}")
        return "{" + bib_escape(p["literal"]) + "}"
    family = " ".join(filter(None, [p.get("non-dropping-particle"), p["family"]]))
    if p.get("suffix"):  # "von Last, Jr, First": the suffix needs the third part
        return ", ".join(bib_escape(part) for part in [family, p["suffix"], p.get("given", "")])
    return ", ".join(bib_escape(part) for part in [family, p.get("given")] if part)


_BIB_MEDIUM = {"podcast": "Podcast episode", "video": "Video"}


#: a library's type of the entry (``csl_type``) as classic BibTeX's entry type (biblatex and
#: Zotero's BibTeX import read them all), the field naming its container, and the field
#: naming its publisher: a thesis's university is its ``school``, a report's ``institution``.
#: A manuscript stays ``@misc``: plain's ``@unpublished`` requires a ``note``, which hermes
#: does not write (it is printed); a journal's paper is :func:`_bib_type`'s ``@article``.
_BIB_LIBRARY_TYPES = {
    "book": ("book", None, "publisher"),
    "chapter": ("incollection", "booktitle", "publisher"),
    "paper-conference": ("inproceedings", "booktitle", "publisher"),
    "thesis": ("phdthesis", None, "school"),
    "report": ("techreport", None, "institution"),
}
#: the kind plain and biblatex print for a thesis unasked: no ``type`` field for it
_BIB_DEFAULT_GENRE = {"phdthesis": "PhD thesis", "mastersthesis": "Master's thesis"}
#: a master's thesis's kind as libraries write it: "Master's thesis", "MSc thesis", "M.A. thesis"
_MASTERS = re.compile(r"master|\bm\.?\s?(?:a|sc|s|phil)\b", re.I)


def _bib_type(r: dict) -> tuple[str, str | None]:
    """The entry type and the field that names the item's source (its feed's title).

    The type an imported library gave the entry where it is one of
    :data:`_BIB_LIBRARY_TYPES` (a master's thesis, by its genre, ``@mastersthesis``; any
    other thesis ``@phdthesis``, the kind classic styles know, with its own kind in ``type``).
    A journal's paper is an ``@article`` in its ``journal``. Everything else stays ``@misc``
    with ``howpublished``: classic BibTeX styles (plain, alpha) print howpublished for a
    misc, biblatex's misc does too, while biblatex's ``@online`` names a site only in
    ``organization`` and BibTeX styles do not know ``@online`` at all (a warning, and the
    source not printed)."""
    if r.get("csl_type") in _BIB_LIBRARY_TYPES:
        kind, container, _ = _BIB_LIBRARY_TYPES[r["csl_type"]]
        if kind == "phdthesis" and _MASTERS.search((r.get("citation") or {}).get("genre") or ""):
            kind = "mastersthesis"
        return kind, container
    if r["content_type"] == "paper" and (r["source"] or (r.get("citation") or {}).get("container")):
        return "article", "journal"
    return "misc", "howpublished"


#: an arXiv category as its feeds give it: an archive's subject class ("math.CA",
#: "astro-ph.GA", "cond-mat.stat-mech") or an archive that has none ("hep-th", "quant-ph")
_ARXIV_CLASS = re.compile(
    r"(?:astro-ph|cond-mat|cs|econ|eess|math|nlin|physics|q-bio|q-fin|stat)\.[A-Za-z-]+"
    r"|gr-qc|hep-(?:ex|lat|ph|th)|math-ph|nucl-(?:ex|th)|quant-ph"
)


def _arxiv_class(r: dict) -> str | None:
    """An arXiv paper's primary category: the first of its feed's categories, which arXiv's
    listings give primary first (a keyphrase is never one: :func:`.fields.subject_tags`)."""
    return next((t for t in subject_tags(r) if _ARXIV_CLASS.fullmatch(t)), None) if r["arxiv"] else None


def _where(r: dict) -> str | None:
    """Where a ``@misc`` that names no source (no feed: an arXiv paper, whose listing feed is
    not where it was published, or an item whose feed was removed) can be found, for the
    classic styles, which print a misc's howpublished and none of url, eprint or doi (a
    trial's plain bibliography read "Fermionic construction of tau functions and random
    processes, 2007."): an arXiv preprint as arXiv asks to be cited, "arXiv:0704.0054
    [math.CA]"; an item with a DOI by it ("doi:10.1007/978-1-4612-0949-2": its address is
    the DOI's resolver, "doi.org" would say nothing); anything else its site's host
    ("blog.example.org"). Not the whole address:
    a URL's "%" and "#" break the field where biber writes it into a macro's argument, and
    ``\\url`` would need the url package in every document."""
    if r["arxiv"]:
        cls = _arxiv_class(r)
        return bib_escape(f"arXiv:{r['arxiv']}" + (f" [{cls}]" if cls else ""))
    if r["doi"]:
        return bib_escape(f"doi:{r['doi']}")
    try:
        host = urlsplit(r["url"] or "").hostname
    except ValueError:  # "http://[" : no host to name
        return None
    return bib_escape(host.removeprefix("www.")) if host else None


def _bib_addendum(r: dict) -> str | None:
    # biblatex's addendum (printed last; classic styles skip it): what the item is, how long,
    # and where its audio is, which no standard @misc field holds.
    found = media(r)
    parts = [_BIB_MEDIUM.get(r["content_type"]), duration_text(found and found["duration"])]
    if _media_url(r):
        parts.append(f"{found['type'].split('/')[0]}: {found['url']}")
    return bib_escape(", ".join(filter(None, parts))) or None


def _letters(text: str) -> str:
    """A title as two are compared: LaTeX read, accents folded, case ignored, letters and
    digits only (the library import matches titles so)."""
    text = unicodedata.normalize("NFKD", readable(text))
    return " ".join(re.findall(r"[^\W_]+", "".join(c for c in text if not unicodedata.combining(c)).casefold()))


def bib_title(r: dict) -> str:
    """The record's title for BibTeX. An imported library's own brace protection where the
    library's BibTeX title reads as the item's (``The {Ising} model``, ``{DNA} repair in
    {Escherichia coli}``: the person protected those capitals, and a style that recases
    titles would lose them under hermes's guess); each of its spans as :func:`bib_tex` writes
    text, the protected ones braced, no guess added. Otherwise (no library title, or the
    feed has since given the item another title: a new version's) :func:`bib_tex`'s guess."""
    spans = r.get("title_spans")
    if spans and _letters("".join(text for text, _ in spans)) == _letters(r["title"]):
        # a protected span's math needs no braces of its own
        return "".join(
            "{" + bib_tex(text) + "}" if protected else bib_tex(text, title=True, guess=False)
            for text, protected in spans
        )
    return bib_tex(r["title"], title=True)


def _bib_entry(r: dict) -> str:
    kind, source_field = _bib_type(r)
    fields: list[tuple[str, str]] = [("title", bib_title(r))]
    if r["authors"]:
        fields.append(("author", " and ".join(_bib_name(a, r["source"]) for a in r["authors"])))
    elif r["source"] or r["title"]:
        # the classic styles sort by author, else by key ("Warning--to sort, need author or
        # key"): a news item or a post without a byline sorts by its source, then its title
        fields.append(("key", bib_escape(_sort_key(r["source"] or readable(r["title"])))))
    cited = r.get("citation") or {}
    typed = _BIB_LIBRARY_TYPES.get(r.get("csl_type"))
    # an imported entry's journal is where it was published; a feed's title otherwise. A
    # book, thesis or report is in no container, and a typed entry's is the library's only.
    container = cited.get("container") if typed else cited.get("container") or r["source"]
    if container and source_field:
        fields.append((source_field, bib_escape(container)))
    elif kind == "misc" and (where := _where(r)):
        fields.append(("howpublished", where))
    publisher = typed[2] if typed else "publisher"
    for name, key in (
        ("volume", "volume"),
        ("number", "issue"),
        ("pages", "pages"),
        (publisher, "publisher"),
        ("edition", "edition"),
    ):
        if cited.get(key):
            fields.append((name, bib_escape(cited[key].replace("–", "--"))))
    if typed and cited.get("genre") and cited["genre"] != _BIB_DEFAULT_GENRE.get(kind):
        fields.append(("type", bib_escape(cited["genre"])))  # a thesis's or report's own kind
    if r["year"]:
        fields.append(("year", r["year"]))
    if _date(r):
        fields.append(("date", _date(r)))
    if r["url"]:
        fields.append(("url", _bib_verbatim(r["url"])))
    if r["arxiv"]:
        # eprinttype is biblatex's and what Zotero's import reads (its Extra: "arXiv: …");
        # archivePrefix and primaryClass are what arXiv's own BibTeX and natbib's styles read
        fields += [("eprint", _bib_verbatim(r["arxiv"])), ("eprinttype", "arxiv"), ("archivePrefix", "arXiv")]
        if _arxiv_class(r):
            fields += [("eprintclass", _arxiv_class(r)), ("primaryClass", _arxiv_class(r))]
    if r["doi"]:
        fields.append(("doi", _bib_verbatim(r["doi"])))
    if kind == "misc" and not container and (r["arxiv"] or r["doi"]):
        # the howpublished of :func:`_where` names the identifier already, and biblatex's misc
        # prints howpublished and eprint (or doi) both ("arXiv:0704.0054 [math.CA]. 2007.
        # arXiv: 0704.0054 [math.CA]"): the entry's option keeps the one classic styles print
        fields.append(("options", "eprint=false" if r["arxiv"] else "doi=false"))
    if _bib_addendum(r):
        fields.append(("addendum", _bib_addendum(r)))
    if r["abstract"]:
        fields.append(("abstract", bib_tex(r["abstract"])))
    language = langid(f"{r['title']}. {r['abstract'] or ''}")
    if language:
        fields.append(("langid", language))
    fields.append(("keywords", bib_escape(", ".join(subject_tags(r)))))
    if note_text(r):
        # The person's own notes and highlights go in annote, where Zotero's BibTeX export
        # writes an item's notes and its import reads them back as notes: ``note`` is a
        # citation's, printed in the reference list by plain, alpha and biblatex's styles
        # (a trial's bibliography showed "key idea: …"), annote by no standard style.
        # Treated as a title is: their math ($\sqrt{n}$) and text commands pass through for
        # LaTeX when harmless (hermes.text.latex.harmless), the rest is escaped. A note's
        # "$\input{…}$" is escaped like a feed's: the .bib may be shared.
        fields.append(("annote", bib_tex(note_text(r))))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{r['key']},\n{body}\n}}\n"


def bibtex(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return "\n".join(_bib_entry(r) for r in records)


def _sort_key(text: str, limit: int = 60) -> str:
    """The ``key`` field a style sorts an authorless entry by: at most ``limit`` characters,
    cut at a word (a trial's read "… Quantum Compu"), no ellipsis (it sorts, it is not read)."""
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0]
    return cut if cut and len(cut) <= limit else text[:limit]
