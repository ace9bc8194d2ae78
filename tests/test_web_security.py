"""CSRF, GET-never-writes, escaping of hostile feed text, Host allow-list, headers."""

from __future__ import annotations

import os
import re
import stat
from html.parser import HTMLParser

import pytest
from web_support import clicks, client, seed, token

ACTIONS = [
    ("/click", {"user": "ada", "item_id": "1", "liked": "1"}),
    ("/read", {"user": "ada", "item_id": "1"}),
    ("/favorite", {"user": "ada", "item_id": "1", "on": "1"}),
    ("/highlight", {"user": "ada", "item_id": "1", "text": "a passage"}),
    ("/personas", {"name": "mallory", "interests": "x"}),
    ("/feeds", {"url": "https://example.org/feed.xml"}),
    ("/feeds/1/remove", {"confirm": "yes"}),
]


@pytest.fixture
def ids(db, add_items):
    return seed(db, add_items)


@pytest.fixture
def web(db_path, ids):
    with client(db_path) as c:
        yield c


def snapshot(db) -> dict:
    """Every row of every table, except caches a read may fill (the persisted interests
    vector, the tag-graph cache). Explanations are included: pages compute them, never store."""
    out = {}
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        if "cache" in name:
            continue
        cols = [c for c in db[name].columns_dict if c not in ("interests_key", "interests_vec")]
        quoted = ", ".join(f'"{c}"' for c in cols)
        out[name] = sorted(db.execute(f'SELECT {quoted} FROM "{name}"').fetchall(), key=repr)
    return out


# --- CSRF ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path, data", ACTIONS)
def test_post_without_token_is_403_and_writes_nothing(web, db, path, data):
    web.get("/")  # the session cookie exists; only the token is missing
    before = snapshot(db)
    r = web.post(path, data=data, follow_redirects=False)
    assert r.status_code == 403
    assert "security token" in r.text
    assert snapshot(db) == before


@pytest.mark.parametrize("path, data", ACTIONS)
def test_post_with_a_wrong_token_is_403(web, db, path, data):
    token(web)
    before = snapshot(db)
    r = web.post(path, data={**data, "csrf_token": "0" * 64}, follow_redirects=False)
    assert r.status_code == 403
    assert snapshot(db) == before


def test_token_of_another_session_is_refused(db_path, ids, db):
    with client(db_path) as alice, client(db_path) as mallory:
        stolen = token(mallory)
        token(alice)
        r = alice.post("/click", data={"csrf_token": stolen, "user": "ada", "item_id": ids[0], "liked": "1"})
        assert r.status_code == 403
    assert clicks(db) == []


def test_post_without_a_session_cookie_is_refused(db_path, ids, db):
    with client(db_path) as c:
        good = token(c)
        c.cookies.clear()
        r = c.post("/click", data={"csrf_token": good, "user": "ada", "item_id": ids[0], "liked": "1"})
        assert r.status_code == 403
    assert clicks(db) == []


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "https://testserver"},  # another scheme is another origin
        {"referer": "http://evil.example/page"},
    ],
)
def test_cross_origin_post_is_refused_even_with_a_token(web, db, ids, headers):
    r = web.post(
        "/click", data={"csrf_token": token(web), "user": "ada", "item_id": ids[0], "liked": "1"}, headers=headers
    )
    assert r.status_code == 403
    assert "another site" in r.text or "opaque origin" in r.text or "referred" in r.text
    assert clicks(db) == []


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://testserver"},
        {"referer": "http://testserver/feed?user=ada"},
        {},
    ],
)
def test_same_origin_post_with_token_is_accepted(web, db, ids, headers):
    r = web.post(
        "/click",
        data={"csrf_token": token(web), "user": "ada", "item_id": ids[0], "liked": "1"},
        headers=headers,
        follow_redirects=False,
    )
    assert r.status_code == 303
    assert clicks(db) == [(1, ids[0], "like", "ui")]


