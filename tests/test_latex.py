"""hermes.text.latex: arXiv LaTeX as readable Unicode, every other text left as the feed wrote it."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from hermes.text import latex
from hermes.text.latex import readable

ARXIV = Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv-2000" / "arxiv_2000_topics.jsonl"


@pytest.mark.parametrize(
    "raw, shown",
    [
        (r"$\mathcal{O}(n^2)$ attention", "𝒪(n²) attention"),
        (r"$k$-means", "k-means"),
        (r"$\alpha$-divergence", "α-divergence"),
        (r"GPT-4 on $\geq 7$B models", "GPT-4 on ≥ 7B models"),
        (r"Sr$_2$FeMoO$_6$ and $x_{ij}^{2}$", "Sr₂FeMoO₆ and xᵢⱼ²"),
        (r"$10^{-3}$ and $\mathbb{R}^n$", "10⁻³ and ℝⁿ"),
        (r"$$E=mc^2$$ and \(x_i\)", "E=mc² and xᵢ"),
        (r"$\frac{1}{2}$-approximation", "1/2-approximation"),
        (r"efficient ($\approx 75 %$) transfer", "efficient (≈ 75 %) transfer"),
    ],
)
def test_math_reads_as_unicode(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "raw, shown",
    [
        (r"\textit{in vivo} imaging", "in vivo imaging"),
        (r"{\em Mixture} of experts", "Mixture of experts"),
        (r"as shown by Smith \emph{et al.}", "as shown by Smith et al."),
        (r"{\bf Bold} claims about {\cal K}-theory", "Bold claims about K-theory"),
        (r"50\% fewer \& faster", "50% fewer & faster"),
        (r"Schr\"odinger, M\'enage \`a Trois, \'{e}tude", "Schrödinger, Ménage à Trois, étude"),
        (r"a \$5 fee", "a $5 fee"),
    ],
)
def test_text_commands_are_dropped_or_resolved(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "raw, shown",
    [
        # a trial read "Schr{ö}dinger-Robertson": the braces BibTeX-minded authors put around an
        # accented letter only keep its case, and are not shown
        ('Schr{\\"o}dinger-Robertson', "Schrödinger-Robertson"),
        ('{\\"{u}}ber', "über"),
        ("Erd{\\H o}s", "Erdős"),
        ("Fran{\\c c}ois", "François"),
        ("Ma{\\ss}e", "Maße"),  # not run into "\\sse"
        ("Gr{\\o}nbech", "Grønbech"),
        ("{\\em Mixture} models", "Mixture models"),  # a font switch's group is not a letter's
    ],
)
def test_a_braced_accented_letter_reads_without_its_braces(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "raw, shown",
    [
        # forms the display kept as written, or read half: TeX's, all the same
        (r"Fran\c cois", "François"),  # a letter accent's argument after a space
        (r"Erd\H os--R\'enyi graphs", "Erdős–Rényi graphs"),  # TeX's en dash too
        (r"\v Cerenkov radiation", "Čerenkov radiation"),
        (r"Friedmann-Lema\^{\i}tre-Robertson-Walker", "Friedmann-Lemaître-Robertson-Walker"),  # read "Lema\^ıtre"
        (r"Na\"{\i}ve Bayes", "Naïve Bayes"),  # the dotless i under an accent is an i
        (r"na\"\i ve", "naïve"),  # TeX's space after \i ends its name
        (r"Stra\ss e", "Straße"),  # read "Straß e"
        (r"\ae ther and \oe uvre", "æther and œuvre"),
        (r"Stra\ss{}e and Gau\ss{} sums", "Straße and Gauß sums"),
        # kept: the unit's space ("70 \AA which", arXiv 0704.1793), a line break, a quote
        (r"lines at 70 \AA which", "lines at 70 Å which"),
        (r"a width of 31-40 {\AA}, in", "a width of 31-40 Å, in"),
        (r'line \\"quoted"', r'line \\"quoted"'),
        (r"an escaped quote \" and text", r"an escaped quote \" and text"),
        (r"{\it Mixture} of {\bf Bold} experts", "Mixture of Bold experts"),  # font switches, not \i, \b
    ],
)
def test_every_form_of_a_text_accent_reads_as_its_letter(raw, shown):
    assert readable(raw) == shown


ACCENT_FORMS = [
    r"K\"ahler",
    r"Poincar\'e",
    r"Poincar\'{e}",
    r"probl\`eme",
    r"C\^ote",
    r"Ma\~nana",
    r"Ca\~{n}ada",
    r"Schr{\"o}dinger",
    r"Schr\"{o}dinger",
    r"Schr{\"{o}}dinger",
    r"Fran\c{c}ois",
    r"Fran\c cois",
    r"Fran{\c c}ois",
    r"Gau\ss{} sums",
    r"Gau{\ss} sums",
    r"Erd\H{o}s",
    r"Erd{\H o}s",
    r"\v{S}ediv\'y",
    r"Dvo\v{r}\'ak",
    r"{\AA}ngstr{\"o}m",
    r"{\o}rsted",
    r"\l{}ukasiewicz",
    r"Ha\"{\i}ti",
    r"\'{E}cole",
    r"\u{a}\r{a}\k{a}\={a}\.{z}\d{a}\b{a}",
]


@pytest.mark.parametrize("raw", ACCENT_FORMS)
def test_the_display_and_the_tagger_read_an_accent_alike(raw):
    """The keyphrase tagger reads accented letters with :func:`latex.read_accents`: its tags
    are spelled as the display shows the text ("Kähler manifold", never "ahler manifold")."""
    shown = readable(raw)
    assert latex.read_accents(raw) == shown and "\\" not in shown and "{" not in shown
    assert unicodedata.is_normalized("NFC", shown)


def test_accented_letters_span_the_braces_around_a_letter():
    text = r"Schr{\"o}dinger and K\"ahler, Gau\ss{} sums"
    found = latex.accented_letters(text)
    assert [(text[a:b], letter) for a, b, letter in found] == [('{\\"o}', "ö"), ('\\"a', "ä"), ("\\ss{}", "ß")]
    assert latex.accented_letters(r"\alpha, \cal K, \it text, C:\Users\bob, \\ break") == []


@pytest.mark.parametrize(
    "text",
    [
        "A $5 price cut",
        "US$ 20 per barrel",
        "Prices rose from $5 to $10 on Monday",
        "Between $20,000 and $30,000 a year",
        "Tickets: $5-$10",
        "costs $5,$6 or $7",
        "Qubits now cost $5 each, or US$ 20 for a pack",
        "$5 and US$6",
        "Revenue was $3.2bn in 2023, up from $2.9bn",
        "50% of users -- and ~all of them -- use C:\\Users\\bob\\notes",
        "naïve café in 東京, Zürich — “quoted” …",
        "",
    ],
)
def test_text_without_latex_is_untouched(text):
    assert readable(text) == text


def test_none_reads_as_empty():
    assert readable(None) == ""


@pytest.mark.parametrize(
    "raw, shown",
    [
        (r"an unclosed $\alpha and more", "an unclosed $α and more"),  # the $ stays: not math
        (r"a \frac{ that never closes", r"a \frac{ that never closes"),
        (r"$\frac{1$ broken", r"$\frac{1$ broken"),
        (r"{\em never closed", r"{\em never closed"),
        (r"In $\XQM$, a quark", r"In $\XQM$, a quark"),  # an author's own macro: kept as written
        ("$", "$"),
        ("\\", "\\"),
    ],
)
def test_malformed_latex_is_kept_as_written(raw, shown):
    assert readable(raw) == shown


def test_a_failing_library_gives_the_raw_text(monkeypatch):
    def broken(text):
        raise RuntimeError("pylatexenc bug")

    monkeypatch.setattr(latex, "_converted", broken)
    assert readable(r"$\alpha$") == r"$\alpha$"


def test_markup_inside_math_is_left_for_the_sanitiser():
    """An HTML summary's math can hold entities and tags: converting them would tear the
    markup apart, so such a span stays as written."""
    assert readable("<p>$a &lt; b$ and $x<b>y</b>$</p>") == "<p>$a &lt; b$ and $x<b>y</b>$</p>"


@pytest.mark.skipif(
    not ARXIV.exists(), reason="needs ../shared/data/arxiv-2000 (the team's shared data folder, not part of a clone)"
)
def test_arxiv_titles_lose_their_dollars():
    """Nearly every arXiv title with math reads without ``$`` after conversion; the rest
    use their authors' own macros, which stay as written."""
    titles = [json.loads(line)["title"] for line in ARXIV.read_text().splitlines()]
    with_math = [t for t in titles if "$" in t]
    still = [t for t in with_math if "$" in readable(t)]
    assert len(with_math) > 50 and len(still) < len(with_math) / 10


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # a trial read "λW₁" for a norm and "α≈ 0.076" for a relation
        (r"penalty $\lambda\|W\|_1$", "penalty λ‖W‖₁"),
        (r"$\alpha \approx 0.076$", "α ≈ 0.076"),
        (r"$x \in \mathbb{R}^3$", "x ∈ ℝ³"),
        # a script right after a command: "\sumᵢ" was one unknown command, and the sum vanished
        (r"$\sum_{i} x_i$", "∑ᵢ xᵢ"),
    ],
)
def test_math_keeps_its_meaning(raw, shown):
    assert readable(raw) == shown


