"""Saving items no feed brought (``hermes save`` / ``save_item``): one metadata fetch from a
loopback fixture standing in for arXiv's API, a DOI resolver and a web page; an existing
item is only marked saved; offline, failed or refused lookups store nothing."""

from __future__ import annotations

import json

import pytest
from hermes_corpus import save as saving
from hermes_corpus.metadata import LookupFailed, Ref, identify
from ingest_server import FeedServer, Route
from typer.testing import CliRunner

from hermes.errors import InvalidInput
from hermes.tools import call_tool, collect_tools

ARXIV_QUERY = "/api/query?id_list=2401.12345&max_results=1"
# The shape of export.arxiv.org/api/query's answer (Atom 1.0 with the arxiv namespace).
ARXIV_ATOM = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
      xmlns:arxiv="http://arxiv.org/schemas/atom">
  <link href="http://arxiv.org/api/query?id_list=2401.12345" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: id_list=2401.12345</title>
  <id>http://arxiv.org/api/cHxbiOdZaP56ODnBPIenZhzg5f8</id>
  <updated>2024-02-01T00:00:00-05:00</updated>
  <opensearch:totalResults>1</opensearch:totalResults>
  <entry>
    <id>http://arxiv.org/abs/2401.12345v2</id>
    <updated>2024-01-30T18:00:00Z</updated>
    <published>2024-01-22T18:59:59Z</published>
    <title>Tidal Streams as
      Probes of the Dark Halo</title>
    <summary>  We use &lt;b&gt;stellar streams&lt;/b&gt; to map the halo.
    </summary>
    <author><name>Ana Lopez</name></author>
    <author><name>Johannes van der Waals</name></author>
    <arxiv:doi>10.1093/mnras/stab000</arxiv:doi>
    <link href="http://arxiv.org/abs/2401.12345v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2401.12345v2" rel="related" type="application/pdf"/>
    <arxiv:primary_category term="astro-ph.GA" scheme="http://arxiv.org/schemas/atom"/>
    <category term="astro-ph.GA" scheme="http://arxiv.org/schemas/atom"/>
    <category term="astro-ph.CO" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
</feed>
"""
ARXIV_EMPTY = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>ArXiv Query</title>
<id>http://arxiv.org/api/x</id><updated>2024-02-01T00:00:00-05:00</updated></feed>"""
CSL = {
    "type": "article-journal",
    "title": "A <i>Journal</i> Paper",
    "author": [{"given": "Bea", "family": "Ng"}, {"literal": "The Collaboration"}],
    "issued": {"date-parts": [[2021, 5]]},
    "DOI": "10.1000/XYZ.42",
    "abstract": "<jats:p>Results.</jats:p>",
    "subject": ["Astronomy"],
}
PAGE = b"""<!doctype html><html><head><title>Fallback title</title>
<meta property="og:title" content="An Essay on Streams &amp; Halos">
<meta name="description" content="What streams tell us.">
<meta name="author" content="C. Writer">
<meta property="article:published_time" content="2023-03-04T05:06:07+02:00">
</head><body><p>Hello</p></body></html>"""


@pytest.fixture
def server(tmp_path):
    with FeedServer() as srv:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(
            f'[corpus]\narxiv_api = "{srv.url("/api/query")}"\ndoi_resolver = "{srv.url("/doi/")}"\n'
        )
        yield srv


@pytest.fixture
def alice(db):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    return db


def counts(db) -> tuple[int, int, int]:
    return (
        db.execute("SELECT count(*) FROM items").fetchone()[0],
        db.execute("SELECT count(*) FROM corpus_membership").fetchone()[0],
        db.execute("SELECT count(*) FROM corpus_favorites").fetchone()[0],
    )


def save(db, ref, **kw):
    return saving.save(db, "alice", ref, allow_private=True, source="ui", **kw)