def test_token_in_header_works_for_scripts(web, db, ids):
    r = web.post(
        "/click",
        data={"user": "ada", "item_id": ids[0], "liked": "0"},
        headers={"X-CSRF-Token": token(web)},
        follow_redirects=False,
    )
    assert r.status_code == 303
    assert clicks(db) == [(1, ids[0], "dislike", "ui")]


def test_session_cookie_is_httponly_and_samesite_strict(db_path, ids):
    with client(db_path) as c:
        r = c.get("/")
    cookie = r.headers["set-cookie"]
    assert "hermes_session=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_every_form_carries_the_token(web, ids):
    web.post("/read", data={"csrf_token": token(web), "user": "ada", "item_id": ids[0]})
    for path in ("/", "/feed?user=ada", "/digest?user=ada", "/feeds", "/feeds/1/remove"):
        html = web.get(path).text
        forms = re.findall(r"<form[^>]*>.*?</form>", html, flags=re.S)
        assert forms, path
        for form in forms:
            if 'method="get"' in form:  # the search box: reads only
                assert 'action="/search"' in form, (path, form[:200])
                continue
            assert 'method="post"' in form, path
            assert 'name="csrf_token"' in form, (path, form[:200])


def test_secret_is_kept_private_in_hermes_home(db_path, ids):
    from starlette.testclient import TestClient

    from hermes import config
    from hermes.web.app import create_app

    with TestClient(create_app(str(db_path))) as c:
        first = token(c)
    path = config.home() / "web_secret"
    assert path.exists()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # Tokens survive a restart: the secret is read back, not regenerated.
    with TestClient(create_app(str(db_path))) as c:
        c.cookies.update({})
        second = token(c)
    assert len(first) == len(second) == 64


# --- GET never writes ------------------------------------------------------------------------------


def test_get_never_changes_state(web, db, ids):
    # A persona with some corpus state, so every page has something to show.
    web.post("/read", data={"csrf_token": token(web), "user": "ada", "item_id": ids[0]})
    web.post("/favorite", data={"csrf_token": token(web), "user": "ada", "item_id": ids[1], "on": "1"})
    before = snapshot(db)
    paths = [
        "/",
        "/feed?user=ada",
        "/feed?user=ada&days=all&limit=200",
        "/feed?user=nobody",
        "/feed?user=ada&limit=x",
        "/digest?user=ada",
        "/digest?user=ada&days=30",
        "/corpus?user=ada",
        "/feeds",
        "/feeds/1/remove",
        "/feeds/9/remove",
        "/static/hermes.css",
        f"/explain?user=ada&item_id={ids[3]}",
        f"/explain?user=ada&item_id={ids[0]}",
        # GETs that look like actions change nothing either
        f"/click?user=ada&item_id={ids[2]}&liked=1",
        f"/read?user=ada&item_id={ids[2]}",
        f"/favorite?user=ada&item_id={ids[2]}&on=1",
        "/feeds/1/remove?confirm=yes",
        "/personas?name=x&interests=y",
    ]
    for path in paths:
        web.get(path)
        web.head(path)
    assert snapshot(db) == before


# --- hostile feed text -----------------------------------------------------------------------------

HOSTILE = {
    "title": '<script>alert("title")</script><img src=x onerror=alert(1)>',
    "summary": (
        '<p onclick="alert(2)">Hello <a href="javascript:alert(3)">link</a>'
        '<script>alert(4)</script><iframe src="https://evil.example/"></iframe>'
        '<a href="https://ok.example/">fine</a><style>body{display:none}</style></p>'
    ),
    "tags": ['<b onmouseover="alert(5)">tag</b>'],
    "url": "javascript:alert(6)",
    "days_ago": 0.1,
}


