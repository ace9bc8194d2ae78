"""Nothing from a feed reaches a BibTeX export as live TeX (issue 32): TeX reads ``^^5c`` as
a backslash, and pylatexenc knowing a command (``\\includegraphics``) does not make it math."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hermes_corpus import bibtex
from hermes_corpus import export as ex
from hermes_corpus import signals as cs

from hermes.storage.records import require_user

HOSTILE = [
    r"Leak $^^5cinput{/etc/hostname}$ here",
    r"Leak $\^^69nput{/etc/hostname}$ here",
    r"Run $^^5cwrite18{touch pwned}$ now",
    r"Picture $\includegraphics{/etc/passwd}$ of it",
    r"Footnote $\footnote{x}\url{y}\href{a}{b}\cite{k}$",
    r"Nested \emph{a $^^5cinput{x}$ b} and {\em ^^5cinput{y}}",
    r"Caret ^^5cinput{z} in prose, \^^69nput{w} too",
]

#: what a .bib written by hermes may ask LaTeX to run: its escapes and standard math
ESCAPES = {
    "textbackslash",
    "textasciicircum",
    "textasciitilde",
    "textbraceleft",
    "textbraceright",
    "emph",
    "em",
    "mathcal",
    "alpha",
}
_COMMAND = re.compile(r"\\([a-zA-Z]+)")


def live(tex: str) -> set[str]:
    """The commands ``tex`` runs beyond hermes's escapes, and "^^" if it holds a character
    code (an escaped ``\\textasciicircum{}`` is not one)."""
    found = {name for name in _COMMAND.findall(tex) if name not in ESCAPES}
    return found | ({"^^"} if "^^" in tex.replace(r"\textasciicircum{}", "") else set())


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_tex_in_a_title_is_escaped_as_prose(text):
    assert live(bibtex.bib_tex(text, title=True)) == set()
    assert live(bibtex.bib_tex(text)) == set()


def test_standard_math_still_passes_through():
    assert bibtex.bib_tex(r"$\mathcal{O}(n^2)$ and $\alpha^2$") == r"$\mathcal{O}(n^2)$ and $\alpha^2$"


def test_a_whole_entry_carries_no_live_tex(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items(
        [
            {
                "title": HOSTILE[0],
                "summary": " ".join(HOSTILE),
                "url": "https://example.org/^^5cinput{a}/\\input{b}",
                "guid": "https://example.org/hostile",
            }
        ]
    )
    db.execute("UPDATE items SET authors = ? WHERE id = ?", ['["Ada ^^5cinput{x} Lovelace"]', item])
    cs.add_note(db, "alice", item, HOSTILE[3])
    text = ex.export(db, require_user(db, "alice")["id"], "bibtex").text
    assert live(text) == set()
    assert "url = {https://example.org/%5E%5E5cinput%7Ba%7D/%5Cinput%7Bb%7D}" in text


# --- accents biber reads back (a trial: "Garc{\'\i}a" stopped pdflatex after biber) -------

#: an accent on a dotless i or j, as pylatexenc writes "í": biber gives U+0131 U+0301
DOTLESS = re.compile(r"\\(?:[`'^\"~=.]|[uvHckdbrt](?![a-zA-Z]))\s*\{?\\[ij](?![a-zA-Z])")
LATIN = [chr(c) for c in range(0xC0, 0x2B0) if unicodedata.category(chr(c)).startswith("L")]


def test_an_accented_i_is_written_on_the_letter_not_on_a_dotless_i():
    assert bibtex.tex_unicode("García") == r"Garc{\'i}a"
    assert bibtex.bib_escape("Íñigo Martí Ruíz ï ì î") == r"{\'I}{\~n}igo Mart{\'i} Ru{\'i}z {\"i} {\`i} {\^i}"
    # decomposed ("i" + U+0301, as macOS writes it) is the same letter
    assert bibtex.tex_unicode("Garci\u0301a") == bibtex.bib_tex("Garci\u0301a", title=True) == r"Garc{\'i}a"
    # arXiv's LaTeX for it passes as the same letter, not as an escaped backslash
    for written in (r"Garc\'{\i}a", r"Garc\'\i a", r"Garc\'ia"):
        assert bibtex.bib_tex(written, title=True) == r"Garc{\'i}a", written
    assert [w for w in LATIN if DOTLESS.search(bibtex.tex_unicode(w))] == []


def test_letters_a_standard_document_cannot_typeset_after_biber_lose_what_it_cannot_draw():
    """ȩ, ħ, ŀ … as pylatexenc writes them stop pdflatex once biber has read them back (or at
    once: tipa's \\textschwa); each is the letter without the mark, else its code point."""
    assert bibtex.tex_unicode("Ħal Muħammad ŧ Ŀ ŀ") == "Hal Muhammad t L l"
    assert bibtex.tex_unicode("Ȩȩ Ḝ") == r"Ee {\u{E}}"
    assert bibtex.tex_unicode("Məmmədov ʔ ⅓ ŉ ƕ") == "M[U+0259]mm[U+0259]dov [U+0294] 1/3 'n [U+0195]"
    for letter in LATIN:
        assert not re.search(
            r"\\(text(schwa|glotstop|nrleg|phi|turnk|hvlig|frac)|nument)\b|\\=\{[hHtT]\}|\\\.\{[lL]\}|\\c\{[eE]\}",
            bibtex.tex_unicode(letter),
        ), letter


def test_symbols_are_written_as_standard_latex_or_as_their_code_point():
    """ℋ as pylatexenc writes it needs mathrsfs, ɛ is \\varepsilon outside math, ⊨ and ∯ are
    commands LaTeX lacks: each stopped pdflatex, under bibtex too."""
    assert bibtex.tex_unicode("\u210b \U0001d4b6 \u025b \u22a8 \u222f \u2246") == (
        r"{$\mathcal{H}$} {$a$} {$\varepsilon$} {$\models$} [U+222F] [U+2246]"
    )
    assert (
        bibtex.tex_unicode("\u025b \u22a8 \u2112", math=True) == r"{\varepsilon} {\models} {\ensuremath{\mathcal{L}}}"
    )
    in_math = bibtex.bib_tex("Operators on $\u210b$", title=True)
    assert r"\mathcal{H}" in in_math and "mathscr" not in in_math
