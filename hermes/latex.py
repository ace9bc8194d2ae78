"""Readable Unicode from the LaTeX in feed titles and abstracts, for a person to read.

arXiv titles carry ``$\\mathcal{O}(n^2)$ attention``, ``$k$-means``, ``\\emph{et al.}``; a
person reads "𝒪(n²) attention", "k-means", "et al.". :func:`readable` converts only the
LaTeX it finds (math between dollars, ``\\(…\\)``, ``\\[…\\]``, and commands pylatexenc
knows, with their braced arguments) and leaves every other character as the feed wrote it:
outside math, ``%`` is a per cent sign and ``--`` two hyphens, not LaTeX.

It is called where text is shown to people: web pages, the Atom feed, the terminal, the
sentences hermes writes (a reason quotes a title readably, on every face: cut to 60
characters as written it was neither LaTeX nor text), and the exports their readers take
as plain text (RIS, CSL-JSON, Markdown, vault notes). What is stored, the items' own fields
in MCP answers, JSON lines and BibTeX keep the LaTeX: agents and LaTeX read it fine, and a
conversion cannot be undone.

A ``$…$`` is math by pandoc's rule, so that prices stay prices: the opening ``$`` has a
non-space on its right, the closing one a non-space on its left and no digit after it
("$5 and $10", "$20,000 to $30,000" are not math); and, for news text, no number after a
space either ("US$ 20") and no two words in a row between ("$5 each, or US$ 20"). Anything pylatexenc cannot
parse strictly, or a command it does not know (``C:\\Users``), stays as written.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from functools import lru_cache

#: where LaTeX may start: display math, inline math, \( \[, a command, an escape, {\em …}
_START = re.compile(r"\$\$|\$|\\[(\[]|\\[a-zA-Z]+\*?|\\[^a-zA-Z\s]|\{\\[a-zA-Z]+")
_COMMAND = re.compile(r"\\([a-zA-Z]+)")
_ACCENT = re.compile(r"[\"'`^~=.](?:[a-zA-Z]|\{[a-zA-Z]?\})")
_ESCAPED = set("%&$#_{} ")
# Font switches ("{\\em Mixture}"): pylatexenc drops them, rightly (they print nothing), but
# its tables do not list them, so they are named here to tell them from a path's "\\Users".
_SWITCHES = frozenset({"em", "it", "bf", "sl", "sc", "rm", "tt", "sf", "itshape", "bfseries",
                       "scshape", "upshape", "slshape", "ttfamily", "rmfamily", "sffamily",
                       "mdseries", "normalfont", "cal"})
# In a summary that is HTML, "&" and "<tag" inside math are entities and markup: left as is.
_MARKUP = re.compile(r"&|<[a-zA-Z/!]")
_SCRIPT = re.compile(r"([\^_])(\{([^{}]*)\}|[a-zA-Z0-9+\-=()])")
_NUMBER_AFTER = re.compile(r"\s?\d")
_COMMAND_WITH_ARGUMENT = re.compile(r"\\[a-zA-Z]+(\{[^{}]*\})?")
_WORDS = re.compile(r"[A-Za-z]{2,}[,.;:]?\s+[A-Za-z]{2,}")
_PERCENT = re.compile(r"(?<!\\)%")
_COMMAND_END = re.compile(r"\\[a-zA-Z]+$")
#: a control word, spaces, and then not its argument: TeX eats those spaces and sets its
#: own math spacing; as text they are kept ("\\alpha \\approx 0.076" read "α≈ 0.076")
_SPACE_AFTER_COMMAND = re.compile(r"(\\[a-zA-Z]+)\s+(?=[^\s{^_])")
MAX_MATH = 400


def readable(text: str | None) -> str:
    """``text`` with its LaTeX as readable Unicode; text without ``\\`` or ``$`` is returned
    as it is, and any failure returns ``text`` unchanged (a page never breaks on a title)."""
    if not text or ("\\" not in text and "$" not in text):
        return text or ""
    try:
        return _converted(text)
    except Exception:  # pylatexenc is third-party code fed third-party text
        return text


@lru_cache(maxsize=4096)
def _converted(text: str) -> str:
    # Cached: a page shows a summary twice (preview and full), and pages are reloaded.
    out, done = [], 0
    for start in _START.finditer(text):
        if start.start() < done:
            continue
        end = _span_end(text, start)
        if end is None:
            continue
        piece = _piece(text[start.start():end])
        if piece is not None:
            out += [text[done:start.start()], piece]
            done = end
    return "".join(out) + text[done:]


def _span_end(text: str, start: re.Match) -> int | None:
    """Where the LaTeX that begins at ``start`` ends, or None when it is not LaTeX."""
    token, at = start.group(), start.end()
    if token == "$$":
        close = text.find("$$", at)
        return close + 2 if 0 < close - at <= MAX_MATH else None
    if token == "$":
        return inline_math_end(text, start.start())
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


def inline_math_end(text: str, opening: int) -> int | None:
    """The end of inline math opened at ``opening``, else None (a price): pandoc's rule,
    plus two that news text needs ("$5 each, or US$ 20"): a closing ``$`` has no number
    after it even past a space (it is a currency's, "US$ 20"), and what lies between is
    not prose (:func:`_prose`)."""
    if opening > 0 and text[opening - 1] == "\\":
        return None
    first = opening + 1
    if first >= len(text) or text[first].isspace() or text[first] == "$":
        return None
    close = first
    while True:
        close = text.find("$", close + 1)
        if close < 0 or close - first > MAX_MATH or "\n\n" in text[first:close]:
            return None
        if text[close - 1] == "\\":
            continue
        if text[close - 1].isspace() or _NUMBER_AFTER.match(text, close + 1):
            return None
        return None if _prose(text[first:close]) else close + 1


def _prose(between: str) -> bool:
    """Two words in a row once commands and their arguments are gone: prose, not math."""
    return bool(_WORDS.search(_COMMAND_WITH_ARGUMENT.sub(" ", between)))


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
    from pylatexenc.latex2text import LatexNodes2Text, get_default_latex_context_db
    from pylatexenc.latexwalker import LatexWalker

    # pylatexenc logs a warning for every macro it cannot fill in; a bad title is not news.
    logging.getLogger("pylatexenc").setLevel(logging.ERROR)
    return LatexNodes2Text(math_mode="text"), get_default_latex_context_db(), LatexWalker


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

    scripts = "".join(unicodedata.normalize("NFKC", c) if "SCRIPT" in unicodedata.name(c, "")
                      and unicodedata.normalize("NFKC", c).isdigit() else c for c in text)
    latex = unicode_to_latex(scripts, non_ascii_only=True)
    if "\\ensuremath" not in latex:
        return None
    words = _COMMAND.sub(r" \1 ", latex.replace("\\ensuremath", ""))
    return " ".join(re.sub(r"[^\w\s]|_", " ", words).split()) or None


#: commands pylatexenc knows that make LaTeX read a file, or point elsewhere: never passed
#: on from a feed to a document hermes writes for LaTeX (a BibTeX export)
_NOT_PASSED_ON = frozenset({"input", "include", "includeonly", "url", "href", "cite",
                            "ref", "eqref", "pageref", "label"})


def harmless(latex: str) -> bool:
    """Whether LaTeX from a feed may be passed on to be typeset as it is: every command in
    it is one pylatexenc knows for text or math (``\\mathcal``, ``\\alpha``, ``\\frac``), none
    that reads a file or refers elsewhere. A title's ``$\\input{/etc/passwd}$`` or
    ``$\\def…$`` is the feed's author's code, not math."""
    _, known, _ = _library()
    return all(name not in _NOT_PASSED_ON and known.get_macro_spec(name) is not None
               for name in _COMMAND.findall(latex))


def _piece(latex: str) -> str | None:
    """The readable text of one LaTeX span, or None to keep the span as written."""
    to_text, known, walker = _library()
    if any(name not in _SWITCHES and known.get_macro_spec(name) is None
           for name in _COMMAND.findall(latex)):
        return None  # not LaTeX hermes can read, or not LaTeX at all (a Windows path)
    math = latex.startswith(("$", "\\(", "\\["))
    if math and _MARKUP.search(latex):
        return None
    if math:
        latex = _SCRIPT.sub(_scripted, latex)
        # the norm's double bar, which pylatexenc drops ("\\|W\\|_1" read "W₁"), and the
        # spaces after a command as TeX's control space (pylatexenc drops plain ones in math)
        latex = _SPACE_AFTER_COMMAND.sub(r"\1\\ ", latex.replace("\\|", "‖"))
    # A feed's text is not a TeX file: a bare "%" ("$\approx 75 %$") is a per cent sign,
    # not a comment that would swallow the rest.
    latex = _PERCENT.sub(r"\\%", latex)
    text = to_text.nodelist_to_text(walker(latex, tolerant_parsing=False).get_latex_nodes()[0])
    return text.strip() if math else text


def _scripted(match: re.Match) -> str:
    """``^2`` as ², ``_{ij}`` as ᵢⱼ when Unicode has every character raised or lowered;
    otherwise ``^(…)`` around a longer script, so "10^{-3a}" reads 10^(-3a), not 10^-3a."""
    mark, body = match.group(1), match.group(3)
    body = match.group(2) if body is None else body
    chars = _forms(raised=mark == "^")
    if body and "\\" not in body and all(c in chars for c in body):
        # after a command ("\\sum_{i}") an empty group ends its name: "\\sumᵢ" would be
        # one unknown command, and dropped
        after_command = _COMMAND_END.search(match.string, 0, match.start()) is not None
        return ("{}" if after_command else "") + "".join(chars[c] for c in body)
    if body is not None and len(body) > 1 and match.group(3) is not None:
        return f"{mark}({{{body}}})"
    return match.group()


@lru_cache(maxsize=2)
def _forms(raised: bool) -> dict[str, str]:
    """Each ASCII character's raised (or lowered) form where Unicode has one, found by its
    Unicode name ("SUPERSCRIPT TWO", "LATIN SUBSCRIPT SMALL LETTER I")."""
    found = {}
    for char in "0123456789+-=()abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ":
        if char.isalpha():
            case = "SMALL" if char.islower() else "CAPITAL"
            names = ([f"SUPERSCRIPT LATIN {case} LETTER {char.upper()}",
                      f"MODIFIER LETTER {case} {char.upper()}"] if raised
                     else [f"LATIN SUBSCRIPT {case} LETTER {char.upper()}"])
        else:
            name = "MINUS" if char == "-" else unicodedata.name(char).removeprefix("DIGIT ")
            names = [f"{'SUPERSCRIPT' if raised else 'SUBSCRIPT'} {name}"]
        for name in names:
            try:
                found[char] = unicodedata.lookup(name)
                break
            except KeyError:
                continue
    return found

