"""A BibTeX export compiles (issue 32): with pdflatex and bibtex in the standard styles, and
with biber and biblatex, where a TeX installation is present (skipped, saying so, where
not). Nothing a feed wrote runs: a title's ``^^5cinput`` reads no file."""

from __future__ import annotations

import shutil
import subprocess
import unicodedata

import pytest
from hermes_corpus import export as ex
from hermes_corpus import signals as cs
from test_export_bibtex_tex import HOSTILE
from test_export_zotero import PAPERS

from hermes.storage.records import require_user

PDFLATEX = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc"]
PREAMBLE = r"""\documentclass{article}
\usepackage[utf8]{inputenc}
\usepackage[T1]{fontenc}
\usepackage{amsmath,amssymb,url}
"""
BIBTEX_DOCUMENT = (
    PREAMBLE
    + r"""\begin{document}
\nocite{*}
\bibliographystyle{%s}
\bibliography{corpus}
\end{document}
"""
)
BIBER_DOCUMENT = (
    PREAMBLE
    + r"""\usepackage[backend=biber,style=%s]{biblatex}
\addbibresource{corpus.bib}
\begin{document}
\nocite{*}
\printbibliography
\end{document}
"""
)


def needs(*tools: str) -> None:
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: this check needs a TeX installation")


#: every letter of Latin-1, Latin Extended-A/B and IPA, a line of them: biber reads the .bib's
#: LaTeX back into Unicode, and pdflatex stopped on what LaTeX's utf8 input does not define
#: (a trial: "Garc{\\'\\i}a" came back as a dotless i and a loose U+0301)
LETTERS = [chr(c) for c in range(0xC0, 0x2B0) if unicodedata.category(chr(c)).startswith("L")]
ACCENTED = [
    {
        "title": " ".join("".join(LETTERS[k : k + 12]) for k in range(0, len(LETTERS), 12)),
        "url": "https://example.org/letters",
        "guid": "https://example.org/letters",
        "authors": ["Jos\u00e9 Mar\u00eda Garc\u00eda \u00cd\u00f1iguez", "Mu\u0127ammad M\u0259mm\u0259dov"],
    },
    {
        # symbols pylatexenc writes as mathrsfs's \mathscr, a math command in text, or a command
        # LaTeX lacks (\forcesextra, \surfintegral)
        "title": "\u210b \u2112 \U0001d49c \U0001d4b6 \u22a8 \u22d8 \u222f \u2246 \u025b \u266f \u2153",
        "url": "https://example.org/symbols",
        "guid": "https://example.org/symbols",
    },
]
#: what the persona wrote: no style may print it in the reference list
PRIVATE = "key idea: the negativity bound"


@pytest.fixture
def corpus(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    hostile = [
        {"title": t, "summary": t, "url": f"https://example.org/h{k}", "guid": f"https://example.org/h{k}"}
        for k, t in enumerate(HOSTILE)
    ]
    for item in add_items(PAPERS + hostile + ACCENTED, feed_url="https://rss.arxiv.org/rss/astro-ph"):
        cs.favorite(db, "alice", item)
    cs.add_note(db, "alice", item, PRIVATE)
    cs.add_highlight(db, "alice", item, "a highlighted passage", note="its comment")
    return ex.export(db, require_user(db, "alice")["id"], "bibtex").text


def compile_in(folder, document: str, bib: str, tool: list[str]) -> str:
    (folder / "corpus.bib").write_text(bib, encoding="utf-8")
    (folder / "doc.tex").write_text(document)
    # what a hostile title would read: a file beside the document
    (folder / "x.tex").write_text("LEAKED")
    log = ""
    for command in (PDFLATEX, tool, PDFLATEX):
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, errors="replace", timeout=300)
        log += done.stdout
        assert done.returncode == 0, done.stdout[-3000:]
    return log


def printed_nothing_private(folder) -> None:
    """The persona's notes and highlights are not in the bibliography LaTeX typesets: a
    classic style's .bbl holds what it prints; biber's holds every field, and biblatex's
    standard styles print no annotation (Zotero's annote, which biber reads as annotation)."""
    bbl = (folder / "doc.bbl").read_text(encoding="utf-8")
    held = [line.strip() for line in bbl.splitlines() if "negativity bound" in line or "highlighted passage" in line]
    assert all(line.startswith(r"\field{annotation}") for line in held), held


def read_nothing(log: str) -> None:
    """No file a title names was opened: TeX logs each file it opens as "(path". The title's
    text itself may be in the log — typeset, and quoted in an overfull-box warning."""
    assert "x.tex" not in log and "LEAKED" not in log and "(/etc/hostname" not in log


@pytest.mark.parametrize("style", ["plain", "alpha", "unsrt", "abbrv"])
def test_pdflatex_and_bibtex_in_the_standard_styles(corpus, tmp_path, style):
    needs("pdflatex", "bibtex")
    log = compile_in(tmp_path, BIBTEX_DOCUMENT % style, corpus, ["bibtex", "doc"])
    read_nothing(log)
    printed_nothing_private(tmp_path)
    bbl = (tmp_path / "doc.bbl").read_text()
    assert r"{\L}" in bbl  # "Łukasz" a whole letter, abbreviated or not


@pytest.mark.parametrize("style", ["authoryear", "numeric"])
def test_biber_and_biblatex(corpus, tmp_path, style):
    needs("pdflatex", "biber")
    if subprocess.run(["kpsewhich", "biblatex.sty"], capture_output=True).returncode:
        pytest.skip("biblatex is not installed: this check needs it")
    log = compile_in(tmp_path, BIBER_DOCUMENT % style, corpus, ["biber", "doc"])
    read_nothing(log)
    printed_nothing_private(tmp_path)
    bbl = (tmp_path / "doc.bbl").read_text(encoding="utf-8")
    assert "García" in bbl and "Íñiguez" in bbl  # biber's Unicode, which pdflatex typeset
