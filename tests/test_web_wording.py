"""The web UI speaks to a person in a browser (issue 17): a refusal names pages and buttons
and links back, never a CLI command or an MCP tool, and a mistyped feed address is said next
to the form it was typed in."""

from __future__ import annotations

import asyncio

import pytest
from web_support import client, seed, token

from hermes.facekit import faces
from hermes.web.app import WebFace


@pytest.fixture
def web(db_path, db, add_items, no_bar):
    ids = seed(db, add_items)
    with client(db_path) as c:
        yield c, ids


def post(c, path, data, *, page="/", **kwargs):
    return c.post(path, data={"csrf_token": token(c, page), **data}, follow_redirects=False, **kwargs)


def test_a_request_is_answered_in_the_web_face_whatever_started_the_server():
    """``hermes web`` starts the server from the CLI's face; its pages still speak web."""
    seen = []

    async def page(scope, receive, send):
        seen.append(faces.face())

    with faces.speaking("cli"):
        asyncio.run(WebFace(page)({"type": "http"}, None, None))
        assert faces.face() == "cli"
    assert seen == ["web"]


@pytest.mark.parametrize(
    "path, fields",
    [
        ("/click", {"liked": "1"}),
        ("/favorite", {"on": "1"}),
        ("/read", {"on": "1"}),
    ],
)
def test_an_unknown_item_says_what_a_browser_user_can_do_and_links_back(web, db, path, fields):
    c, _ = web
    back = "/feed?user=ada&days=30"
    r = post(c, path, {"user": "ada", "item_id": "99999", "next": back, **fields}, page=back)
    assert r.status_code == 404
    assert "unknown item 99999" in r.text and "go back to the feed for the current items" in r.text
    assert "hermes feed" not in r.text and "`" not in r.text and "list_feed" not in r.text
    assert 'href="/feed?user=ada&amp;days=30">Back to the feed</a>' in r.text
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0


def test_the_back_link_never_leaves_the_site(web):
    c, _ = web
    r = post(c, "/click", {"user": "ada", "item_id": "99999", "liked": "1", "next": "//evil.example/x"})
    assert r.status_code == 404
    assert "evil.example" not in r.text and 'href="/">Back to the page you came from' in r.text


def test_a_script_gets_the_same_words_as_json(web):
    c, _ = web
    r = post(c, "/click", {"user": "ada", "item_id": "99999", "liked": "1"}, headers={"accept": "application/json"})
    assert r.status_code == 404
    assert "go back to the feed" in r.json()["message"]


@pytest.mark.parametrize(
    "url, needle",
    [
        ("ftp://example.org/feed", "The feed URL must start with http:// or https://"),
        ("not a url", "The feed URL must start with http:// or https://"),
        ("", "The feed URL must start with http:// or https://"),
    ],
)
def test_a_bad_feed_address_is_said_next_to_the_form(web, db, url, needle):
    c, _ = web
    r = post(c, "/feeds", {"url": url, "title": "Mine"}, page="/feeds")
    assert r.status_code == 400
    assert "Bad request" not in r.text  # the feeds page, not the bare error page
    form = r.text[r.text.index("<h2>Add a feed</h2>") :]
    assert f'<p class="flash flash-error" role="alert">{needle}' in form
    assert 'value="Mine"' in form and (not url or f'value="{url}"' in form)  # what was typed
    assert 'name="csrf_token" value="' in form  # the form can be sent again as it is
    assert "arXiv cs.LG" in r.text  # the list of feeds is still there
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 2
    # and the corrected form goes through the same CSRF check as before
    again = c.post("/feeds", data={"url": "ftp://x", "csrf_token": "forged"}, follow_redirects=False)
    assert again.status_code == 403
