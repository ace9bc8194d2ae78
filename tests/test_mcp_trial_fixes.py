"""What an MCP agent trial (a real client over stdio against ``hermes serve``) found: an arXiv
paper a feed brought could not be saved offline, advice named tools the server did not serve,
a file's path taken as the text it names, and a feed URL without its scheme refused without
saying what would do. (Its annotations finding is tests/test_mcp_contract.py's ANNOTATIONS.)"""

from __future__ import annotations

import mcp
import pytest
from ingest_server import FeedServer

from hermes.arguments import InvalidArguments, refuse_file_path, worded
from hermes.facekit import faces
from hermes.facekit.faces import Say
from hermes.mcp_server import build_server
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools

# --- save_item: an arXiv paper already in the archive ----------------------------------------

TRIAL_FEED = "http://127.0.0.1:8899/cond-mat.rss"  # the trial's stand-in for arXiv's listing


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """arXiv's API where nothing listens (port 9), the guard lifted so that the lookup is
    tried and fails as offline does, not refused as a private address."""
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.toml").write_text('[corpus]\narxiv_api = "http://127.0.0.1:9/api/query"\n')
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")


def save_item(db, ref: str) -> dict:
    return call_tool(db, collect_tools({"corpus"})["save_item"], {"user": "ada", "ref": ref})


def test_offline_an_arxiv_paper_a_feed_brought_is_saved_as_the_archive_has_it(db, add_items, offline):
    """The trial: ``save_item https://arxiv.org/abs/0704.0717`` failed offline although the
    paper was in the archive. A feed that is not arXiv's own (issue 32) has its record checked
    against arXiv's when arXiv can be reached; when it cannot, the paper is saved as stored."""
    create_user(db, "ada", "spin liquids")
    (paper,) = add_items([{"title": "Spin liquid", "arxiv_id": "0704.0717"}], feed_url=TRIAL_FEED)
    r = save_item(db, "https://arxiv.org/abs/0704.0717v2")
    assert r["ok"], r["message"]
    assert r["item_id"] == paper and r["facet"] == "saved" and not r["created"]
    assert "Already stored: item" in r["message"] and "not checked against arXiv" in r["message"]
    # a post that only links the paper is not the paper: still nothing saved offline
    add_items([{"title": "A post", "url": "https://arxiv.org/abs/0801.0001"}], feed_url=TRIAL_FEED)
    r = save_item(db, "0801.0001")
    assert not r["ok"] and "nothing was stored" in r["message"]


@pytest.mark.parametrize(
    "ref",
    [
        "https://arxiv.org/abs/0704.0717",
        "https://arxiv.org/abs/0704.0717v3",
        "http://arxiv.org/pdf/0704.0717v1.pdf",
        "arXiv:0704.0717",
        "0704.0717",
        "0704.0717v2",
    ],
)
def test_every_form_of_an_arxiv_ref_finds_a_stored_paper_without_a_fetch(db, add_items, tmp_path, ref):
    create_user(db, "ada", "spin liquids")
    (paper,) = add_items(
        [{"title": "Spin liquid", "arxiv_id": "0704.0717"}], feed_url="https://rss.arxiv.org/rss/cond-mat"
    )
    with FeedServer() as server:  # arXiv's API stand-in: asked nothing
        (tmp_path / "home").mkdir(exist_ok=True)
        (tmp_path / "home" / "config.toml").write_text(f'[corpus]\narxiv_api = "{server.url("/api/query")}"\n')
        r = save_item(db, ref)
        assert server.log == []
    assert r["ok"] and r["item_id"] == paper and "Already stored" in r["message"], r["message"]


# --- advice names only the tools served -------------------------------------------------------


def test_a_say_naming_a_tool_not_served_gives_the_cli_words():
    said = Say(mcp="rate it with record_feedback", cli="rate it with `hermes like USER ITEM`", web="press ✓")
    other = Say(mcp="list_feeds shows them", cli="`hermes feeds list` shows them", web="the Feeds page")
    with faces.speaking("mcp"):
        assert str(said) == "rate it with record_feedback"
        with faces.serving_without(frozenset({"record_feedback", "list_feed"})):
            assert str(said) == "rate it with `hermes like USER ITEM`"
            assert said.naming("ada") == "rate it with `hermes like ada ITEM`"
            assert str(other) == "list_feeds shows them"  # list_feed is not list_feeds
        with faces.speaking("cli"), faces.serving_without(frozenset({"list_feeds"})):
            assert str(other) == "`hermes feeds list` shows them"


@pytest.fixture
def archive(db, add_items):
    add_items([{"title": "Quantum spin liquids in Kitaev materials", "summary": "Kitaev honeycomb"}])
    create_user(db, "ada", "quantum spin liquids")


