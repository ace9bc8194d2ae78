"""The persona page: the interests text and what the ranking leaves out of it, changing
the interests, renaming, and resetting the feedback or deleting the persona after a page that
says what would be lost — every change through the persona tools, every form with its
CSRF token."""

from __future__ import annotations

import html
import re

import pytest
from web_support import INTERESTS, clicks, client, seed, token


@pytest.fixture
def ids(db, add_items, no_bar):
    return seed(db, add_items)


@pytest.fixture
def web(db_path, ids):
    with client(db_path) as c:
        yield c


def post(c, path, data, *, page="/persona?user=ada"):
    return c.post(path, data={"csrf_token": token(c, page), **data}, follow_redirects=False)


def flash(c, response) -> str:
    """The one-time message the redirect carries, as the next page shows it."""
    page = c.get(response.headers["location"]).text
    found = re.search(r'<span class="toast-message">(.*?)</span>', page, re.S)
    return html.unescape(found.group(1)) if found else ""


def interests(db, name="ada"):
    row = db.execute("SELECT interests FROM users WHERE name = ?", [name]).fetchone()
    return row[0] if row else None


def test_the_persona_page_shows_the_interests_and_is_linked_from_every_page(web):
    page = web.get("/persona?user=ada")
    assert page.status_code == 200
    assert INTERESTS in page.text and "No clicks yet" in page.text
    for form in ("/persona/interests", "/persona/rename"):
        assert f'action="{form}"' in page.text
    assert 'href="/persona/reset?user=ada"' in page.text
    assert 'href="/persona/delete?user=ada"' in page.text
    for where in ("/feed?user=ada", "/digest?user=ada", "/corpus?user=ada"):
        chip = re.search(r'<a class="persona-chip" href="([^"]+)"', web.get(where).text)
        assert chip.group(1) == "/persona?user=ada", where  # it went to the persona picker
    assert 'href="/persona?user=ada">Change…</a>' in web.get("/feed?user=ada").text
    assert 'href="/persona?user=ada">Edit</a>' in web.get("/").text


def test_an_unknown_persona_page_is_a_404(web):
    r = web.get("/persona?user=nobody")
    assert r.status_code == 404 and "nobody" in r.text
    assert web.get("/persona/explode?user=ada").status_code == 404


def test_changing_the_interests_goes_through_update_persona_and_says_what_it_left_out(web, db):
    text = "Sparse autoencoders and circuits. I do not care about quantum computing."
    r = post(web, "/persona/interests", {"user": "ada", "interests": text})
    assert r.status_code == 303 and r.headers["location"] == "/persona?user=ada"
    assert interests(db) == text
    said = flash(web, r)
    assert said.startswith("Updated the interests of 'ada'; the next ranking uses them.")
    assert "“do not care about quantum computing”" in said and "✗ on such an item" in said
    page = web.get("/persona?user=ada").text  # said for as long as the text says it
    assert (
        '<p class="not-wanted">Not ranked as interests, since they say what not to show: '
        "“do not care about quantum computing”"
    ) in html.unescape(page)
    again = post(web, "/persona/interests", {"user": "ada", "interests": text})
    assert "already has exactly these interests; nothing changed" in flash(web, again)


@pytest.mark.parametrize(
    "typed, needle",
    [
        ("", "The interests text is empty; write what this persona wants to read"),
        ("x" * 4001, "The interests text must be a string of at most 4,000 characters, got"),
    ],
)
def test_a_refused_interests_text_is_said_beside_the_form_and_kept(web, db, typed, needle):
    r = post(web, "/persona/interests", {"user": "ada", "interests": typed})
    assert r.status_code == 400
    form = r.text[r.text.index('action="/persona/interests"') :]
    assert f'<p class="flash flash-error" role="alert">{needle}' in form
    assert f">{typed}</textarea>" in form  # what was typed, not the stored text
    assert interests(db) == INTERESTS


