"""Sub- and superscripts as the full-text index reads them: joined to the word they are
written on, as a person types a formula ("CeCoIn$_5$" and "CeCoIn₅" are "cecoin5").

arXiv titles write formulas with TeX's scripts (``Sr$_2$RuO$_4$``, ``$T_c$``), and a
tokenizer cuts them at every "$" and "_" ("sr", "2ruo", "4"). :func:`index_script_steps`
is the one table of replacements that joins them: migration ``core:m019_items_fts_scripts``
makes them in SQL in the views the index reads, and a search reads its query with the same
table (:func:`index_scripts`) and reads the Unicode scripts the faces show plain
(:func:`plain_scripts`). Pure text, no hermes import: storage uses it too.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache


def plain_scripts(text: str) -> str:
    """``text`` with its Unicode sub- and superscript digits, letters and signs as plain
    ones: "CeCoIn₅" → "CeCoIn5", "La₂₋ₓ" → "La2-x", "x²" → "x2". The faces show a feed's
    ``CeCoIn$_5$`` as "CeCoIn₅", and the index reads it "cecoin5" (:func:`index_scripts`)."""
    if text.isascii():
        return text
    return "".join(_plain_script(c) for c in text)


@lru_cache(maxsize=256)
def _plain_script(char: str) -> str:
    name = unicodedata.name(char, "")
    if "SUBSCRIPT" not in name and "SUPERSCRIPT" not in name and not name.startswith("MODIFIER LETTER"):
        return char
    plain = unicodedata.normalize("NFKC", char).replace("\u2212", "-")  # a script's minus sign
    return plain if plain.isascii() and (plain.isalnum() or plain in "+-=()") and len(plain) == 1 else char


#: the symbols LaTeX names (Greek letters, ℓ, ℏ, ∂, ∇) whose script the index keeps a word
#: of its own: "$\\ell_1$" is "ell 1", as :func:`hermes.text.latex.spelled_out` reads the
#: "ℓ₁" the faces show, and "$\\alpha_s$" is found by "alpha" (an operator's script joins:
#: "$\\sum_n$" is "sumn", no word a person looks for). Lower case: the index reads a text
#: with a backslash in lower case (migration ``core:m017_items_fts_readable``), so
#: "$\\Delta_0$" is "delta 0".
_INDEX_SYMBOLS = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu "
    "xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega ell hbar partial nabla"
).split()
#: upright text a script is written in: "$T_{\\rm c}$", "$T_\\mathrm{c}$", "$E_{\\text{F}}$"
_INDEX_UPRIGHT = ("\\rm ", "\\mathrm{", "\\text{")
#: the one-character scripts that end a span before a word: a formula's counts
#: ("Sr$_2$RuO$_4$", "La$_{2-x}$Sr$_x$CuO$_4$"), the only ones found so in 2,000 arXiv
#: abstracts (../shared/data/arxiv-2000); each is one more replacement on every such text
_INDEX_COUNTS = "0123456789xyzn"
#: the signs of a text whose scripts the index reads: math's dollar and a script mark; a
#: text without them is indexed as m017 reads it, at no cost
SCRIPT_MATH = "$"
SCRIPT_MARKS = ("_", "^")


def has_scripts(text: str) -> bool:
    """Whether the index reads the scripts of ``text`` (:data:`SCRIPT_MATH`, :data:`SCRIPT_MARKS`)."""
    return SCRIPT_MATH in text and any(mark in text for mark in SCRIPT_MARKS)


@lru_cache(maxsize=1)
def index_script_steps() -> tuple[tuple[str, str], ...]:
    """The (LaTeX, text) replacements, in order, by which the full-text index reads the
    scripts of a title or summary that has them (:func:`has_scripts`; migration
    ``core:m019_items_fts_scripts`` makes them in SQL, so that a row any SQLite client
    writes is indexed alike; a search reads a query with them, :func:`index_scripts`). A
    script joins the word it is written on, and a count that is a span of its own ("$_5$")
    the word after it too, as a person types a formula: "CeCoIn$_5$" is indexed "cecoin5",
    "Sr$_2$RuO$_4$" "sr2ruo4", "La$_{2-x}$Sr$_x$CuO$_4$" "la2-xsrxcuo4", "$T_{\\rm c}$"
    "tc", "$^3$He" "3he"; the script of a symbol (:data:`_INDEX_SYMBOLS`) stays apart. The
    index reads no LaTeX otherwise, so "_" and "^" go everywhere in such a text (a
    "snake_case" name beside "$x^2$" is read "snakecase"). ``__lower__`` is SQLite's
    ``lower()`` (ASCII letters); the index folds case anyway. Databases are built from this
    table: a change to it is a new migration that rebuilds the index."""
    steps = [("__lower__", ""), ("${}", "$"), ("^", "_")]  # an empty base; one mark for both scripts
    for upright in _INDEX_UPRIGHT:  # the script's letters as they are
        steps += [("_{" + upright, "_{"), ("_" + upright, "_{")]
    steps.append(("}_", "_"))  # a braced base's script: "{\\rm CeCoIn}_5", "\\mathrm{CeCoIn}_5"
    steps += [("\\" + symbol + "_", "\\" + symbol + " ") for symbol in _INDEX_SYMBOLS]
    steps.append(("$_", "_"))  # a span that opens with its script is the word's before it
    steps += [("_" + c + "$", c) for c in _INDEX_COUNTS]  # and the word's after it
    steps += [("_{", ""), ("}$", ""), ("_", "")]  # a braced one ("O$_{7-\\delta}$Ru"), and every other
    return tuple(steps)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def index_scripts(text: str) -> str:
    """``text`` with its scripts read as the full-text index reads them
    (:func:`index_script_steps`, in Python): "CeCoIn$_5$" → "cecoin5"; a text without
    (:func:`has_scripts`) as it is."""
    if not has_scripts(text):
        return text
    for latex, plain in index_script_steps():
        text = text.translate(_ASCII_LOWER) if latex == "__lower__" else text.replace(latex, plain)
    return text
