"""The corpus JSON API through starlette's TestClient."""

from __future__ import annotations

import pytest
from hermes_corpus import signals as cs
from starlette.applications import Starlette
from starlette.testclient import TestClient


@pytest.fixture
def corpus_db(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice'), ('bob')")
    a, b, c = add_items(
        [
            {"title": "Galaxy evolution", "tags": ["galaxies"]},
            {"title": "Halo dynamics", "tags": ["galaxies", "dark matter"]},
            {"title": "Protein folding", "tags": ["proteins"]},
        ]
    )
    cs.record_progress(db, "alice", a, 0.9)  # r1 +exp a
    cs.add_highlight(db, "alice", b, "halos!")  # r2 +exp b
    cs.favorite(db, "alice", c)  # r3 +saved c
    cs.record_progress(db, "bob", c, 1.0)
    return {"db": db, "items": (a, b, c)}


@pytest.fixture
def client(corpus_db, db_path, pm):
    """A bare app with only the plugins' routes: the corpus API does not depend on the
    pages of the web UI."""
    app = Starlette()
    app.state.db_path = str(db_path)
    pm.hook.hermes_register_routes(app=app)
    with TestClient(app) as c:
        yield c


def test_summary(client, corpus_db):
    r = client.get("/api/corpus", params={"user": "alice"})
    assert r.status_code == 200
    body = r.json()
    assert body["ok"] is True
    assert (body["revision"], body["experienced_count"], body["saved_count"]) == (3, 2, 1)
    assert body["top_entities"][0]["entity"] == "galaxies"


def test_items_by_facet(client, corpus_db):
    a, b, c = corpus_db["items"]
    exp = client.get("/api/corpus/items", params={"user": "alice", "facet": "experienced"}).json()
    assert [i["item_id"] for i in exp["items"]] == [b, a] and exp["total"] == 2
    saved = client.get("/api/corpus/items", params={"user": "alice", "facet": "saved"}).json()
    assert [i["item_id"] for i in saved["items"]] == [c]
    default = client.get("/api/corpus/items", params={"user": "alice"}).json()
    assert default["facet"] == "experienced"


def test_changes(client, corpus_db):
    a, b, c = corpus_db["items"]
    body = client.get("/api/corpus/changes", params={"user": "alice", "since": 1}).json()
    assert body["ok"] and body["revision"] == 3 and body["truncated"] is False
    assert [(x["kind"], x["facet"], x["item_id"]) for x in body["changes"]] == [
        ("added", "experienced", b),
        ("added", "saved", c),
    ]


def test_ranked_and_entities(client, corpus_db):
    a, b, _c = corpus_db["items"]
    ranked = client.get("/api/corpus/ranked", params={"user": "alice", "limit": 5}).json()
    assert [i["item_id"] for i in ranked["items"]] == [a, b]
    entities = client.get("/api/corpus/entities", params={"user": "alice"}).json()
    assert entities["ok"] and {e["entity"] for e in entities["entities"] if e["kind"] == "tag"} == {
        "galaxies",
        "dark matter",
    }


@pytest.mark.parametrize(
    "path,params,status,expect",
    [
        ("/api/corpus", {"user": "nobody"}, 404, "unknown persona"),
        ("/api/corpus/items", {"user": "nobody", "facet": "saved"}, 404, "unknown persona"),
        ("/api/corpus/changes", {"user": "nobody"}, 404, "unknown persona"),
        ("/api/corpus/ranked", {"user": "nobody"}, 404, "unknown persona"),
        ("/api/corpus/entities", {"user": "nobody"}, 404, "unknown persona"),
        ("/api/corpus", {}, 400, "corpus needs user: a non-empty string"),
        ("/api/corpus/items", {"user": "alice", "facet": "heard"}, 400, 'one of "experienced", "saved"'),
        ("/api/corpus/changes", {"user": "alice", "since": "abc"}, 400, "since must be a whole number"),
        ("/api/corpus/changes", {"user": "alice", "since": "-1"}, 400, "at least 0"),
        ("/api/corpus/changes", {"user": "alice", "since": "99"}, 400, "beyond the current revision"),
        ("/api/corpus/ranked", {"user": "alice", "limit": "0"}, 400, "limit"),
        (
            "/api/corpus/ranked",
            {"user": "alice", "limit": "many"},
            400,
            'limit must be a whole number from 1 to 200, got "many"',
        ),
    ],
)
def test_errors_are_json(client, path, params, status, expect):
    r = client.get(path, params=params)
    assert r.status_code == status
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["ok"] is False and expect in body["message"]


def test_routes_are_read_only(client):
    r = client.post("/api/corpus", params={"user": "alice"})
    assert r.status_code == 405


def test_routes_are_mounted_in_the_web_app(corpus_db, db_path):
    from hermes.web.app import create_app

    with TestClient(create_app(str(db_path))) as c:
        r = c.get("/api/corpus", params={"user": "alice"})
        assert r.status_code == 200 and r.json()["revision"] == 3
        assert c.get("/api/corpus", params={"user": "nobody"}).status_code == 404


def test_a_route_calls_through_the_one_call_path(client, corpus_db, monkeypatch):
    """The routes call their tool through hermes.tools.call_tool_status (issue 35, one way to
    call a tool): a bug in the tool is a 500 in the envelope, its details kept out of the
    answer, not a traceback."""
    import hermes_corpus.entities

    def broken(*args, **kwargs):
        raise RuntimeError("a bug with a /secret/path in it")

    monkeypatch.setattr(hermes_corpus.entities, "top_entities", broken)
    r = client.get("/api/corpus", params={"user": "alice"})
    assert r.status_code == 500
    body = r.json()
    assert body["ok"] is False and body["server_error"] is True
    assert "corpus failed unexpectedly (RuntimeError in plugin 'corpus')" in body["message"]
    assert "/secret/path" not in body["message"] and "revision" in body
