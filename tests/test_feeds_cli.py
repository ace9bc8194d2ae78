"""``hermes feeds …`` and ``hermes feed USER`` through typer's CliRunner."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET

import pytest
from feeds_support import SAMPLE_ENTRIES, CannedServer, rss
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


@pytest.fixture
def feed_file(tmp_path):
    path = tmp_path / "quantum.xml"
    path.write_bytes(rss("Quantum & Friends", SAMPLE_ENTRIES))
    return path


def test_feeds_add_local_file_list_and_ingest(db_path, feed_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("feeds", "add", "quantum.xml", "--db", db_path)  # relative path: made absolute
    assert result.exit_code == 0, result.output
    assert (
        "Subscribed: [1] Quantum & Friends" in result.output
        and "hermes --db" in result.output
        and " ingest` to load its items" in result.output
    )
    listed = run("feeds", "list", "--json", "--db", db_path)
    doc = json.loads(listed.stdout)
    assert doc["ok"] and doc["feeds"][0]["url"] == str(feed_file) and doc["feeds"][0]["item_count"] == 0
    assert run("ingest", "--db", db_path).exit_code == 0
    human = run("feeds", "list", "--db", db_path).output
    assert "[1] Quantum & Friends" in human and "3 items" in human and "ok" in human


def test_feeds_list_says_a_feed_was_read_with_a_warning(db, db_path, feed_file):
    """A feed whose last fetch parsed with problems read "· ok" in `feeds list` (the web
    said the warning)."""
    assert run("feeds", "add", feed_file, "--db", db_path).exit_code == 0
    assert run("ingest", "--db", db_path).exit_code == 0
    db.execute("UPDATE feeds SET last_warning = 'line 1, column 400: mismatched tag'")
    human = run("feeds", "list", "--db", db_path).output
    assert "read with a warning: line 1, column 400: mismatched tag" in human
    assert " · ok" not in human


def test_feeds_add_is_trusted_with_loopback_urls(db_path):
    with CannedServer() as server:
        server.routes["/f"] = (200, {}, rss("Local server", SAMPLE_ENTRIES))
        result = run("feeds", "add", server.url("/f"), "--title", "Lab feed", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "[1] Lab feed" in result.output


@pytest.mark.parametrize(
    "target, fragment",
    [
        ("does-not-exist.xml", "file not found"),
        ("ftp://example.org/feed", "only http"),
    ],
)
def test_feeds_add_mistakes_are_one_line_and_non_zero(db_path, target, fragment):
    result = run("feeds", "add", target, "--db", db_path)
    assert result.exit_code == 1
    assert fragment in result.output and result.output.count("\n") == 1
    assert "Traceback" not in result.output


def test_feeds_add_duplicate_and_not_a_feed(db_path, feed_file, tmp_path):
    assert run("feeds", "add", feed_file, "--db", db_path).exit_code == 0
    again = run("feeds", "add", feed_file, "--db", db_path)
    assert again.exit_code == 1 and "already subscribed" in again.output
    page = tmp_path / "page.html"
    page.write_text("<html><body>hi</body></html>")
    bad = run("feeds", "add", page, "--db", db_path)
    assert bad.exit_code == 1 and "is an HTML page, not a feed, and it links no feed" in bad.output


def test_feeds_remove_needs_yes(db_path, db, add_items):
    [item] = add_items([{"title": "kept"}])
    user = create_user(db, "ann", "x")
    record_click(db, user["id"], item, True, "ui")
    refused = run("feeds", "remove", 1, "--db", db_path)
    assert refused.exit_code == 1
    assert "nothing removed" in refused.output and "https://example.org/test.xml" in refused.output
    assert "keep its 1 item and 1 click" in refused.output and "--yes" in refused.output
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 1
    done = run("feeds", "remove", 1, "--yes", "--db", db_path)
    assert done.exit_code == 0 and "Removed feed 1" in done.output
    assert db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 1
    missing = run("feeds", "remove", 1, "--yes", "--db", db_path)
    assert missing.exit_code == 1 and "unknown feed 1" in missing.output


def test_feeds_preview_local_file(feed_file):
    result = run("feeds", "preview", feed_file, "--limit", 2)
    assert result.exit_code == 0, result.output
    assert "Quantum & Friends  (3 entries)" in result.output
    assert "Surface codes below threshold" in result.output and "Tomato" not in result.output
    doc = json.loads(run("feeds", "preview", feed_file, "--json").stdout)
    assert len(doc["entries"]) == 3 and doc["feed"]["n_entries"] == 3


def test_opml_round_trip_escapes_titles(db_path, db, tmp_path):
    db.execute(
        "INSERT INTO feeds (url, title) VALUES (?, ?)", ["https://example.org/a?x=1&y=2", 'Tom & Jerry <"quoted">']
    )
    db.execute("INSERT INTO feeds (url, title) VALUES ('https://example.org/b', NULL)")
    out = tmp_path / "subs.opml"
    assert run("feeds", "export-opml", "--output", out, "--db", db_path).exit_code == 0
    root = ET.parse(out).getroot()
    outlines = root.findall("./body/outline")
    assert [o.get("xmlUrl") for o in outlines] == ["https://example.org/a?x=1&y=2", "https://example.org/b"]
    assert outlines[0].get("title") == 'Tom & Jerry <"quoted">'
    stdout = run("feeds", "export-opml", "--db", db_path).stdout
    assert ET.fromstring(stdout.encode()).tag == "opml"

    other = tmp_path / "other.db"
    result = run("feeds", "import-opml", out, "--db", other, "--json")
    doc = json.loads(result.stdout)
    assert doc["added"] == 2 and doc["already_subscribed"] == 0
    again = json.loads(run("feeds", "import-opml", out, "--db", other, "--json").stdout)
    assert again["added"] == 0 and again["already_subscribed"] == 2
    listed = json.loads(run("feeds", "list", "--json", "--db", other).stdout)["feeds"]
    assert listed[0]["title"] == 'Tom & Jerry <"quoted">'


def test_import_opml_takes_only_web_feeds_and_nested_outlines(db_path, tmp_path):
    opml = tmp_path / "in.opml"
    opml.write_text(
        '<?xml version="1.0"?><opml version="1.0"><head><title>x</title></head><body>'
        '<outline text="Science"><outline text="Nature" type="rss" xmlUrl="https://www.nature.com/nature.rss"/>'
        '<outline text="Secrets" type="rss" xmlUrl="file:///etc/passwd"/></outline>'
        '<outline text="Local" xmlUrl="/home/me/feed.xml"/>'
        '<outline text="Dup" xmlUrl="https://www.nature.com/nature.rss"/>'
        "</body></opml>"
    )
    result = run("feeds", "import-opml", opml, "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "1 feed added" in result.stdout and "2 skipped" in result.stdout
    assert "file:///etc/passwd (not a feed file)" in result.stdout
    assert "/home/me/feed.xml (no such feed file on this machine)" in result.stdout


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("<opml><body>", "not valid XML"),
        ("<rss version='2.0'></rss>", "not an OPML file"),
    ],
)
def test_import_opml_bad_files(db_path, tmp_path, content, fragment):
    path = tmp_path / "bad.opml"
    path.write_text(content)
    result = run("feeds", "import-opml", path, "--db", db_path)
    assert result.exit_code == 1 and fragment in result.output
    missing = run("feeds", "import-opml", tmp_path / "nope.opml", "--db", db_path)
    assert missing.exit_code == 1 and "no such file" in missing.output


def test_feed_prints_the_ranked_list_with_reasons(db_path, db, add_items):
    add_items(
        [
            {"title": "Quantum error correction", "summary": "qubits", "days_ago": 1},
            {"title": "Sourdough", "summary": "bread", "days_ago": 2},
            {"title": "Quantum archive classic", "summary": "qubits", "days_ago": 100},
        ]
    )
    create_user(db, "ann", "quantum error correction qubits")
    result = run("feed", "ann", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "1 item from the last 7 days clears ann's bar" in result.output
    assert "1. [1] Quantum error correction" in result.output
    assert "why: Strong match: matches your interest “quantum error correction qubits”" in result.output
    assert "archive classic" not in result.output
    # below the fold: counted, and listed only when asked
    assert "Sourdough" not in result.output
    assert "— 1 item below your bar (--below-bar lists them) —" in result.output
    below = run("feed", "ann", "--below-bar", "--db", db_path)
    lines = below.output.splitlines()
    fold = lines.index("— 1 item below your bar, by score: the bar is each one's match, not its score —")
    assert (
        lines.index(next(l for l in lines if "Quantum error" in l))
        < fold
        < lines.index(next(l for l in lines if "Sourdough" in l))
    )
    assert "why: No match: not close to any of your interests" in below.output
    everything = run("feed", "ann", "--all", "--limit", 5, "--db", db_path)
    assert "archive classic" in everything.output
    doc = json.loads(run("feed", "ann", "--json", "--since-days", 30, "--db", db_path).stdout)
    assert doc["ok"] and [i["id"] for i in doc["items"]] == [1] and doc["below_bar"] == 1


def test_feed_says_how_to_see_the_items_above_the_bar_past_the_page(db_path, db, add_items):
    # A trial's finding: "25 items … clear marta's bar (the best 20 shown)", and nothing
    # pointed to `--offset 20` for ranks 21–25 (the footer offered only --below-bar).
    add_items([{"title": f"Quantum error correction {k}", "summary": "qubits", "days_ago": 1} for k in range(4)])
    create_user(db, "ann", "quantum error correction qubits")
    first = run("feed", "ann", "--limit", 2, "--db", db_path)
    assert first.exit_code == 0, first.output
    assert "4 items from the last 7 days clear ann's bar (the best 2 shown)" in first.output
    # the database named as the person named it, or the command opens another one
    hermes = f"hermes --db {shlex.quote(str(db_path))}"
    assert f"— 2 more items clear your bar: `{hermes} feed ann --offset 2 --limit 2` shows ranks 3–4 —" in first.output
    rest = run("feed", "ann", "--offset", 2, "--limit", 2, "--db", db_path)
    assert "3. [" in rest.output and "4. [" in rest.output and "clear your bar:" not in rest.output, rest.output
    one_left = run("feed", "ann", "--limit", 3, "--db", db_path).output
    assert f"— 1 more item clears your bar: `{hermes} feed ann --offset 3 --limit 3` shows rank 4 —" in one_left
    # the next page holds at most --limit of them (a trial read "shows ranks 9–57" of a page of 8)
    small = run("feed", "ann", "--limit", 1, "--db", db_path).output
    assert f"— 3 more items clear your bar: `{hermes} feed ann --offset 1 --limit 1` shows rank 2 —" in small
    assert "your bar:" not in run("feed", "ann", "--db", db_path).output  # all shown


@pytest.mark.parametrize("window", [[], ["--all"]])
def test_explain_gives_the_feed_line_s_reason_and_its_evidence(db_path, db, add_items, window):
    add_items(
        [
            {"title": "Quantum error correction", "summary": "qubits", "days_ago": 1},
            {"title": "Sourdough", "summary": "bread", "days_ago": 2},
        ]
    )
    create_user(db, "ann", "quantum error correction qubits")
    feed = run("feed", "ann", "--below-bar", *window, "--db", db_path).output.splitlines()
    for item_id in (1, 2):
        head = next(k for k, line in enumerate(feed) if f"[{item_id}]" in line)
        start = next(k for k in range(head, len(feed)) if feed[k].strip().startswith("why:"))
        end = next(
            (
                k
                for k in range(start + 1, len(feed))
                if not feed[k].startswith("     ") or feed[k].strip().startswith("https:")
            ),
            len(feed),
        )
        why = " ".join(" ".join(feed[start:end]).split())  # the reason, wrapped at any width
        rank = int(feed[head].split(".")[0])
        out = run("explain", "ann", item_id, *window, "--db", db_path)
        assert out.exit_code == 0, out.output
        lines = out.output.splitlines()
        ranks = next(k for k, line in enumerate(lines) if line.startswith("Ranks "))
        assert " ".join(" ".join(lines[1:ranks]).split()) == why
        pool = "unread items in the whole archive" if window else "unread items of the last 7 days"
        assert lines[ranks].startswith(f"Ranks {rank} of 2 {pool}")
        assert "  interests: closest “quantum error correction qubits”, similarity" in out.output
    assert ", below the bar ·" in lines[ranks] and "match: none" in out.output
    doc = json.loads(run("explain", "ann", 1, "--json", "--db", db_path).stdout)
    assert doc["ok"] and doc["match"] == "strong" and doc["explanation"]["evidence"]["interest"]


def test_feed_says_plainly_when_nothing_clears_the_bar(db_path, db, add_items):
    add_items([{"title": "Sourdough", "summary": "bread", "days_ago": 2}])
    create_user(db, "ann", "quantum error correction qubits")
    result = run("feed", "ann", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        "Nothing in the last 7 days clears ann's bar: none of the 1 unread item there is a "
        "strong or good match (1 none). --below-bar lists the closest anyway; widen the window "
        f"(--since-days N or --all), add feeds on the persona's topics (`hermes --db {db_path} feeds add URL`), "
        f"or like items (`hermes --db {db_path} like ann ITEM`)."
    )
    assert "Sourdough" not in result.output


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["feed", "nobody"], "unknown persona 'nobody'"),
        (["feed", "ann", "--all", "--since-days", "3"], "either --since-days or --all"),
    ],
)
def test_feed_mistakes(db_path, db, args, fragment):
    create_user(db, "ann", "x")
    result = run(*args, "--db", db_path)
    assert result.exit_code == 1 and fragment in result.output
    assert result.output.count("\n") == 1


def test_feed_with_nothing_recent_suggests_all(db_path, db):
    create_user(db, "ann", "x")
    result = run("feed", "ann", "--db", db_path)
    assert result.exit_code == 0 and "--all" in result.output


def test_an_empty_window_over_mcp_names_the_wider_one_and_its_count(db, add_items):
    """A trial: the CLI said "The last 365 days have 18 unread items", list_feed only "Widen
    since_days"."""
    from hermes.facekit.faces import speaking
    from hermes.storage.records import create_user
    from hermes.tools import call_tool, collect_tools

    add_items([{"title": f"Old paper {k}", "days_ago": 100} for k in range(3)])
    create_user(db, "lea", "papers")
    with speaking("mcp"):
        answer = call_tool(db, collect_tools()["list_feed"], {"user": "lea"})
    assert answer["ok"] and answer["items"] == []
    assert "The last 365 days have 3 unread items: since_days=365 shows them" in answer["message"]
