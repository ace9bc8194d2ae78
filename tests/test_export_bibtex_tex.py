"""Nothing from a feed reaches a BibTeX export as live TeX (issue 32): TeX reads ``^^5c`` as
a backslash, and pylatexenc knowing a command (``\\includegraphics``) does not make it math."""

from __future__ import annotations

import re

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