@pytest.mark.anyio
async def test_under_tools_persona_no_answer_names_a_feeds_tool(db_path, archive):
    """The trial, under ``hermes serve --tools persona``: search_feed said "Give feedback with
    record_feedback" and create_persona "Next: … list_feed"; neither tool was served."""
    async with mcp.Client(build_server(str(db_path), {"persona"})) as client:
        found = (await client.call_tool("search_feed", {"user": "ada", "query": "Kitaev"})).structured_content
        made = (
            await client.call_tool("create_persona", {"name": "dora", "interests": "tensor networks"})
        ).structured_content
    assert found["ok"] and made["ok"]
    for message in (found["message"], made["message"]):
        assert "record_feedback" not in message and "list_feed" not in message, message
    assert "`hermes like ada ITEM`" in found["message"]
    # the advice a served tool takes still names it
    assert made["message"].endswith(
        "Next: bootstrap_persona to warm it from its interests; `hermes feed dora -i` trains it with single keys"
    )
    # with every tool served, the tools are named
    async with mcp.Client(build_server(str(db_path))) as client:
        found = (await client.call_tool("search_feed", {"user": "ada", "query": "Kitaev"})).structured_content
    assert "Give feedback with record_feedback" in found["message"]


# --- a file's path where its text is expected -------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["/tmp/mcptrial/interests.txt", "~/papers/lib.bib", "C:\\Users\\ada\\My Library.ris", "file:///tmp/x/lib.json"],
)
def test_a_files_path_is_refused_as_text(value):
    with pytest.raises(InvalidArguments) as refused:
        refuse_file_path("text", value)
    assert "hermes never reads files for an agent; pass the file's contents" in str(refused.value)


@pytest.mark.parametrize(
    "value",
    [
        "graph neural networks, protein folding",
        "ML/AI and C/C++ compilers",
        "/r/MachineLearning posts",
        "/tmp/a file about transformers and protein folding.txt",
        "@article{x, title={/tmp/a.bib}}",
        "/tmp/notes.txt\n/tmp/more.txt",
    ],
)
def test_text_is_not_taken_for_a_path(value):
    refuse_file_path("text", value)


def test_at_the_terminal_the_refusal_says_to_pass_the_text():
    from hermes.arguments import Wording

    with worded(Wording({"interests": "--interests"}, typed="shell")), pytest.raises(InvalidArguments) as refused:
        refuse_file_path("interests", "/tmp/interests.txt")
    assert (
        str(refused.value) == '--interests "/tmp/interests.txt" is a file\'s path, not its text; pass the text itself'
    )


def test_create_persona_and_import_library_refuse_a_path(db):
    tools = collect_tools({"persona"})
    r = call_tool(db, tools["create_persona"], {"name": "dora", "interests": "/tmp/mcptrial/interests.txt"})
    assert not r["ok"] and "hermes never reads files for an agent" in r["message"], r["message"]
    assert r["message"].startswith('interests="/tmp/mcptrial/interests.txt" is a file\'s path')
    assert db.execute("SELECT count(*) FROM users").fetchone()[0] == 0
    create_user(db, "ada", "spin liquids")
    r = call_tool(db, tools["import_library"], {"name": "ada", "text": "/tmp/x/lib.bib"})
    assert not r["ok"] and "pass the file's contents" in r["message"] and "BibTeX" not in r["message"]
    r = call_tool(db, tools["update_persona"], {"name": "ada", "interests": "~/interests.txt"})
    assert not r["ok"] and "never reads files" in r["message"]
    assert db.execute("SELECT interests FROM users").fetchone()[0] == "spin liquids"


# --- a feed URL without its scheme ------------------------------------------------------------


@pytest.mark.parametrize(
    "url, meant",
    [
        ("127.0.0.1:8899/podcast.rss", "http://127.0.0.1:8899/podcast.rss"),
        ("localhost:8080/feed.xml", "http://localhost:8080/feed.xml"),
        ("example.org/feed.xml", "https://example.org/feed.xml"),
    ],
)
def test_add_feed_suggests_the_url_with_its_scheme(db, url, meant):
    r = call_tool(db, collect_tools({"feeds"})["add_feed"], {"url": url})
    assert not r["ok"] and f"with its scheme it reads {meant!r}: pass that" in r["message"], r["message"]


@pytest.mark.parametrize("url", ["/tmp/mcptrial/feeds/blog.atom", "ftp://example.org/f.xml", "mailto:a@b.org"])
def test_no_scheme_is_suggested_for_what_is_no_web_address(db, url):
    r = call_tool(db, collect_tools({"feeds"})["add_feed"], {"url": url})
    assert not r["ok"] and "only http:// and https://" in r["message"] and "with its scheme" not in r["message"]


@pytest.mark.parametrize(
    "url", ["/tmp/mcptrial/feeds/blog.atom", "file:///tmp/feed.xml", "./feed.xml", "C:\\feeds\\a.xml"]
)
def test_a_feed_file_is_left_to_the_person_with_the_command_that_adds_it(db, url):
    """A retrial's agent passed a local file and read only "only http:// and https://"."""
    r = call_tool(db, collect_tools({"feeds"})["add_feed"], {"url": url})
    assert not r["ok"] and "`hermes feeds add PATH`" in r["message"], r["message"]