def test_identify():
    assert identify("2401.12345") == Ref("arxiv", "2401.12345")
    assert identify(" arXiv:2401.12345v3 ") == Ref("arxiv", "2401.12345")
    assert identify("https://arxiv.org/pdf/2401.12345v2.pdf") == Ref("arxiv", "2401.12345")
    assert identify("hep-th/9901001v1") == Ref("arxiv", "hep-th/9901001")
    assert identify("10.48550/arXiv.2401.12345") == Ref("arxiv", "2401.12345")
    assert identify("doi:10.1000/xyz.42") == Ref("doi", "10.1000/xyz.42")
    assert identify("https://doi.org/10.1000/xyz.42") == Ref("doi", "10.1000/xyz.42")
    assert identify("https://Example.org/a?utm_source=x#frag") == Ref("url", "https://example.org/a")
    for bad in (
        "",
        "   ",
        "hello",
        "ftp://example.org/x",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "12345",
    ):  # a value that is no text the tools' models refuse
        with pytest.raises(InvalidInput):
            identify(bad)


def test_save_by_arxiv_id_from_the_api(alice, server):
    db = alice
    server.add(ARXIV_QUERY, body=ARXIV_ATOM, headers={"Content-Type": "application/atom+xml"})
    r = save(db, "arXiv:2401.12345v1")
    assert r["created"] and r["facet"] == "saved" and r["arxiv_id"] == "2401.12345"
    row = db.execute(
        "SELECT guid, url, title, summary, author, published, content_type, tags, "
        "feed_id, embedding IS NOT NULL, embed_seq FROM items WHERE id = ?",
        [r["item_id"]],
    ).fetchone()
    assert row[:7] == (
        "arxiv:2401.12345",
        "https://arxiv.org/abs/2401.12345",
        "Tidal Streams as Probes of the Dark Halo",
        "We use stellar streams to map the halo.",
        "Ana Lopez, Johannes van der Waals",
        "2024-01-22T18:59:59+00:00",
        "paper",
    )
    assert json.loads(row[7]) == ["astro-ph.ga", "astro-ph.co"]
    assert row[8] is None and row[9] == 1 and row[10] >= 1  # no feed; embedded, in the matrix order
    assert server.hits(ARXIV_QUERY) == 1
    # Any version again: only marked saved, no second fetch, no second item.
    again = save(db, "https://arxiv.org/abs/2401.12345v2")
    assert not again["created"] and again["item_id"] == r["item_id"] and server.hits(ARXIV_QUERY) == 1
    assert counts(db) == (1, 1, 1)


def test_saved_items_reach_exports_recall_and_ranking(alice, server):
    from hermes_corpus import export as ex
    from hermes_corpus import signals as cs
    from hermes_corpus import tools as t

    from hermes.storage.records import require_user

    db = alice
    server.add(ARXIV_QUERY, body=ARXIV_ATOM)
    r = save(db, "2401.12345")
    bib = ex.export(db, require_user(db, "alice")["id"], "bibtex").text
    assert "@misc{arxiv-2401.12345," in bib and "Lopez, Ana and van der Waals, Johannes" in bib
    cs.record_progress(db, "alice", r["item_id"], 1.0)
    assert t.recall(db, "alice", "streams")["items"][0]["item_id"] == r["item_id"]
    from hermes.contract import CandidateQuery
    from hermes.ranking.rank import rank

    ranking = rank(db, require_user(db, "alice"), CandidateQuery(since_days=None, exclude_clicked=False), limit=5)
    assert r["item_id"] in ranking.item_ids.tolist()