def _accented(base: str, mark: str) -> str:
    return unicodedata.normalize("NFC", base + mark)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # a trial read "G₂" for G̃₂: the tilde fell on TeX's control space and was lost
        (r"$\tilde G_2$-structure", _accented("G", "\u0303") + "₂-structure"),
        (r"$\tilde{x}$ and $\tilde x$", _accented("x", "\u0303") + " and " + _accented("x", "\u0303")),
        (r"$\hat x$", _accented("x", "\u0302")),
        (r"$\bar x$", _accented("x", "\u0304")),
        (r"$\vec v$", _accented("v", "\u20d7")),
        (r"$\dot x$", _accented("x", "\u0307")),
        (r"$\ddot x$", _accented("x", "\u0308")),
        (r"$\check x$", _accented("x", "\u030c")),
        (r"$\breve x$", _accented("x", "\u0306")),
        (r"$\acute x$", _accented("x", "\u0301")),
        (r"$\grave x$", _accented("x", "\u0300")),
        (r"$\hat\mu$", _accented("μ", "\u0302")),
        # pylatexenc drops the wide accents: "AB" for the segment A̅B̅
        (r"$\widetilde{AB}$", _accented("A", "\u0303") + _accented("B", "\u0303")),
        (r"$\widehat{xy}$", _accented("x", "\u0302") + _accented("y", "\u0302")),
        (r"$\overline{AB}$", _accented("A", "\u0305") + _accented("B", "\u0305")),
    ],
)
def test_math_accents_are_drawn_never_dropped(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "raw",
    [
        r"a $\widehat{f(x)+g(x)}$ bound",  # an accent over a formula: Unicode cannot draw it
        r"the $\sqrt[5]{x}$ root",  # pylatexenc drops the index: "√(x)" for a fifth root
        r"In $\XQM(\sqrt{5})$, a quark",  # an author's macro: "$\XQM(√(5))$" was half read
    ],
)
def test_math_that_cannot_be_read_whole_is_kept_whole(raw):
    assert readable(raw) == raw


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # arXiv authors' own blackboard macros: conventional, so read rather than kept
        (r"forms over $\Q(\sqrt{5})$", "forms over ℚ(√5)"),
        (r"$\R^n$, $\Z_n$, $\N$ and $\C$", "ℝⁿ, ℤₙ, ℕ and ℂ"),
        (r"$\sqrt{n+1}$ and $\sqrt[3]{2}$", "√(n+1) and ∛2"),
        # standard LaTeX pylatexenc lacks: these spans were half read ("$μ \ne 0$")
        (r"QCD at $\mu \ne 0$", "QCD at μ ≠ 0"),
        (r"$f\colon X\to Y$", "f: X→ Y"),
        (r"$\left. f \right|_{x=0}$", "f |ₓ₌₀"),
        (r"$\bm{x}$", "𝐱"),
        # a "<" with no ">" is a relation, not a tag: "$0<p≤ 1$" was half read
        (r"with $0<p\le 1$", "with 0<p≤ 1"),
    ],
)
def test_conventional_macros_are_read_whole(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # the space before the closing dollar made it a price's: "$ν= 1/2 $" was shown
        (r"double layers near $\nu= 1/2 $", "double layers near ν= 1/2"),
        (r"a $\sim$10x speed-up", "a ∼10x speed-up"),
        (r"where $ \epsilon $ is small", "where ϵ is small"),
        (r"Im$ \mu = e G_F^2$ here", "Imμ = e G²_F here"),
        # math refused as math is kept whole, and its closing dollar opens nothing: "v$ be …
        # where $" had paired, and the next span was read as "$ ϵ $"
        (
            r"Let $ v$ be a field \emph{on} the plane, where $ \epsilon $ is small",
            "Let $ v$ be a field on the plane, where ϵ is small",
        ),
        # "$$" across two spans is not display math: the second span lost its opening dollar
        (r"(M$_*$$\sim$2 M$_\odot$)", "(M_*∼2 M_⊙)"),
    ],
)
def test_clear_math_with_a_price_sign_is_read(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "text",
    [
        "$5 = $10 at the time",
        "echo $A_B $C",
        "between $x and $y",
        "US$ 20 or US$ 30",
    ],
)
def test_prices_and_other_dollars_stay_as_written(text):
    assert readable(text) == text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # "B_d⁰" read as B with the subscript d⁰; η^((')) had an apostrophe for a prime
        (r"$B_d^0 \to J/\psi \eta^{(\prime)}$", "B⁰_d → J/ψ η⁽′⁾"),
        (r"$B_{d}^0 \to X$", "B⁰_d → X"),  # the group's space was dropped: "B⁰_d→ X"
        (r"Hilbert $C^*$-modules", "Hilbert C*-modules"),  # was "C^*"
        (r"$S_3$-symmetric", "S₃-symmetric"),
        (r"$y^\prime$ and $K^\ast$", "y′ and K*"),
        # a script holding braces: "e^i/ϵS" read as (e^i)/ϵ
        (r"$e^{\frac{i}{\epsilon}S}$", "e^(i/ϵS)"),
    ],
)
def test_scripts_read_as_unicode_or_plainly(raw, shown):
    assert readable(raw) == shown
