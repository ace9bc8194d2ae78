"""The digest group's faces: the MCP schema and calls, and the `hermes digest` / `hermes
topics` commands."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.storage.clicks import record_click
from hermes.storage.db import get_db
from hermes.storage.records import create_user


@pytest.fixture
def week(db, add_items):
    add_items([{"title": f"Orchard {i}", "tags": ["apple", "pear"], "days_ago": 40} for i in range(3)])
    ids = add_items(
        [
            {"title": "Pear blight", "summary": "pears and apples", "tags": ["pear", "apple"]},
            {"title": "Apple storage", "summary": "apples", "tags": ["apple"]},
            {"title": "Knitting \x1b[31mred\x1b[0m", "summary": "wool", "tags": ["wool"]},
        ]
    )
    create_user(db, "ann", "apples and pears")
    return ids


@pytest.mark.anyio
async def test_mcp_schema_declares_limits(db, db_path, week):
    from mcp import Client

    from hermes.mcp_server import build_server

    async with Client(build_server(str(db_path))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        schema = listed["digest"].input_schema
        assert set(schema["properties"]) == {"user", "days", "per_topic", "limit", "below_bar", "detail"}
        assert schema["required"] == ["user"]
        assert schema["properties"]["days"]["minimum"] == 1
        # omitted, the digest chooses (3, and only when it overflows): null is allowed
        assert {"type": "integer", "minimum": 1, "maximum": 50} in schema["properties"]["per_topic"]["anyOf"]
        assert listed["digest"].annotations.read_only_hint is True
        assert set(listed["kg_communities"].input_schema["properties"]) == {"limit"}

        result = await client.call_tool("digest", {"user": "ann", "per_topic": 1})
        payload = result.structured_content
        assert payload["ok"] is True and payload["window_days"] == 7
        assert [t["label"] for t in payload["topics"]] and payload["unclustered"] == []
        assert payload["below_bar"]["n_total"] == 1  # the knitting item
        assert listed["digest"].input_schema["properties"]["below_bar"]["type"] == "boolean"

        refused = await client.call_tool("digest", {"user": "ann", "days": 0})
        assert refused.structured_content["ok"] is False
        assert refused.structured_content["message"] == "days must be a whole number from 1 to 36500, got 0."
        nobody = await client.call_tool("digest", {"user": "nobody"})
        assert nobody.structured_content["ok"] is False and "unknown persona" in nobody.structured_content["message"]
        # the shared refusal: an error, its objects empty ({}), as list_feed's and
        # profile_status's; not a zeroed ranking_quality that reads as a persona's figures
        assert nobody.is_error is True
        refusals = {}
        for name in ("digest", "list_feed", "profile_status"):
            answer = (await client.call_tool(name, {"user": "nobody"})).structured_content
            refusals[name] = {k: v for k, v in answer.items() if isinstance(v, dict) and v}
        assert refusals == {"digest": {}, "list_feed": {}, "profile_status": {}}
        assert {k: nobody.structured_content[k] for k in ("ranking_quality", "saved", "below_bar")} == {
            "ranking_quality": {},
            "saved": {},
            "below_bar": {},
        }


def run(db_path, *args):
    return CliRunner().invoke(build_app(), [*args, "--db", str(db_path)])


def test_cli_digest_renders_topics_reasons_and_the_caveat(db, db_path, week):
    out = run(db_path, "digest", "ann")
    assert out.exit_code == 0, out.output
    assert "## apple" in out.output and "Pear blight" in out.output
    assert "why: Strong match: matches your interest “apples and pears”" in out.output
    assert "1 more item below your bar (--below-bar lists them)" in out.output
    assert "Knitting" not in out.output
    assert "Caveat: No feedback yet" in out.output
    out = run(db_path, "digest", "ann", "--below-bar")
    assert "## Below your bar" in out.output and "Knitting" in out.output
    assert "why: No match: not close to any of your interests" in out.output
    assert "\x1b[31m" not in out.output  # feed text cannot drive the terminal


def test_cli_digest_json_is_the_tool_result(db, db_path, week):
    from hermes_digest.tools import digest

    from hermes.facekit.faces import speaking

    out = run(db_path, "digest", "ann", "--json", "--days", "3", "--per-topic", "1")
    assert out.exit_code == 0
    with speaking("cli"):  # the same call, worded for the CLI
        expected = digest(db, "ann", days=3, per_topic=1)
    assert json.loads(out.stdout) == json.loads(json.dumps(expected))


def test_cli_digest_shows_hidden_counts(db, db_path, week, add_items, no_bar):
    add_items(
        [{"title": f"Pear press {i}", "summary": "pears and apples", "tags": ["pear", "apple"]} for i in range(2)]
    )
    # every item clears the bar: a digest of all hides none (trial finding); one asked for
    # one per topic, or of the best 3 only, cuts
    whole = run(db_path, "digest", "ann").output
    assert "Pear press 1" in whole and "more in this topic" not in whole, whole
    for asked in (["--per-topic", "1"], ["--per-topic", "1", "--limit", "3"]):
        out = run(db_path, "digest", "ann", *asked)
        assert "more in this topic (raise --per-topic to see them)" in out.output, out.output


def test_cli_digest_user_mistakes_are_one_line_and_non_zero(db, db_path, week):
    out = run(db_path, "digest", "nobody")
    assert out.exit_code == 1 and "unknown persona 'nobody'" in out.output
    assert "Traceback" not in out.output
    out = run(db_path, "digest", "ann", "--days", "0")
    assert out.exit_code == 1 and "--days must be a whole number from 1 to 36500" in out.output
    out = run(db_path, "digest", "ann", "--json", "--days", "0")
    assert out.exit_code == 1 and json.loads(out.stdout)["ok"] is False


def test_cli_digest_empty_window(db, db_path, week):
    for item_id in week:
        record_click(db, 1, item_id, True, "agent")
    out = run(db_path, "digest", "ann")  # an empty answer is not an error
    assert out.exit_code == 0 and "No unread items" in out.stdout and "--since-days N" in out.stdout
    doc = json.loads(run(db_path, "digest", "ann", "--json").stdout)
    assert doc["ok"] is False and doc["nothing_to_show"] is True  # the tool's contract (seed 001) stays


def test_cli_topics(db, db_path, week):
    out = run(db_path, "topics")
    assert out.exit_code == 0, out.output
    assert "apple" in out.output and "(2 tags, 5 items)" in out.output
    data = json.loads(run(db_path, "topics", "--json").stdout)
    assert data["communities"][0]["label"] == "apple · pear" and data["singletons_left_out"] == 1


def test_cli_digest_shows_saved_items(db, db_path, week, add_items):
    from hermes.tools import call_tool, collect_tools

    tools = collect_tools()
    if "favorite" not in tools:
        pytest.skip("the corpus plugin is not installed")
    (old,) = add_items([{"title": "A paper saved for later", "tags": ["apple"], "days_ago": 90}])
    assert call_tool(db, tools["favorite"], {"user": "ann", "item_id": old})["ok"]
    out = run(db_path, "digest", "ann")
    assert "## Saved, not read yet" in out.output and "A paper saved for later" in out.output


def test_a_digest_where_nothing_clears_the_bar_still_shows_its_counts_and_caveat(db, db_path, week):
    """Nothing over the bar is the tool's empty answer (ok false, nothing_to_show true), but
    the window is not empty: the CLI shows the counts, the fold and the caveat the message
    refers to, and the web page keeps its "below your bar — show" link."""
    from web_support import client

    create_user(db, "bea", "medieval church architecture")
    out = run(db_path, "digest", "bea")
    assert out.exit_code == 0, out.output
    assert "clears bea's bar" in out.stdout and "below your bar (--below-bar lists them)" in out.stdout
    assert "Ranking: 0 clicks" in out.stdout  # the caveat the message points to is there
    with client(db_path) as web:
        page = web.get("/digest?user=bea").text
    assert "below your bar" in page and "below=1#below-bar" in page


def test_a_terminal_heading_names_the_topic_it_is_part_of():
    """A heading names the tags the week's items carry, at times only "cs.lg": the CLI says
    which topic that is, as the web page does."""
    from hermes_digest.render import render_digest

    lines = []
    item = {"id": 1, "title": "Entmax attention", "reason": "Good match", "url": "https://e.org/1"}
    render_digest(
        {
            "topics": [{"label": "cs.lg", "community": "sparse autoencoder · cs.lg", "n_total": 1, "items": [item]}],
            "window_days": 7,
        },
        "ada",
        echo=lines.append,
    )
    assert any("part of the topic sparse autoencoder · cs.lg" in line for line in lines)
    lines.clear()
    render_digest(
        {"topics": [{"label": "galaxy", "community": "galaxy", "n_total": 1, "items": [item]}], "window_days": 7},
        "ada",
        echo=lines.append,
    )
    assert not any("part of the topic" in line for line in lines)


def test_every_command_a_digest_hint_names_keeps_the_db_given(db, db_path, week, tmp_path):
    """A trial on the demo's database was told "Run `hermes ingest`", which ingests
    hermes.db: each command the digest's advice names keeps the --db given (after the
    command or before it), as `hermes feed`'s next-page hint does."""
    hermes = f"hermes --db {shlex.quote(str(db_path))}"
    for item_id in week:
        record_click(db, 1, item_id, True, "agent")
    for args in (["digest", "ann", "--db", str(db_path)], ["--db", str(db_path), "digest", "ann"]):
        out = CliRunner().invoke(build_app(), args)
        assert out.exit_code == 0, out.output
        assert f"Run `{hermes} ingest` for new items" in out.stdout, out.stdout
    # the database named by $HERMES_DB needs no naming
    out = CliRunner().invoke(build_app(), ["digest", "ann"], env={"HERMES_DB": str(db_path)})
    assert "Run `hermes ingest` for new items" in out.stdout, out.stdout
    # nothing clears the bar: the advice names two commands
    create_user(db, "bea", "medieval church architecture")
    out = run(db_path, "digest", "bea")
    assert f"`{hermes} feeds add URL`" in out.stdout and f"`{hermes} like bea ITEM`" in out.stdout, out.stdout
    assert "`hermes feeds" not in out.stdout and "`hermes like" not in out.stdout
    # a refusal's advice too: a database with no persona yet
    empty = tmp_path / "empty.db"
    get_db(empty).conn.close()
    out = CliRunner().invoke(build_app(), ["digest", "ann", "--db", str(empty)])
    assert out.exit_code == 1 and f"`hermes --db {shlex.quote(str(empty))} persona create NAME" in out.output, (
        out.output
    )
    # --json gives the same message: every CLI answer names the database given
    doc = json.loads(run(db_path, "digest", "bea", "--json").stdout)
    assert f"`{hermes} feeds add URL`" in doc["message"]


def test_cli_digest_window_is_since_days_as_for_the_feed(db, db_path, week):
    """`hermes feed` and `hermes explain` take --since-days DAYS: so does `hermes digest`,
    its old --days kept (hidden) so no script breaks."""
    helped = run(db_path, "digest", "--help").output
    assert "--since-days DAYS" in helped and "--days" not in helped
    new = json.loads(run(db_path, "digest", "ann", "--json", "--since-days", "3").stdout)
    old = json.loads(run(db_path, "digest", "ann", "--json", "--days", "3").stdout)
    assert new["window_days"] == old["window_days"] == 3 and new == old
    assert json.loads(run(db_path, "digest", "ann", "--json").stdout)["window_days"] == 7
    # a refusal names the option as typed
    out = run(db_path, "digest", "ann", "--since-days", "0")
    assert out.exit_code == 1 and "--since-days must be a whole number from 1 to 36500, got 0." in out.output
    out = run(db_path, "digest", "ann", "--since-days", "3", "--days", "3")
    assert out.exit_code == 1 and "use either --since-days or --days, not both" in out.output