def test_the_doi_arxivs_api_names_reaches_the_exports(alice, server):
    """arXiv's answer carries the published version's DOI (<arxiv:doi>); the items table has
    no DOI column, so it was dropped on saving and the exports had none."""
    from hermes_corpus import export as ex

    from hermes.storage.records import require_user

    db = alice
    server.add(ARXIV_QUERY, body=ARXIV_ATOM)
    r = save(db, "2401.12345")
    user_id = require_user(db, "alice")["id"]
    assert "doi = {10.1093/mnras/stab000}" in ex.export(db, user_id, "bibtex").text
    assert json.loads(ex.export(db, user_id, "csl-json").text)[0]["DOI"] == "10.1093/mnras/stab000"
    # Saving that DOI later is the same paper: nothing fetched, no second item.
    again = save(db, "doi:10.1093/MNRAS/stab000")
    assert again["item_id"] == r["item_id"] and not again["created"] and len(server.log) == 1


def test_an_arxiv_paper_without_a_doi_gets_arxivs_own(alice, server):
    from hermes_corpus import export as ex

    from hermes.storage.records import require_user

    db = alice
    server.add(ARXIV_QUERY, body=ARXIV_ATOM.replace(b"<arxiv:doi>10.1093/mnras/stab000</arxiv:doi>", b""))
    save(db, "2401.12345")
    bib = ex.export(db, require_user(db, "alice")["id"], "bibtex").text
    assert "doi = {10.48550/arXiv.2401.12345}" in bib


def test_an_existing_item_is_only_marked_saved(alice, add_items, server):
    db = alice
    (item,) = add_items(
        [{"title": "From a feed", "arxiv_id": "2401.12345"}], feed_url="https://rss.arxiv.org/rss/astro-ph"
    )  # arXiv's own listing
    r = save(db, "2401.12345v7")
    assert r["item_id"] == item and not r["created"] and r["facet"] == "saved"
    assert server.log == []  # nothing fetched
    from hermes_corpus import signals as cs

    cs.record_progress(db, "alice", item, 1.0)
    r = save(db, "2401.12345")
    assert r["facet"] == "experienced" and r["changes"] == []  # read already: stays experienced


def test_save_by_doi_negotiates_csl_json(alice, server):
    db = alice
    server.add(
        "/doi/10.1000/xyz.42",
        body=json.dumps(CSL).encode(),
        headers={"Content-Type": "application/vnd.citationstyles.csl+json"},
    )
    r = save(db, "https://doi.org/10.1000/xyz.42")
    assert r["created"] and r["title"] == "A Journal Paper" and r["url"] == "https://doi.org/10.1000/xyz.42"
    path, headers = server.log[-1]
    assert headers["accept"] == "application/vnd.citationstyles.csl+json"
    row = db.execute("SELECT guid, author, summary, published, tags FROM items").fetchone()
    assert row == (
        "doi:10.1000/xyz.42",
        "Bea Ng, The Collaboration",
        "Results.",
        "2021-05-01T00:00:00+00:00",
        '["astronomy"]',
    )
    assert save(db, "10.1000/XYZ.42")["created"] is False  # DOIs ignore case


def test_save_a_web_page(alice, server):
    db = alice
    url = server.add("/essay", body=PAGE, headers={"Content-Type": "text/html; charset=utf-8"})
    r = save(db, url + "?utm_source=mail")
    assert r["created"] and r["title"] == "An Essay on Streams & Halos"
    row = db.execute("SELECT guid, summary, author, published, content_type FROM items").fetchone()
    assert row == (url, "What streams tell us.", "C. Writer", "2023-03-04T03:06:07+00:00", "article")
    assert save(db, url)["created"] is False


def test_a_page_without_a_date_is_saved_undated_not_dated_today(alice, server):
    from hermes.contract import CandidateQuery
    from hermes.ranking.rank import rank
    from hermes.storage.records import require_user

    db = alice
    page = PAGE.replace(b'<meta property="article:published_time" content="2023-03-04T05:06:07+02:00">', b"")
    url = server.add("/undated", body=page, headers={"Content-Type": "text/html; charset=utf-8"})
    item_id = save(db, url)["item_id"]
    assert db.execute("SELECT published FROM items WHERE id = ?", [item_id]).fetchone() == (None,)
    # so no recency window holds it: it does not top this week's feed as if new
    week = rank(db, require_user(db, "alice"), CandidateQuery(since_days=7, exclude_clicked=False))
    assert item_id not in week.item_ids.tolist()


