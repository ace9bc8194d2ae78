"""Compiling an exported .bib the way a person's LaTeX document would: pdflatex with
BibTeX in a standard style, or biblatex with biber (the export tests' one way of doing it)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

PDFLATEX = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc"]
PREAMBLE = (
    "\\documentclass{article}\\usepackage[utf8]{inputenc}\\usepackage[T1]{fontenc}\\usepackage{amsmath,amssymb,url}"
)


def needs_tex(backend: str) -> None:
    """Skip, saying why, where pdflatex, the backend or biblatex is not installed."""
    for tool in ("pdflatex", backend):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed: this check needs a TeX installation")
    if backend == "biber" and subprocess.run(["kpsewhich", "biblatex.sty"], capture_output=True).returncode:
        pytest.skip("biblatex is not installed: this check needs it")


def compile_bib(folder, bib: str, backend: str, style: str, cite: str = "\\nocite{*}") -> None:
    """``bib`` as ``corpus.bib`` in ``folder``, cited by ``cite`` in ``doc.tex`` in ``style``
    (a BibTeX style, or biblatex's with biber), through pdflatex, the backend and pdflatex
    twice; every step must succeed. doc.log, doc.blg and doc.bbl are left for the caller."""
    (folder / "corpus.bib").write_text(bib, encoding="utf-8")
    if backend == "bibtex":
        body = f"\\begin{{document}}{cite}\\bibliographystyle{{{style}}}\\bibliography{{corpus}}\\end{{document}}"
        preamble = PREAMBLE
    else:
        preamble = PREAMBLE + f"\\usepackage[backend=biber,style={style}]{{biblatex}}\\addbibresource{{corpus.bib}}"
        body = f"\\begin{{document}}{cite}\\printbibliography\\end{{document}}"
    (folder / "doc.tex").write_text(preamble + body + "\n")
    for command in (PDFLATEX, [backend, "doc"], PDFLATEX, PDFLATEX):
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, errors="replace", timeout=300)
        assert done.returncode == 0, done.stdout[-3000:]
