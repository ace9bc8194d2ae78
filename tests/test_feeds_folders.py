"""OPML folders and site links: kept on import, shown by `hermes feeds list` and the web
feeds page, written back as nested outlines with htmlUrl on export."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from feeds_cli_support import ok_json, run
from feeds_support import SAMPLE_ENTRIES, rss
from web_support import client

NESTED = (
    '<?xml version="1.0"?><opml version="2.0"><head><title>reader</title></head><body>'
    '<outline text="Science" title="Science">'
    '  <outline text="Nature" title="Nature (journal)" type="rss" '
    '           xmlUrl="https://www.nature.com/nature.rss" htmlUrl="https://www.nature.com/"/>'
    '  <outline text="Physics">'
    '    <outline text="arXiv quant-ph" type="rss" xmlUrl="https://rss.arxiv.org/rss/quant-ph"'
    '             htmlUrl="javascript:alert(1)"/>'
    "  </outline>"
    "</outline>"
    '<outline text="Loose blog" type="rss" xmlUrl="https://blog.example.org/feed"/>'
    "</body></opml>"
)


def _import(tmp_path, db_path, text=NESTED, name="in.opml"):
    path = tmp_path / name
    path.write_text(text)
    return ok_json("feeds", "import-opml", path, "--db", db_path)


def _by_url(db_path):
    return {f["url"]: f for f in ok_json("feeds", "list", "--db", db_path)["feeds"]}


def test_import_keeps_nested_folders_as_a_path_and_the_site_link(tmp_path, db_path):
    assert _import(tmp_path, db_path)["added"] == 3
    feeds = _by_url(db_path)
    nature = feeds["https://www.nature.com/nature.rss"]
    assert (nature["title"], nature["folder"], nature["site_url"]) == (
        "Nature",
        "Science",
        "https://www.nature.com/",
    )  # text is the name a reader shows
    quant = feeds["https://rss.arxiv.org/rss/quant-ph"]
    assert quant["folder"] == "Science / Physics" and quant["site_url"] is None  # not http(s)
    assert feeds["https://blog.example.org/feed"]["folder"] is None
    human = run("feeds", "list", "--db", db_path).output
    assert "[2] arXiv quant-ph  (in Science / Physics)" in human
    assert "[3] Loose blog\n" in human


def test_export_writes_folders_as_nested_outlines_with_html_url(tmp_path, db_path):
    _import(tmp_path, db_path)
    doc = ok_json("feeds", "export-opml", "--db", db_path)
    assert doc["feed_count"] == 3 and doc["folders"] == ["Science", "Science / Physics"]
    body = ET.fromstring(doc["opml"].encode()).find("body")
    science = body.find("outline[@text='Science']")
    assert science.get("xmlUrl") is None and science.get("title") == "Science"
    nature = science.find("outline[@xmlUrl='https://www.nature.com/nature.rss']")
    assert nature.get("htmlUrl") == "https://www.nature.com/" and nature.get("type") == "rss"
    assert nature.get("text") == nature.get("title") == "Nature"
    quant = science.find("outline[@text='Physics']/outline")
    assert quant.get("xmlUrl") == "https://rss.arxiv.org/rss/quant-ph" and quant.get("htmlUrl") is None
    assert body.find("outline[@xmlUrl='https://blog.example.org/feed']") is not None


def test_export_then_import_keeps_folders_and_site_links(tmp_path, db_path):
    _import(tmp_path, db_path)
    out = tmp_path / "out.opml"
    written = ok_json("feeds", "export-opml", "--output", out, "--db", db_path)
    assert written["path"] == str(out) and out.read_text() == written["opml"]
    other = tmp_path / "other.db"
    assert ok_json("feeds", "import-opml", out, "--db", other)["added"] == 3
    keep = ("title", "folder", "site_url")
    assert {u: [f[k] for k in keep] for u, f in _by_url(other).items()} == {
        u: [f[k] for k in keep] for u, f in _by_url(db_path).items()
    }


def test_reimport_adds_nothing_and_moves_feeds_into_the_files_folders(tmp_path, db_path):
    _import(tmp_path, db_path)
    assert run("feeds", "rename", "1", "My Nature", "--db", db_path).exit_code == 0
    moved = NESTED.replace('<outline text="Physics">', '<outline text="Quantum">').replace(
        'text="Science" title="Science"', 'text="Journals"'
    )
    moved = moved.replace('<outline text="Loose blog"', '<outline text="Blog"')
    path = tmp_path / "again.opml"
    path.write_text(moved)
    result = run("feeds", "import-opml", path, "--db", db_path)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("0 feeds added, 3 already subscribed (2 moved to the file's folder).")
    assert "moved: feed 2 to Journals / Quantum (was in Science / Physics)" in result.stdout
    feeds = _by_url(db_path)
    assert len(feeds) == 3
    nature = feeds["https://www.nature.com/nature.rss"]
    assert (nature["title"], nature["folder"]) == ("My Nature", "Journals")  # the title stays yours
    # A feed at the file's top level keeps the folder it has.
    flat = '<opml version="2.0"><body><outline text="N" xmlUrl="https://www.nature.com/nature.rss"/></body></opml>'
    again = _import(tmp_path, db_path, flat, "flat.opml")
    assert again["moved"] == [] and again["already_subscribed"] == 1
    assert _by_url(db_path)["https://www.nature.com/nature.rss"]["folder"] == "Journals"


def test_the_web_feeds_page_shows_folder_and_site_link(tmp_path, db_path):
    _import(tmp_path, db_path)
    with client(db_path) as c:
        page = c.get("/feeds").text
    assert 'class="feed-folder muted"' in page and "Science / Physics" in page
    assert 'href="https://www.nature.com/"' in page and "javascript:" not in page


def test_feeds_folder_moves_a_feed_nests_and_returns_it_to_the_top_level(tmp_path, db_path):
    _import(tmp_path, db_path)
    moved = run("feeds", "folder", "3", "  Science  /  Physics ", "--db", db_path)
    assert moved.exit_code == 0, moved.output
    assert moved.output.strip() == "Feed 3 is now in Science / Physics (was at the top level)."
    assert "[3] Loose blog  (in Science / Physics)" in run("feeds", "list", "--db", db_path).output
    doc = ok_json("feeds", "folder", "3", "--db", db_path)  # no FOLDER: the top level
    assert doc["changed"] and doc["feed"]["folder"] is None and doc["feed"]["was"] == "Science / Physics"
    assert doc["message"] == "Feed 3 is now at the top level (was in Science / Physics)."
    again = ok_json("feeds", "folder", "3", "", "--db", db_path)
    assert not again["changed"] and "already at the top level; nothing changed" in again["message"]
    exported = ok_json("feeds", "export-opml", "--db", db_path)
    assert exported["folders"] == ["Science", "Science / Physics"]


def test_feeds_folder_unknown_feed_is_one_error_line(tmp_path, db_path):
    _import(tmp_path, db_path)
    result = run("feeds", "folder", "9", "Reading", "--db", db_path)
    assert result.exit_code == 1 and result.stderr.startswith("error: unknown feed 9")
    assert "hermes feeds list" in result.stderr


def test_feeds_add_takes_a_folder(tmp_path, db_path):
    path = tmp_path / "pod.xml"
    path.write_bytes(rss("Pod", SAMPLE_ENTRIES))
    added = run("feeds", "add", path, "--folder", "Listening / Physics", "--db", db_path)
    assert added.exit_code == 0, added.output
    assert "Subscribed: [1] Pod  (in Listening / Physics, 3 entries now)" in added.output
    assert _by_url(db_path)[str(path)]["folder"] == "Listening / Physics"


def test_import_says_the_added_feeds_are_checked_at_the_next_ingest(tmp_path, db_path):
    path = tmp_path / "in.opml"
    path.write_text(NESTED)
    result = run("feeds", "import-opml", path, "--db", db_path)
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("3 feeds added, 0 already subscribed.")
    assert "not fetched: the next `hermes ingest` checks each one" in first
    again = run("feeds", "import-opml", path, "--db", db_path)  # nothing added: no such hint
    assert again.stdout.strip() == "0 feeds added, 3 already subscribed."


TRIAL = (  # as Feedly / Inoreader export: one feed in two folders, a folder named with " / "
    '<?xml version="1.0"?><opml version="2.0"><body>'
    '<outline text="Papers"><outline text="arXiv cs.LG" type="rss" '
    '  xmlUrl="https://rss.arxiv.org/rss/cs.LG"/></outline>'
    '<outline text="AI  /  ML" title="AI / ML">'
    '  <outline text="arXiv" type="rss" xmlUrl="https://RSS.arxiv.org/rss/cs.LG"/>'
    '  <outline text="Blog" type="rss" xmlUrl="feed://blog.example.org/blog-en.xml"/>'
    '  <outline text="Secure" type="rss" xmlUrl="FEED:https://secure.example.org/atom"/>'
    "</outline>"
    '<outline text="Not a feed" type="rss" xmlUrl="javascript:alert(1)"/>'
    "</body></opml>"
)


def test_a_feed_listed_twice_is_counted_and_named_with_the_folder_it_kept(tmp_path, db_path):
    path = tmp_path / "trial.opml"
    path.write_text(TRIAL)
    result = run("feeds", "import-opml", path, "--db", db_path)
    assert result.exit_code == 0, result.output
    # 5 entries: 3 added + 0 already + 1 listed twice + 1 skipped
    assert result.stdout.startswith("3 feeds added, 0 already subscribed, 1 listed twice in the file, 1 skipped.")
    assert (
        "  listed twice: https://RSS.arxiv.org/rss/cs.LG (again in 'AI ／ ML'): kept in the first folder, 'Papers'\n"
    ) in result.stdout
    assert _by_url(db_path)["https://rss.arxiv.org/rss/cs.LG"]["folder"] == "Papers"
    again = _import(tmp_path, db_path, TRIAL, "again.opml")
    assert again["repeats"] == [{"url": "https://RSS.arxiv.org/rss/cs.LG", "folder": "AI ／ ML", "kept_in": "Papers"}]
    assert again["already_subscribed"] + len(again["repeats"]) + len(again["skipped"]) == 5


def test_feed_scheme_addresses_are_read_as_http_and_https(tmp_path, db_path):
    done = _import(tmp_path, db_path, TRIAL)
    assert [s["url"] for s in done["skipped"]] == ["javascript:alert(1)"]
    feeds = _by_url(db_path)
    assert feeds["http://blog.example.org/blog-en.xml"]["title"] == "Blog"  # feed://host/path
    assert feeds["https://secure.example.org/atom"]["title"] == "Secure"  # feed:https://…


def test_a_slash_inside_one_folder_name_stays_one_folder_through_export(tmp_path, db_path):
    path = tmp_path / "trial.opml"
    path.write_text(TRIAL)
    said = run("feeds", "import-opml", path, "--db", db_path).stdout
    assert ("  folder 'AI / ML' is one folder, stored as 'AI ／ ML': ' / ' separates nested folders in hermes") in said
    assert _by_url(db_path)["http://blog.example.org/blog-en.xml"]["folder"] == "AI \uff0f ML"
    doc = ok_json("feeds", "export-opml", "--db", db_path)
    assert doc["folders"] == ["AI ／ ML", "Papers"]
    body = ET.fromstring(doc["opml"].encode()).find("body")
    folder = body.find("outline[@text='AI ／ ML']")
    assert [o.get("text") for o in folder] == ["Blog", "Secure"]  # one level, not AI > ML
    out = tmp_path / "out.opml"
    out.write_text(doc["opml"])
    other = tmp_path / "other.db"
    back = ok_json("feeds", "import-opml", out, "--db", other)
    assert back["folders_renamed"] == [] and back["added"] == 3
    assert {f["folder"] for f in _by_url(other).values()} == {"Papers", "AI ／ ML"}