class Audit(HTMLParser):
    """Collects what a browser would execute: script elements, handlers, script URLs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []

    def handle_starttag(self, tag, attrs):
        # The one script allowed is this server's own file (the CSP allows nothing else).
        own_script = tag == "script" and (dict(attrs).get("src") or "").startswith("/static/")
        if (
            tag in {"script", "iframe", "object", "embed", "frame", "style", "base", "meta"}
            and not own_script
            and not (tag == "meta" and all(k in {"charset", "name", "content"} for k, _ in attrs))
        ):
            self.problems.append(f"<{tag}>")
        self.in_script = tag == "script"
        for key, value in attrs:
            if key.startswith("on"):
                self.problems.append(f"{tag}[{key}]")
            if key == "style":
                self.problems.append(f"{tag}[style]")
            if key in {"href", "src", "action", "formaction"} and value:
                scheme = re.sub(r"[\x00-\x20]", "", value).split(":", 1)[0].lower()
                if ":" in value and scheme not in {"http", "https", "mailto"}:
                    self.problems.append(f"{tag}[{key}={value}]")

    def handle_data(self, data):
        if getattr(self, "in_script", False) and data.strip():
            self.problems.append("inline script")

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False


def audit(html: str) -> list[str]:
    parser = Audit()
    parser.feed(html)
    return parser.problems


def test_hostile_feed_text_is_escaped_and_sanitised(db_path, db, add_items, no_bar):
    seed(db, add_items)
    add_items([HOSTILE])
    with client(db_path) as c:
        for path in ("/feed?user=ada", "/digest?user=ada"):
            html = c.get(path).text
            assert audit(html) == [], path
            assert "&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;" in html  # title shown as text
            assert "alert(4)" not in html  # the script body is gone from the summary
            assert 'href="javascript:' not in html


def test_clean_html_drops_everything_active():
    from hermes.web.sanitize import clean_html

    out = str(clean_html(HOSTILE["summary"]))
    assert audit(out) == []
    assert "Hello" in out and 'href="https://ok.example/"' in out
    assert 'rel="noopener noreferrer nofollow"' in out
    assert "evil.example" not in out and "display:none" not in out


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://arxiv.org/abs/1", "https://arxiv.org/abs/1"),
        ("http://example.org/a?b=1&c=2", "http://example.org/a?b=1&c=2"),
        ("javascript:alert(1)", None),
        ("JaVaScRiPt:alert(1)", None),
        ("java\tscript:alert(1)", None),
        (" javascript:alert(1)", None),
        ("data:text/html,<script>alert(1)</script>", None),
        ("vbscript:msgbox", None),
        ("//evil.example/x", None),
        ("/relative/path", None),
        ("", None),
        (None, None),
    ],
)
def test_safe_url(url, expected):
    from hermes.web.sanitize import safe_url

    assert safe_url(url) == expected


def test_plain_text_summary_is_escaped_not_parsed():
    from hermes.web.sanitize import render_summary

    out = str(render_summary("if a < b and c > d then x & y\n\nsecond paragraph"))
    assert "&lt;" in out and "&amp;" in out
    assert "<p>second paragraph</p>" in out or "second paragraph" in out


# --- headers and hosts ----------------------------------------------------------------------------


def test_security_headers(web):
    r = web.get("/feed?user=ada")
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"


def test_host_allow_list_stops_dns_rebinding(db_path, ids, db):
    from hermes.web.server import allowed_hosts

    hosts = allowed_hosts("127.0.0.1", allow_remote=False)
    with client(db_path, allowed_hosts=hosts) as c:
        assert c.get("/", headers={"host": "127.0.0.1:8765"}).status_code == 200
        assert c.get("/", headers={"host": "localhost:8765"}).status_code == 200
        assert c.get("/", headers={"host": "[::1]:8765"}).status_code == 200
        r = c.get("/", headers={"host": "rebound.evil.example:8765"})
        assert r.status_code == 400 and "unknown Host" in r.text
        r = c.post(
            "/click", headers={"host": "rebound.evil.example"}, data={"user": "ada", "item_id": ids[0], "liked": "1"}
        )
        assert r.status_code == 400
    assert clicks(db) == []
    assert allowed_hosts("0.0.0.0", allow_remote=True) is None


def test_oversized_form_is_refused(web, db, ids):
    r = web.post(
        "/highlight", data={"csrf_token": token(web), "user": "ada", "item_id": ids[0], "text": "x" * (2 * 1024 * 1024)}
    )
    assert r.status_code == 403 and "too large" in r.text
    assert db.execute("SELECT count(*) FROM corpus_highlights").fetchone()[0] == 0