@pytest.mark.parametrize(
    "route, message",
    [
        (Route(status=500), "HTTP 500"),
        (Route(body=ARXIV_EMPTY), "arXiv has no paper 2401.12345"),
        (Route(body=b"<html>maintenance</html>"), "not Atom"),
    ],
)
def test_a_failed_lookup_stores_nothing(alice, server, route, message):
    db = alice
    server.add(ARXIV_QUERY, route)
    with pytest.raises(LookupFailed, match=message):
        save(db, "2401.12345")
    assert counts(db) == (0, 0, 0)


def test_offline_and_broken_embedder_store_nothing(alice, tmp_path, server):
    db = alice
    (tmp_path / "home" / "config.toml").write_text(
        '[corpus]\narxiv_api = "http://127.0.0.1:9/api/query"\n'
    )  # nothing listens on port 9
    with pytest.raises(LookupFailed, match="could not fetch"):
        save(db, "2401.12345")

    class Broken:
        name, dimension = "broken", 4

        def embed(self, texts):
            raise RuntimeError("model files missing")

    (tmp_path / "home" / "config.toml").write_text(f'[corpus]\narxiv_api = "{server.url("/api/query")}"\n')
    server.add(ARXIV_QUERY, body=ARXIV_ATOM)
    with pytest.raises(LookupFailed, match="nothing was stored"):
        save(db, "2401.12345", embedder=Broken())
    assert counts(db) == (0, 0, 0)


def test_an_offline_save_says_what_the_person_can_do(alice, tmp_path, db_path, server):
    # A trial's finding: `hermes save marta 2401.12345` offline said only "connection failed:
    # [Errno -2] Name or service not known".
    from hermes.cli.app import build_app

    (tmp_path / "home" / "config.toml").write_text('[corpus]\narxiv_api = "http://127.0.0.1:9/api/query"\n')
    r = CliRunner().invoke(build_app(), ["save", "alice", "2401.12345", "--db", str(db_path)])
    assert r.exit_code == 1 and "connection failed" in r.output
    assert "nothing was stored: try `hermes save alice 2401.12345` again once you are online" in r.output
    assert "`hermes persona import alice FILE` (its entries become likes, not saves)" in r.output
    assert counts(alice) == (0, 0, 0)
    (tmp_path / "home" / "config.toml").write_text(f'[corpus]\narxiv_api = "{server.url("/api/query")}"\n')
    server.add(ARXIV_QUERY, Route(status=500))  # a server that answered: no retry advice
    with pytest.raises(LookupFailed) as refused:
        save(alice, "2401.12345")
    assert "HTTP 500" in str(refused.value) and "online" not in str(refused.value)


def test_the_tool_guards_private_addresses(alice, server, monkeypatch):
    db = alice
    tool = collect_tools({"corpus"})["save_item"]
    server.add(ARXIV_QUERY, body=ARXIV_ATOM)
    page = server.add("/essay", body=PAGE, headers={"Content-Type": "text/html"})
    for ref in ("2401.12345", page):
        r = call_tool(db, tool, {"user": "alice", "ref": ref})
        assert r["ok"] is False and "refused: private address" in r["message"], r
        assert r["item_id"] is None and r["changes"] == []
    assert server.log == [] and counts(db) == (0, 0, 0)
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")  # the user lifted the guard
    r = call_tool(db, tool, {"user": "alice", "ref": "2401.12345"})
    assert r["ok"] and r["created"] and "Stored item" in r["message"]
    bad = call_tool(db, tool, {"user": "alice", "ref": "not a paper"})
    assert bad["ok"] is False and "arXiv id" in bad["message"]
    bad = call_tool(db, tool, {"user": "nobody", "ref": "2401.12345"})
    assert bad["ok"] is False and "unknown persona" in bad["message"]


