"""What a plugin or a remote server says does not leak (issue 33, case 6): a plugin's
exception text (paths, secrets) stays in the log while the answer names the tool and the
plugin; a plugin that prints while it loads does not put a non-JSON line on ``hermes
serve``'s stdout; a hostile CSL-JSON record given to ``save_item`` is refused naming the
field, not "failed unexpectedly"."""

from __future__ import annotations

import json
import subprocess

import pytest
from hermes_corpus import save as saving
from hermes_corpus.metadata import LookupFailed
from ingest_server import FeedServer
from process_support import child_env, hermes_command

from hermes import Result, hookimpl, tool
from hermes.contract import CandidateQuery
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools

SECRET = "/home/ada/.config/acme/token=sk-live-4f9a2b"


class Said(Result):
    text: str = ""


@tool("leaky", result=Said, read_only=True)
def leak(db) -> dict:
    """Raise with a secret in the message."""
    raise RuntimeError(f"could not read {SECRET}")


class Leaky:
    @hookimpl
    def hermes_register_tools(self):
        return [leak]


class LeakyScorer:
    @hookimpl
    def hermes_score(self, db, user, item_ids, vectors, context):
        raise RuntimeError(f"scorer could not open {SECRET}")


def test_a_plugins_exception_text_stays_in_the_log(db, hermes_plugin, caplog):
    hermes_plugin(Leaky(), name="leaky")
    answer = call_tool(db, collect_tools()["leak"], {}, face="mcp")
    assert answer["ok"] is False and answer.get("server_error")
    assert SECRET not in answer["message"] and "sk-live" not in json.dumps(answer)
    assert "leak failed unexpectedly (RuntimeError in plugin 'leaky')" in answer["message"]
    assert SECRET in caplog.text  # the person running the server can still see why


def test_a_failing_scorers_text_stays_in_the_log(db, hermes_plugin, add_items, caplog):
    add_items([{"title": f"graph networks {i}", "summary": "graphs"} for i in range(3)])
    create_user(db, "ann", "graph neural networks")
    hermes_plugin(LeakyScorer(), name="leakyscore")
    from hermes.ranking.rank import rank
    from hermes.storage.records import require_user

    assert len(rank(db, require_user(db, "ann"), CandidateQuery(since_days=None)).item_ids) == 3
    answer = call_tool(db, collect_tools()["list_feed"], {"user": "ann", "since_days": None})
    assert answer["ok"] and "plugin 'leakyscore' failed in hermes_score" in answer["message"]
    assert SECRET not in answer["message"] and SECRET in caplog.text


def chatty_distribution(site) -> None:
    """An installed plugin that prints while it is imported."""
    (site / "hermes_chatty").mkdir(parents=True)
    (site / "hermes_chatty" / "__init__.py").write_text("print('hello from the chatty plugin')\n")
    info = site / "hermes_chatty-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-chatty\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[hermes]\nchatty = hermes_chatty\n")


def test_a_plugin_printing_at_import_does_not_corrupt_serves_stdout(tmp_path):
    site = tmp_path / "site"
    chatty_distribution(site)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    proc = subprocess.run(
        [*hermes_command(), "serve", "--db", str(tmp_path / "x.db")],
        input=json.dumps(init) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(tmp_path / "home", HERMES_LOAD_ENTRYPOINTS="1", PYTHONPATH=str(site)),
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines), proc.stdout
    assert "hello from the chatty plugin" in proc.stderr


CSL = {
    "type": "article-journal",
    "title": "A Paper",
    "author": [{"given": "Bea", "family": "Ng"}],
    "issued": {"date-parts": [[2021, 5]]},
}


@pytest.mark.parametrize(
    "body, cause",
    [
        (b"[" * 100_000, "nested too deeply"),
        ({**CSL, "author": [{"given": ["Bea"], "family": "Ng"}]}, "an author's given is not a text"),
        ({**CSL, "author": [{"family": {"x": 1}}]}, "an author's family is not a text"),
        ({**CSL, "author": {"given": "Bea"}}, "its author list is not a list"),
        ({**CSL, "author": ["Bea Ng"]}, "an author's entry is not a text"),
        ({**CSL, "issued": "2021-05-01"}, "its issued date is not a CSL date"),
        ({**CSL, "issued": {"date-parts": {"0": [2021]}}}, "its issued date is not a CSL date"),
        ({**CSL, "created": {"date-parts": [[True]]}}, "its created date is not a CSL date"),
        ({**CSL, "title": {"en": "A Paper"}}, "its title is not a text"),
        ({**CSL, "abstract": ["Results."]}, "its abstract is not a text"),
        ({**CSL, "subject": {"a": 1}}, "its subject is not a list of texts"),
    ],
)
def test_a_hostile_csl_record_is_refused_naming_the_cause(db, tmp_path, body, cause):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    with FeedServer() as srv:
        (tmp_path / "home").mkdir(exist_ok=True)
        (tmp_path / "home" / "config.toml").write_text(f'[corpus]\ndoi_resolver = "{srv.url("/doi/")}"\n')
        srv.add(
            "/doi/10.1000/xyz",
            body=body if isinstance(body, bytes) else json.dumps(body).encode(),
            headers={"Content-Type": "application/vnd.citationstyles.csl+json"},
        )
        with pytest.raises(LookupFailed, match=cause):
            saving.save(db, "alice", "10.1000/xyz", allow_private=True, source="ui")
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 0


def test_a_page_in_a_charset_that_cannot_replace_is_read_as_utf8(db, tmp_path):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    with FeedServer() as srv:
        url = srv.add(
            "/essay",
            body=b"<html><head><title>An essay \xff</title></head></html>",
            headers={"Content-Type": "text/html; charset=idna"},
        )
        r = saving.save(db, "alice", url, allow_private=True, source="ui")
    assert r["created"] and r["title"].startswith("An essay")


def test_save_item_through_mcp_answers_the_refusal(db, tmp_path, monkeypatch):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")
    with FeedServer() as srv:
        (tmp_path / "home").mkdir(exist_ok=True)
        (tmp_path / "home" / "config.toml").write_text(f'[corpus]\ndoi_resolver = "{srv.url("/doi/")}"\n')
        srv.add("/doi/10.1000/xyz", body=json.dumps({**CSL, "issued": "yesterday"}).encode())
        answer = call_tool(
            db, collect_tools({"corpus"})["save_item"], {"user": "alice", "ref": "10.1000/xyz"}, face="mcp"
        )
    assert answer["ok"] is False and "failed unexpectedly" not in answer["message"]
    assert "its issued date is not a CSL date" in answer["message"]
    assert not answer.get("server_error")
