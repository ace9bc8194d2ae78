"""Every ``$…$`` span of an arXiv abstract leaves hermes as math LaTeX typesets or as the
text it reads as, never as TeX source: a field trial's BibTeX of arXiv 0704.1815 printed
``$\\Delta <\\sqrt{\\tk D}$`` escaped (an author's macro, ``\\tk``, is no standard LaTeX) beside
the abstract's typeset ``$\\Delta = 0$``, and its RIS kept that span as LaTeX beside "Δ = 0".
An author's macro is its name, in upright letters in the BibTeX's math and as text in the
RIS and CSL-JSON exports, which are read as plain text."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from hermes_corpus import bibtex
from hermes_corpus import export as ex
from hermes_corpus import signals as cs
from tex_support import compile_bib, needs_tex

from hermes.storage.records import require_user
from hermes.text.latex import readable

#: arXiv 0704.1815's abstract, as the trial's archive stores it
KONDO = (
    "We show that local moment screening in a Kondo lattice with d-wave superconducting conduction "
    "electrons is qualitatively different from the corresponding single Kondo impurity case. Despite "
    "the conduction-electron pseudogap, Kondo-lattice screening is stable if the gap amplitude obeys "
    r"$\Delta <\sqrt{\tk D}$, in contrast to the single impurity condition $\Delta <\tk$ (where $\tk$ "
    r"is the Kondo temperature for $\Delta = 0$ and D is the bandwidth). Our theory explains the heavy "
    "electron behavior in the d-wave superconductor Nd_{2-x}Ce_{x}CuO_{4}."
)
#: abstracts shaped as cond-mat's are: relations alone between dollars before a number, a
#: tilde, LaTeX 2.09's font switches in scripts, a compound's name in \mathrm, the
#: uncertainty of pandoc's price rule ("$\nu= 1/2 $", "($\sim$1nm)")
SHAPES = [
    r"Superconductivity sets in at $T_c$ = 2.3 K in $\mathrm{CeCoIn}_5$, with $T_{\rm c}$ $<$ 5 K "
    r"and $H_{\rm{c2}}$ $>$ 10 T.",
    r"The gap is $\sim 2$ meV, and scales below the crossover ($\sim$1nm) are reached near $\nu= 1/2 $.",
    r"The moment is 1.6 $\mu_{\rm B}$/Ce and the Kondo scale $T_K \approx \tk$ below $\tk_0$.",
    r"An unbalanced span $\{x$ and an accent over a formula with a macro, $\widehat{\tk+x}$.",
]


def spans(text: str) -> list[str]:
    """The math a .bib passes on: ``$…$`` not escaped."""
    return re.findall(r"(?<!\\)\$[^$]+(?<!\\)\$", text)


@pytest.mark.parametrize("abstract", [KONDO, *SHAPES])
def test_no_span_is_written_as_tex_source(abstract):
    written = bibtex.bib_tex(abstract)
    assert "textbackslash" not in written and r"\$" not in written, written
    for span in spans(written):
        assert bibtex.harmless(span), span  # passed on only as standard LaTeX


def test_the_trial_s_abstract_keeps_its_math_with_the_author_s_macro_named():
    written = bibtex.bib_tex(KONDO)
    assert r"obeys $\Delta <\sqrt{\mathrm{tk} D}$, in contrast" in written
    assert r"condition $\Delta <\mathrm{tk}$ (where $\mathrm{tk}$ is the Kondo temperature for $\Delta = 0$" in written
    # the formula outside dollars is the feed's text, escaped as such
    assert r"Nd\_\{2-x\}Ce\_\{x\}CuO\_\{4\}" in written


def test_arxiv_shapes_pass_as_math_where_they_may():
    written = bibtex.bib_tex(SHAPES[0])
    assert r"$T_c$ = 2.3 K in $\mathrm{CeCoIn}_5$" in written
    # "{\rm c}" as LaTeX2e's \mathrm (KOMA-Script's classes refuse \rm), "$<$ 5" as math
    assert r"$T_{\mathrm{c}}$ $<$ 5 K and $H_{\mathrm{c2}}$ $>$ 10 T" in written
    written = bibtex.bib_tex(SHAPES[1])
    assert r"$\sim 2$ meV" in written and r"($\sim$1nm)" in written and r"$\nu= 1/2 $" in written
    written = bibtex.bib_tex(SHAPES[3])
    # the unbalanced span is the text it reads as; the macro is named in math all the same
    assert r"span \textbraceleft{}x and" in written and r"$\widehat{\mathrm{tk}+x}$" in written
    written = bibtex.bib_tex(SHAPES[2])
    assert r"$T_K \approx \mathrm{tk}$ below $\mathrm{tk}_0$" in written


def test_hostile_math_is_still_shown_as_the_feed_wrote_it():
    # issue 32: what would read a file is escaped as written, never read as text
    assert bibtex.bib_tex(r"Leak $\input{/etc/passwd}$") == r"Leak \$\textbackslash{}input\{/etc/passwd\}\$"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (r"obeys $\Delta <\sqrt{\tk D}$, where $\tk$ is", "obeys Δ <√(tk D), where tk is"),
        (r"$T_{\rm c}$ $<$ 5 K", "T_c < 5 K"),
        (r"1.6 $\mu_{\rm B}$/Ce at $T_{\rm max}$", "1.6 μ_B/Ce at Tₘₐₓ"),
        (r"($\sim$1nm) near $\nu= 1/2 $", "(∼1nm) near ν= 1/2"),
    ],
)
def test_plain_text_reads_an_author_s_macro_as_its_name(raw, shown):
    # the BibTeX export's "\mathrm{tk}", as text
    assert readable(raw, names=True) == shown


def test_a_page_still_shows_an_author_s_macro_as_written():
    assert readable(r"where $\tk$ is") == r"where $\tk$ is"


@pytest.fixture
def kondo(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    items = [
        {
            "title": "Kondo-lattice screening in a d-wave superconductor",
            "summary": KONDO,
            "arxiv_id": "0704.1815",
            "url": "https://arxiv.org/abs/0704.1815",
            "authors": ["Hiroshi Lindqvist"],
        },
        *(
            {
                "title": f"Heavy fermions, part {k}: {abstract[:40]}",
                "summary": abstract,
                "arxiv_id": f"0704.{2000 + k}",
                "url": f"https://arxiv.org/abs/0704.{2000 + k}",
                "authors": ["Ana Lopez"],
            }
            for k, abstract in enumerate(SHAPES)
        ),
    ]
    for item in add_items(items, feed_url="https://rss.arxiv.org/rss/cond-mat"):
        cs.favorite(db, "alice", item)
    return db


def export(db, fmt: str) -> str:
    return ex.export(db, require_user(db, "alice")["id"], fmt).text


def test_ris_and_csl_json_give_the_abstract_as_one_text(kondo):
    import rispy

    ris = {r["id"]: r for r in rispy.loads(export(kondo, "ris"))}
    abstract = ris["arxiv-0704.1815"]["abstract"]
    assert "obeys Δ <√(tk D), in contrast to the single impurity condition Δ <tk (where tk is" in abstract
    assert "for Δ = 0 and D" in abstract and "$" not in abstract
    csl = {c["id"]: c for c in json.loads(export(kondo, "csl-json"))}
    assert csl["arxiv-0704.1815"]["abstract"] == abstract
    assert "T_c < 5 K" in ris["arxiv-0704.2000"]["abstract"]


@pytest.mark.parametrize("backend", ["bibtex", "biber"])
def test_the_abstracts_compile_and_print_no_tex_source(kondo, tmp_path, backend):
    needs_tex(backend)
    bib = export(kondo, "bibtex")
    if backend == "bibtex":  # plain prints no abstract: the abstracts as titles, which it prints
        kondo.execute("UPDATE items SET title = summary")
        bib = export(kondo, "bibtex")
    # biblatex's reading style prints each entry's abstract
    compile_bib(tmp_path, bib, backend, "plain" if backend == "bibtex" else "reading")
    bbl = (tmp_path / "doc.bbl").read_text(encoding="utf-8")
    assert r"where $\mathrm{tk}$ is the" in bbl  # the abstract was typeset
    assert "textbackslash" not in bbl and r"\$" not in bbl
    if shutil.which("pdftotext"):
        subprocess.run(["pdftotext", "doc.pdf"], cwd=tmp_path, check=True)
        printed = (tmp_path / "doc.txt").read_text(encoding="utf-8", errors="replace")
        # no TeX source printed (a lone "\" on its line is pdftotext's reading of the wide
        # hat's glyph over "tk + x", not source)
        assert not re.search(r"\\[A-Za-z]", printed) and "where tk is the" in " ".join(printed.split())
