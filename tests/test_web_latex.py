"""LaTeX in arXiv titles and abstracts reads as Unicode wherever a person reads it (feed
cards, search, explain, digest, the Atom feed, the terminal digest), still escaped and
sanitised; the database and the MCP tools keep the LaTeX."""

from __future__ import annotations

import re

import feedparser
import pytest
from web_support import client, seed

TITLE = r"$\mathcal{O}(n^2)$ attention for \emph{in vivo} $k$-means"
SHOWN = "𝒪(n²) attention for in vivo k-means"
SUMMARY = (
    r"We cut the cost of attention to $\mathcal{O}(n \log n)$ for $\geq 7$B language "
    r"models, 50\% less memory; interpretability of $\alpha$-divergence. " + "More. " * 40
)


def seeded_with(db, add_items, title: str, summary: str, **item) -> int:
    """The web's seed archive and one newest item with this LaTeX title and summary: its id."""
    seed(db, add_items)
    return add_items([{"title": title, "summary": summary, "days_ago": 0.1, **item}])[0]


@pytest.fixture
def latex_id(db, add_items, no_bar):
    return seeded_with(
        db,
        add_items,
        TITLE,
        SUMMARY,
        tags=["language models", "interpretability"],
        url="https://arxiv.org/abs/2601.00099",
        content_type="paper",
    )


@pytest.fixture
def web(db_path, latex_id):
    with client(db_path) as c:
        yield c


def test_a_feed_card_shows_the_title_and_abstract_as_unicode(web):
    page = web.get("/feed?user=ada").text
    assert SHOWN in page and r"\mathcal" not in page
    assert "𝒪(n log n) for ≥ 7B language models, 50% less memory" in page  # preview and prose
    assert "α-divergence" in page


def test_search_explain_and_digest_show_it_too(web, latex_id):
    assert SHOWN in web.get("/search?user=ada&q=attention").text
    explain = web.get(f"/explain?user=ada&item_id={latex_id}").text
    assert f"<title>Why · {SHOWN} · hermes</title>" in explain and f">{SHOWN}</h1>" in explain
    digest = web.get("/digest?user=ada&days=7&per_topic=50").text
    assert SHOWN in digest and r"$k$" not in digest


def test_the_atom_feed_title_and_summary_are_unicode(web):
    parsed = feedparser.parse(web.get("/feed/ada.atom").content)
    entry = next(e for e in parsed.entries if e.link == "https://arxiv.org/abs/2601.00099")
    assert entry.title == SHOWN and "𝒪(n log n)" in entry.summary


def test_stored_text_and_mcp_results_keep_the_latex(web, db, latex_id):
    from hermes.tools import call_tool, collect_tools

    assert db.execute("SELECT title FROM items WHERE id = ?", [latex_id]).fetchone()[0] == TITLE
    found = call_tool(db, collect_tools()["search_feed"], {"user": "ada", "query": "attention"})
    assert TITLE in [r["title"] for r in found["results"]]


def test_converted_text_is_still_escaped_and_sanitised(db, db_path, add_items, no_bar):
    seed(db, add_items)
    add_items(
        [
            {
                "title": r"$\alpha$ <script>alert(1)</script> \emph{<img src=x onerror=alert(2)>}",
                "summary": r"<p>$\beta$-decay</p><script>alert(3)</script>" + " words" * 60,
                "days_ago": 0.1,
                "url": "https://e.org/x",
            }
        ]
    )
    with client(db_path) as web:
        page = web.get("/feed?user=ada").text
    assert "α &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;" in page
    assert "β-decay" in page
    assert "<script>alert" not in page and "<img" not in page


