"""TeX's text dashes and an operator's spacing, as the faces show arXiv text.

A trial's pages showed "mean--field" and "Blume--Emery--Griffiths" as written: in TeX's text
"--" is an en dash and "---" an em dash. In math "--" is two minus signs, and an address or
code keeps its hyphens. The title of arXiv 0704.1533, ``$\\mathbb{Z}^2 \\rtimes {\\rm
SL}(2,\\mathbb{Z})$-actions``, read "ℤ² ⋊SL(2,ℤ)-actions": the operator lost its space."""

from __future__ import annotations

import pytest

from hermes.text.latex import readable


@pytest.mark.parametrize(
    "raw, shown",
    [
        (
            "the mean--field limit of the Blume--Emery--Griffiths model",
            "the mean–field limit of the Blume–Emery–Griffiths model",
        ),
        ("Ast\\'{e}risque 236 (1996) 133--154", "Astérisque 236 (1996) 133–154"),
        ("a result---and a proof", "a result—and a proof"),
        (
            "a finite $G$--module and the non--coprime $k(GV)$--problem",
            "a finite G–module and the non–coprime k(GV)–problem",
        ),
        ("Temperley--Lieb algebras of type $E_n$", "Temperley–Lieb algebras of type Eₙ"),
    ],
)
def test_text_dashes_read_as_tex_reads_them(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "text",
    [
        "run hermes --db x.db -- and then --verbose",  # options, and news text's spaced dash
        "see https://example.org/a--b and www.a--b.org",
        "the `a--b` flag",
        "<!-- a comment --> and x-->y and a rule ----",
    ],
)
def test_hyphens_that_are_no_text_dash_stay(text):
    assert readable(text) == text


def test_math_keeps_its_minus_signs():
    assert readable("$a--b$ and $x^{--}$") == "a--b and x⁻⁻"


def test_a_binary_operator_keeps_its_spaces_before_a_group():
    title = (
        "Concrete Classification and Centralizers of Certain $\\mathbb{Z}^2 \\rtimes {\\rm SL}(2,\\mathbb{Z})$-actions"
    )
    assert readable(title) == "Concrete Classification and Centralizers of Certain ℤ² ⋊ SL(2,ℤ)-actions"
    assert readable("$a \\times {b}$, $x \\in {\\mathbb R}$, $\\alpha {}^2$") == "a × b, x ∈ ℝ, α²"