def test_rename_keeps_the_clicks_and_moves_the_page(web, db, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    r = post(web, "/persona/rename", {"user": "ada", "new_name": "ada lovelace"})
    assert r.status_code == 303 and r.headers["location"] == "/persona?user=ada+lovelace"
    said = flash(web, r)
    assert said.startswith("Renamed persona 'ada' to 'ada lovelace'; its interests, 1 click and corpus are kept.")
    assert "/feed/ada.atom" in said  # what still names the old name
    assert interests(db, "ada lovelace") == INTERESTS and interests(db) is None
    assert [c[2] for c in clicks(db)] == ["like"]
    assert web.get("/persona?user=ada").status_code == 404


def test_a_taken_name_is_refused_beside_the_rename_form(web, db):
    from hermes.storage.records import create_user

    create_user(db, "grace", "compilers")
    r = post(web, "/persona/rename", {"user": "ada", "new_name": "Grace"})
    assert r.status_code == 400
    form = r.text[r.text.index('action="/persona/rename"') :]
    assert '<p class="flash flash-error" role="alert">' in form and "grace" in form.lower()
    assert 'value="Grace"' in form
    assert interests(db) == INTERESTS


def test_reset_feedback_first_shows_what_would_be_lost(web, db, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    post(web, "/click", {"user": "ada", "item_id": ids[4], "liked": "0"})
    page = web.get("/persona/reset?user=ada")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert '<p class="loss">This permanently deletes 2 clicks (1 like, 1 dislike)' in text
    assert "the persona and its interests text are kept" in text
    assert len(clicks(db)) == 2  # the preview changed nothing
    unconfirmed = post(web, "/persona/reset", {"user": "ada"})
    assert unconfirmed.status_code == 400 and len(clicks(db)) == 2
    r = post(web, "/persona/reset", {"user": "ada", "confirm": "yes"}, page="/persona/reset?user=ada")
    assert r.status_code == 303 and r.headers["location"] == "/persona?user=ada"
    assert flash(web, r).startswith("Deleted 2 clicks (1 like, 1 dislike)")
    assert clicks(db) == [] and interests(db) == INTERESTS


def test_delete_persona_first_shows_what_would_be_lost(web, db, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    text = html.unescape(web.get("/persona/delete?user=ada").text)
    assert "<p class=\"loss\">This permanently deletes persona 'ada' and 1 click (1 like, 0 dislikes).</p>" in text
    assert interests(db) == INTERESTS
    r = post(web, "/persona/delete", {"user": "ada", "confirm": "yes"}, page="/persona/delete?user=ada")
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert flash(web, r).startswith("Deleted persona 'ada' and 1 click (1 like, 0 dislikes)")
    assert interests(db) is None and clicks(db) == []
    assert web.get("/persona/delete?user=ada").status_code == 404


@pytest.mark.parametrize(
    "path, data",
    [
        ("/persona/interests", {"user": "ada", "interests": "anything"}),
        ("/persona/rename", {"user": "ada", "new_name": "eve"}),
        ("/persona/reset", {"user": "ada", "confirm": "yes"}),
        ("/persona/delete", {"user": "ada", "confirm": "yes"}),
    ],
)
def test_every_persona_form_needs_its_csrf_token(web, db, path, data):
    r = web.post(path, data={**data, "csrf_token": "forged"}, follow_redirects=False)
    assert r.status_code == 403
    assert interests(db) == INTERESTS


def test_the_persona_page_says_so_when_the_persona_tools_are_disabled(db_path, ids, monkeypatch):
    monkeypatch.setenv("HERMES_PLUGINS", "signals,default_embedder,default_candidates,scorers")
    from hermes import plugins

    plugins.pm_cache_clear()
    with client(db_path) as c:
        page = c.get("/persona?user=ada").text
        assert "The persona tools are not available" in page and 'action="/persona/' not in page
        assert c.get("/persona/reset?user=ada").status_code == 503


def test_the_persona_page_says_what_the_clicks_taught_and_a_contradiction(web, db, ids):
    """A trial: the web persona page showed only click counts; `persona show` alone made the
    clicks understandable. Item 0 carries "interpretability", which the interests ask for."""
    from hermes.storage.clicks import record_click

    user = db.execute("SELECT id FROM users WHERE name = 'ada'").fetchone()[0]
    record_click(db, user, ids[2], True, "ui")  # graph neural networks, chemistry
    record_click(db, user, ids[0], False, "ui")  # interpretability, language models …
    page = html.unescape(web.get("/persona?user=ada").text)
    assert "What the clicks taught" in page and "learned from 2 clicks" in page
    assert "Tags you liked</dt><dd>" in page and "chemistry" in page
    assert "Disliked, but the interests ask for them: interpretability (tag, 1 dislike)" in page
    assert 'href="/search?user=ada"' in page


def test_a_rated_item_can_be_unrated_where_rated_items_are_shown(web, db, ids):
    """Search shows rated items; each has Unrate (a rating could be taken back only by the
    toast's Undo, right after it was given)."""
    from web_support import token

    from hermes.storage.clicks import record_click

    user = db.execute("SELECT id FROM users WHERE name = 'ada'").fetchone()[0]
    record_click(db, user, ids[0], False, "ui")
    page = web.get("/search?user=ada&q=sparse").text
    card = re.search(rf'<article[^>]*id="item-{ids[0]}".*?</article>', page, re.S).group(0)
    assert re.search(r'<form[^>]*data-act="unrate"(?! hidden)[^>]*>', card)
    r = web.post(
        "/click",
        data={"csrf_token": token(web, "/search?user=ada&q=sparse"), "user": "ada", "item_id": ids[0], "liked": "none"},
        headers={"Accept": "application/json"},
    )
    assert r.json()["ok"] and r.json()["clicked"] is None
    assert clicks(db) == []
    # an unrated card carries the form hidden, for the script to show after a ✓ or ✗
    feed = web.get("/feed?user=ada").text
    assert re.search(r'<form[^>]*data-act="unrate" hidden>', feed)


# --- taking back a library import (reset_feedback's source) ---------------------------------

#: one BibTeX entry the archive does not hold: the import stores it as an item of its own
LIBRARY = """@article{own, title = {Tidal debris of dwarf galaxies in the outer halo}, year = {2019},
  doi = {10.1000/tidal.debris}, abstract = {We model tidal debris.}}"""


@pytest.fixture
def imported(db, ids):
    """ada: one like given in the web (source ui) and a library import of one entry stored as
    an item (one bootstrap like)."""
    from hermes.storage.clicks import record_click
    from hermes.tools import call_tool, collect_tools

    user = db.execute("SELECT id FROM users WHERE name = 'ada'").fetchone()[0]
    record_click(db, user, ids[0], True, "ui")
    result = call_tool(db, collect_tools()["import_library"], {"name": "ada", "text": LIBRARY})
    assert result["ok"], result["message"]
    return user


def sources(db) -> list[str]:
    return sorted(row[3] for row in clicks(db))


def stored_entries(db) -> int:
    return db.execute("SELECT count(*) FROM items WHERE feed_id IS NULL").fetchone()[0]


def test_the_start_over_panel_offers_to_take_back_the_library_import_alone(web, db, imported):
    """A newcomer trial: the web's reset had no "library import only" choice (the CLI's
    --source bootstrap and MCP's source), and ?source=bootstrap still said it deleted every
    click."""
    page = html.unescape(web.get("/persona?user=ada").text)
    panel = re.search(r'<section class="panel" id="start-over">.*?</section>', page, re.S).group(0)
    assert 'href="/persona/reset?user=ada&source=bootstrap">Take back the library import…</a>' in panel
    assert "bootstrap clicks only (1 click" in panel
    assert 'href="/persona/reset?user=ada">Reset everything…</a> deletes all 2 likes and dislikes' in panel


def test_without_bootstrap_clicks_there_is_one_reset(web, db, ids):
    post(web, "/click", {"user": "ada", "item_id": ids[0], "liked": "1"})
    page = web.get("/persona?user=ada").text
    assert "Take back the library import" not in page and "source=bootstrap" not in page
    assert 'href="/persona/reset?user=ada">Reset feedback…</a>' in page


def test_the_import_s_confirmation_says_what_the_tool_would_take_back(web, db, imported):
    from hermes.tools import call_tool, collect_tools

    page = web.get("/persona/reset?user=ada&source=bootstrap")
    assert page.status_code == 200
    text = html.unescape(page.text)
    preview = call_tool(db, collect_tools()["reset_feedback"], {"name": "ada", "source": "bootstrap"})
    # the tool's own preview for that source, word for word (its library entry too)
    assert f'<p class="loss">This permanently deletes {preview["loss"]}.</p>' in text
    assert "1 bootstrap click (1 like, 0 dislikes)" in text and "1 library entry stored as an item" in text
    assert "2 clicks" not in text
    assert "Take back the library import of ada?" in text
    assert '<input type="hidden" name="source" value="bootstrap">' in text
    assert sources(db) == ["bootstrap", "ui"] and stored_entries(db) == 1  # a preview changes nothing
    # the whole reset's page is unchanged: every click
    whole = html.unescape(web.get("/persona/reset?user=ada").text)
    assert "This permanently deletes 2 clicks (2 likes, 0 dislikes)" in whole
    assert 'name="source"' not in whole


def test_taking_back_the_import_keeps_the_clicks_given_in_the_web(web, db, imported):
    page = "/persona/reset?user=ada&source=bootstrap"
    unconfirmed = post(web, "/persona/reset", {"user": "ada", "source": "bootstrap"}, page=page)
    assert unconfirmed.status_code == 400 and sources(db) == ["bootstrap", "ui"]
    r = post(web, "/persona/reset", {"user": "ada", "source": "bootstrap", "confirm": "yes"}, page=page)
    assert r.status_code == 303 and r.headers["location"] == "/persona?user=ada"
    said = flash(web, r)
    assert said.startswith("Deleted 1 bootstrap click (1 like, 0 dislikes)"), said
    assert sources(db) == ["ui"] and stored_entries(db) == 0
    assert "Take back the library import" not in web.get("/persona?user=ada").text


def test_a_source_the_tool_does_not_know_is_refused_by_the_tool(web, db, imported):
    page = web.get("/persona/reset?user=ada&source=zotero")
    assert page.status_code == 400 and "zotero" in page.text and "bootstrap" in page.text
    assert "btn-danger" not in page.text
    r = post(web, "/persona/reset", {"user": "ada", "source": "zotero", "confirm": "yes"})
    assert r.status_code == 400 and sources(db) == ["bootstrap", "ui"]


def test_the_import_s_reset_needs_its_csrf_token(web, db, imported):
    r = web.post(
        "/persona/reset",
        data={"user": "ada", "source": "bootstrap", "confirm": "yes", "csrf_token": "forged"},
        follow_redirects=False,
    )
    assert r.status_code == 403 and sources(db) == ["bootstrap", "ui"]


def test_with_nothing_to_take_back_the_reset_page_offers_no_button(web, db, imported):
    """The import taken back already: the page said it would delete 0 bootstrap clicks and
    offered the button. It goes back to the persona page saying there is nothing to reset."""
    page = "/persona/reset?user=ada&source=bootstrap"
    post(web, "/persona/reset", {"user": "ada", "source": "bootstrap", "confirm": "yes"}, page=page)
    r = web.get(page, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/persona?user=ada"
    shown = web.get(r.headers["location"]).text
    assert "Persona &#39;ada&#39; has no bootstrap clicks: nothing to reset." in shown or (
        "Persona 'ada' has no bootstrap clicks: nothing to reset." in html.unescape(shown)
    )
    assert "Take back the import</button>" not in shown and sources(db) == ["ui"]