def test_the_terminal_digest_shows_unicode():
    from hermes_digest.render import render_digest

    item = {
        "id": 1,
        "title": TITLE,
        "reason": r"close to “$k$-means”, which you liked",
        "source": "arXiv",
        "url": "https://arxiv.org/abs/1",
    }
    lines = []
    render_digest(
        {
            "topics": [{"label": "ML", "n_total": 1, "items": [item]}],
            "saved": {"items": [{**item, "saved_at": "2026-01-01"}], "n_total": 1},
        },
        "ada",
        echo=lines.append,
    )
    text = "\n".join(lines)
    assert text.count(SHOWN) == 2 and "“k-means”" in text and "$" not in text


def test_the_toast_after_a_click_names_the_item_as_its_card_does(web, latex_id):
    from web_support import token

    r = web.post(
        "/click",
        data={"csrf_token": token(web, "/"), "user": "ada", "item_id": latex_id, "liked": "1"},
        headers={"Accept": "application/json"},
        follow_redirects=False,
    )
    message = r.json()["message"]
    assert SHOWN[:40] in message and r"\mathcal" not in message


def test_the_terminal_feed_shows_unicode_and_its_json_keeps_the_latex(db_path, latex_id):
    import json

    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    def run(*args):
        return CliRunner().invoke(build_app(), [*args, "--db", str(db_path)])

    shown = run("feed", "ada", "--limit", "50")
    assert shown.exit_code == 0, shown.output
    assert SHOWN in shown.stdout and r"\mathcal" not in shown.stdout
    as_json = json.loads(run("feed", "ada", "--limit", "50", "--json").stdout)
    assert TITLE in [i["title"] for i in as_json["items"]]


def test_a_reason_quotes_a_latex_title_readably_and_never_cuts_a_command(db, add_items, latex_id):
    """A reason quotes the nearest liked title cut to 60 characters: cut as written it read
    "…in $\\mathca…" on every face, MCP included."""
    from hermes.tools import call_tool, collect_tools

    tools = collect_tools()
    (twin,) = add_items(
        [{"title": TITLE, "summary": SUMMARY, "days_ago": 0.1, "url": "https://arxiv.org/abs/2601.00100"}]
    )  # the same vector
    assert call_tool(db, tools["record_feedback"], {"user": "ada", "item_id": latex_id, "liked": True})["ok"]
    why = call_tool(db, tools["explain_item"], {"user": "ada", "item_id": twin, "since_days": None})["explanation"]
    liked = [p for p in why["phrases"] if "which you liked" in p]
    assert liked and f"“{SHOWN}”" in liked[0] and "$" not in liked[0]
    assert why["title"] == TITLE  # the item's own field keeps the LaTeX


def test_a_card_shows_a_trial_title_with_its_accent_and_no_dollars(db, db_path, add_items, no_bar):
    """A user trial read "G₂" (the tilde dropped), "$ν= 1/2 $" and "$\\Q(√(5))$" on the
    cards: the accent is drawn, and each math span is read whole."""
    seed(db, add_items)
    add_items(
        [
            {
                "title": r"$\tilde G_2$-structures near $\nu= 1/2 $ over $\Q(\sqrt{5})$",
                "summary": "words " * 60,
                "days_ago": 0.1,
                "url": "https://e.org/g2",
            }
        ]
    )
    with client(db_path) as web:
        page = web.get("/feed?user=ada").text
    assert "G\u0303₂-structures near ν= 1/2 over ℚ(√5)" in page


TRIAL_TITLE = r"Pairing in underdoped Pr$_{2-x}$Ce$_x$CuO$_{4-\delta}$ near high-$T_c$"
TRIAL_SUMMARY = (
    r"We present a $^{63,65}$Cu NMR study; the site energies $\epsilon_R^i$ of snake_case and "
    r"https://en.wikipedia.org/wiki/Kondo_(film) stay. " + "More words. " * 30
)


@pytest.fixture
def trial_id(db, add_items, no_bar):
    return seeded_with(db, add_items, TRIAL_TITLE, TRIAL_SUMMARY, url="https://arxiv.org/abs/2601.00777")