def test_the_web_ui_saves_through_the_guard_like_its_add_feed_form(alice, server):
    """The web UI counts as agent-grade (a page on another site can drive its forms), so
    save_item called the way the web calls tools (source 'ui') is guarded like the add-feed
    form: a loopback address is refused and nothing is fetched or stored. Only a person at
    the CLI (``hermes save``) is trusted."""
    from hermes.web.access import Tools

    server.add(ARXIV_QUERY, body=ARXIV_ATOM)
    page = server.add("/essay", body=PAGE, headers={"Content-Type": "text/html"})
    web = Tools()
    for ref in ("2401.12345", page):
        r = web.call(alice, "save_item", user="alice", ref=ref)
        assert r["ok"] is False and "refused: private address" in r["message"], r
    feed = web.call(alice, "add_feed", url=server.url("/feed.xml"))
    assert feed["ok"] is False and "refused: private address" in feed["message"], feed
    assert server.log == [] and counts(alice) == (0, 0, 0)


@pytest.mark.anyio
async def test_save_item_over_mcp(alice, server, db_path, monkeypatch):
    from mcp import Client

    from hermes.mcp_server import build_server

    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")
    server.add(ARXIV_QUERY, body=ARXIV_ATOM)
    async with Client(build_server(str(db_path), {"corpus"})) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["save_item"].annotations.open_world_hint is True
        assert listed["export_corpus"].annotations.read_only_hint is True
        r = (await client.call_tool("save_item", {"user": "alice", "ref": "2401.12345"})).structured_content
        assert r["ok"] and r["facet"] == "saved"
        out = (await client.call_tool("export_corpus", {"user": "alice", "format": "ris"})).structured_content
        assert out["ok"] and "ID  - arxiv-2401.12345" in out["text"]


def test_cli_save(alice, server, db_path):
    from hermes.cli.app import build_app

    server.add(ARXIV_QUERY, body=ARXIV_ATOM)
    run = lambda *a: CliRunner().invoke(build_app(), [*a, "--db", str(db_path)])  # noqa: E731
    r = run("save", "alice", "2401.12345")  # a person at the CLI may use a loopback mirror
    assert r.exit_code == 0, r.output
    assert "Stored item" in r.stdout and "saved" in r.stdout
    r = run("save", "alice", "2401.12345v2", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["created"] is False
    r = run("save", "alice", "not-an-id")
    assert r.exit_code == 1 and "arXiv id" in r.output and "Traceback" not in r.output
    server.routes.clear()
    r = run("save", "alice", "2401.99999")
    assert r.exit_code == 1 and "HTTP 404" in r.output


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_endpoint_settings_are_validated(alice, tmp_path):
    from hermes.errors import HermesError

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('[corpus]\narxiv_api = "file:///etc/passwd"\n')
    with pytest.raises(HermesError, match="arxiv_api .* expected an http"):
        save(alice, "2401.12345")
    assert counts(alice) == (0, 0, 0)


def test_the_saved_message_quotes_a_latex_title_as_stored(alice, add_items):
    """repr() doubled its backslashes: "…with $\\\\ell_1$ Priors" (a trial)."""
    from hermes.facekit.terminal import run_tool

    add_items(
        [
            {
                "title": r"Sparse codes with $\ell_1$ Priors",
                "arxiv_id": "2401.99999",
                "url": "https://arxiv.org/abs/2401.99999",
            }
        ],
        feed_url="https://rss.arxiv.org/rss/cs.LG",
    )
    r = run_tool(alice, "save_item", user="alice", ref="2401.99999")
    assert r["ok"], r["message"]
    # since issue 33 the remote title is in the payload, never in the tool's own message
    assert r["title"] == r"Sparse codes with $\ell_1$ Priors" and "Priors" not in r["message"]