def test_scripts_unicode_cannot_write_are_set_on_the_page(db_path, trial_id):
    """A user trial read "Pr₂₋ₓCeₓCuO_(4-δ)", "^(63,65)Cu" and "ϵⁱ_R" on the web: the
    readable text's own spelling of a script Unicode has no characters for. A page sets them
    as <sub>/<sup> (a script's hyphen a minus), in the card's title, preview and abstract and
    on the explain page; attributes and the window's title keep the readable text."""
    with client(db_path) as web:
        page = web.get("/feed?user=ada").text
        explain = web.get(f"/explain?user=ada&item_id={trial_id}").text
    title = "Pairing in underdoped Pr₂₋ₓCeₓCuO<sub>4−δ</sub> near high-T<sub>c</sub>"
    assert f">{title}</button>" in page and f">{title}</h1>" in explain
    assert page.count("We present a <sup>63,65</sup>Cu NMR study; the site energies ϵⁱ<sub>R</sub>") == 2
    assert "_(4-δ)" not in re.sub(r'="[^"]*"', "", page)  # as text, in no element
    assert 'aria-label="More like this: Pairing in underdoped Pr₂₋ₓCeₓCuO_(4-δ) near high-T_c"' in page
    assert "<title>Why · Pairing in underdoped Pr₂₋ₓCeₓCuO_(4-δ) near high-T_c · hermes</title>" in explain
    assert "of snake_case and https://en.wikipedia.org/wiki/Kondo_(film) stay" in page  # not scripts


def test_other_faces_keep_the_readable_text(db_path, trial_id):
    parsed = feedparser.parse(client(db_path).get("/feed/ada.atom").content)
    entry = next(e for e in parsed.entries if e.link == "https://arxiv.org/abs/2601.00777")
    assert entry.title == "Pairing in underdoped Pr₂₋ₓCeₓCuO_(4-δ) near high-T_c"


def test_a_script_brings_no_markup_from_a_feed(db, db_path, add_items, no_bar):
    seed(db, add_items)
    add_items(
        [
            {
                "title": "x_(<img src=x onerror=alert(1)>) and y^(&lt;b&gt;)",
                "summary": "<p>$T_c$ and <code>a_(b)</code></p><script>x_(1)</script>" + "<p>words</p>" * 40,
                "days_ago": 0.1,
                "url": "https://e.org/s",
            }
        ]
    )
    with client(db_path) as web:
        page = web.get("/feed?user=ada").text
    assert "x<sub>&lt;img src=x onerror=alert(1)&gt;</sub> and y<sup>&amp;lt;b&amp;gt;</sup>" in page
    assert "<p>T<sub>c</sub> and <code>a_(b)</code></p>" in page  # code is shown as written
    assert "<img" not in page and "<script>x" not in page


@pytest.mark.parametrize(
    ("shown", "html"),
    [
        ("Pr₂₋ₓCeₓCuO_(4-δ)", "Pr₂₋ₓCeₓCuO<sub>4−δ</sub>"),
        ("^(63,65)Cu", "<sup>63,65</sup>Cu"),
        ("ϵⁱ_R", "ϵⁱ<sub>R</sub>"),
        ("ϵ_( env) ∼ 5", "ϵ<sub>env</sub> ∼ 5"),
        ("d_(x^2-y^2) gap", "d<sub>x<sup>2</sup>−y<sup>2</sup></sub> gap"),
        ("(x)_c, B⁰_d, T_c", "(x)<sub>c</sub>, B⁰<sub>d</sub>, T<sub>c</sub>"),
        # text that was never LaTeX: a name, a file, an address, a face
        ("snake_case, file_a, os.path_join, /a_b, __init__, ^_^, _it_", None),
        ("see https://x.org/wiki/Kondo_(film)", None),
        ("k_BT", None),  # one letter before another: not told from a name ("test_xy")
    ],
)
def test_which_spellings_are_scripts(shown, html):
    from markupsafe import escape

    from hermes.web.render import scripts_html

    assert scripts_html(shown) == (escape(shown) if html is None else html)
