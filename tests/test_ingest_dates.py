"""Dates that are not dates (issue 14): localized RFC 822 dates, dates in URLs, undated items.

The scenario: a persona subscribes to an arXiv listing and two news feeds whose 2018 items
carry Portuguese and Spanish dates. Those items must be dated 2018 and stay out of the
7-day window; an item with no date at all is "date unknown" on a feed's first fetch and
dated by first sight when it appears later.
"""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.contract import CandidateQuery
from hermes.ingest.dates import date_from_url, parse_localized, text_date
from hermes.ingest.parse import parse_feed
from hermes.ingest.pipeline import add_feeds, run_ingest
from hermes.ranking.rank import rank
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools

FIXTURES = Path(__file__).parent / "fixtures"


def iso(parsed) -> str:
    return time.strftime("%Y-%m-%dT%H:%M", parsed)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Seg, 24 Set 2018 18:43:00 -0300", "2018-09-24T21:43"),  # pt (UOL)
        ("Segunda-feira, 24 Set 2018 18:43:00 -0300", "2018-09-24T21:43"),
        ("Sáb, 06 Out 2018 20:00:00 BRT", "2018-10-06T23:00"),
        ("24 de setembro de 2018 18:43", "2018-09-24T18:43"),
        ("Mar, 24 Dic 2018 10:00:00 +0100", "2018-12-24T09:00"),  # es: "Mar" is Tuesday here
        ("Mié, 24 Oct 2018 21:10:00 +0200", "2018-10-24T19:10"),
        ("mar., 24 sept. 2018 10:00:00 +0200", "2018-09-24T08:00"),  # fr
        ("vendredi 5 octobre 2018 14h30", "2018-10-05T14:30"),
        ("Di, 24. Mai 2018 10:00:00 MESZ", "2018-05-24T08:00"),  # de
        ("Do, 04 Okt 2018 09:00:00 +0200", "2018-10-04T07:00"),
        ("Lun, 01 Ott 2018 09:00:00 +0200", "2018-10-01T07:00"),  # it
        ("Gio, 13 Dic 2018 09:00:00 +0100", "2018-12-13T08:00"),
        ("Wo, 03 Okt 2018 09:00:00 +0200", "2018-10-03T07:00"),  # nl
        ("ma, 01 mrt 2021 08:00:00 +0100", "2021-03-01T07:00"),
    ],
)
def test_localized_rfc822_dates(text, expected):
    assert iso(parse_localized(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Mon, 24 Sep 2018 10:00:00 +0000",  # English: feedparser's own parser answers
        "2018-09-24T10:00:00Z",
        "garbage 12 foo",
        "",
        "Seg, 31 Fev 2018 10:00:00 -0300",
    ],
)
def test_other_strings_are_left_to_feedparser(text):
    assert parse_localized(text) is None


def test_dates_in_urls():
    assert date_from_url("https://noticias.uol.com.br/politica/2018/09/24/a.htm") == "2018-09-24T00:00:00+00:00"
    assert date_from_url("https://example.org/news/2018-09-24-title") == "2018-09-24T00:00:00+00:00"
    assert date_from_url("https://example.org/a/20180924/") is None  # could be an article number
    assert date_from_url("https://example.org/p?d=2018/09/24") is None  # not in the path
    assert date_from_url("https://example.org/2018/13/40/") is None
    future = datetime.now(UTC) + timedelta(days=400)
    assert date_from_url(f"https://example.org/{future:%Y/%m/%d}/x") is None
    assert date_from_url(None) is None


def test_the_portuguese_feed_parses_with_2018_dates():
    feed = parse_feed((FIXTURES / "uol-eleicoes-2018.xml").read_bytes(), url="https://example.org/uol")
    dates = {item["title"][:20]: item["published"] for item in feed.items}
    assert dates["Pesquisa Ibope: Bols"] == "2018-09-24T21:43:00+00:00"
    assert dates["Abstenção preocupa p"] == "2018-09-28T14:20:00+00:00"  # "BRT" is UTC-3
    assert dates["Veja como votar: doc"] == "2018-10-05T00:00:00+00:00"  # no pubDate: the URL's
    assert dates["Especial: a história"] is None  # no date anywhere
    assert sum(d is not None and d.startswith("2018-") for d in dates.values()) == 7


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-11-26T10:00:00Z", "2026-11-26T10:00:00+00:00"),
        ("2026-11-26T10:00:00+02:00", "2026-11-26T08:00:00+00:00"),
        ("2026-11-26", "2026-11-26T00:00:00+00:00"),
        ("Thu, 26 Nov 2026 10:00:00 GMT", "2026-11-26T10:00:00+00:00"),
        ("Qui, 26 Nov 2026 10:00:00 -0300", "2026-11-26T13:00:00+00:00"),
        ("Thu, 26 Nov 2026 10:00:00 +02:00", "2026-11-26T08:00:00+00:00"),  # not UTC: the colon
        ("2026-1-5", "2026-01-05T00:00:00+00:00"),
        ("26 Nov 2026", "2026-11-26T00:00:00+00:00"),
        ("26. November 2026", "2026-11-26T00:00:00+00:00"),
        ("1 Jan 0001 00:00:00 +0100", None),  # a generator's zero, not 2001
        ("2026-02-30", None),  # no such day
        ("2611.01234", None),  # an arXiv id: a month, not a date
        ("2026-11", None),
        ("2026", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_dates_written_in_an_items_text(text, expected):
    assert text_date(text) == expected


def test_a_bridge_item_without_pubdate_is_dated_by_its_published_line(db, tmp_path):
    # The user trial's feed: no <pubDate>, "Published: 2026-11-26T10:00:00Z" in the text.
    feed = parse_feed((FIXTURES / "arxiv-bridge-nodate.xml").read_bytes(), url="https://e.org/b")
    assert [i["published"] for i in feed.items] == ["2026-11-26T10:00:00+00:00", "2026-11-27T10:00:00+00:00"]
    assert not any("Published" in i["summary"] for i in feed.items)
    path = tmp_path / "bridge.xml"
    shutil.copy(FIXTURES / "arxiv-bridge-nodate.xml", path)
    add_feeds(db, [(str(path), None)])
    summary = run_ingest(db)
    assert summary[0]["new"] == 2 and summary[0]["undated"] == 0 and summary.undated == 0


def _bridge_item(description: str, pub_date: str = "") -> dict:
    body = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>bridge</title>'
        "<link>http://export.arxiv.org</link><item><title>A paper</title>"
        f"<link>http://arxiv.org/abs/2611.09912v2</link><description>{description}</description>"
        f"{pub_date}</item></channel></rss>"
    )
    (item,) = parse_feed(body.encode(), url="https://e.org/b").items
    return item


def test_the_feeds_own_date_comes_first_and_an_arxiv_id_is_no_date():
    text = "&lt;p&gt;Authors: Zoe Park&lt;/p&gt;&lt;p&gt;We evaluate features.&lt;/p&gt;"
    own = _bridge_item(
        text + "&lt;p&gt;Published: 2026-11-26T10:00:00Z&lt;/p&gt;",
        "<pubDate>Mon, 30 Nov 2026 09:00:00 +0000</pubDate>",
    )
    assert own["published"] == "2026-11-30T09:00:00+00:00"
    updated = _bridge_item(text + "&lt;p&gt;Updated: 2026-11-28T10:00:00Z&lt;/p&gt;")
    assert updated["published"] == "2026-11-28T10:00:00+00:00" and updated["summary"] == "We evaluate features."
    # 2611.09912 says November 2026, but only that: without a real date the item is undated.
    assert _bridge_item(text)["published"] is None


def test_a_date_in_the_future_is_not_believed(db, tmp_path):
    """A post dated next January sat in every "last day" window for weeks (a user trial):
    beyond a day of clock skew the feed's date yields to the next source, else none."""
    now = datetime.now(UTC)
    rfc = lambda when: f"{when:%a, %d %b %Y %H:%M:%S} +0000"  # noqa: E731
    feed = tmp_path / "future.xml"
    feed.write_text(
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'
        "<channel><title>Blog</title><link>https://example.org/</link>"
        f"<item><title>Next year</title><guid>a</guid><pubDate>{rfc(now + timedelta(days=40))}</pubDate></item>"
        f"<item><title>Skewed clock</title><guid>b</guid><pubDate>{rfc(now + timedelta(hours=5))}</pubDate></item>"
        "<item><title>Dated by its URL</title><guid>c</guid>"
        "<link>https://example.org/2025/03/14/post</link>"
        f"<pubDate>{rfc(now + timedelta(days=400))}</pubDate></item>"
        "</channel></rss>",
        encoding="utf-8",
    )
    add_feeds(db, [(str(feed), "Blog")])
    create_user(db, "ann", "anything")
    run_ingest(db)
    published = dict(db.execute("SELECT title, published FROM items"))
    assert published["Next year"] is None  # first fetch: date unknown, in no window
    assert published["Skewed clock"] is not None  # hours ahead: a time zone, believed
    assert published["Dated by its URL"] == "2025-03-14T00:00:00+00:00"
    assert "Next year" not in titles_in_window(db, 1)


def test_a_generator_s_zero_date_is_not_believed(db, tmp_path):
    """A trial's 1970-01-01 pubDate (the Unix epoch: a date field left at zero) was stored as
    the item's real date."""
    feed = tmp_path / "epoch.xml"
    feed.write_text(
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title>'
        "<link>https://example.org/</link>"
        "<item><title>Epoch</title><guid>a</guid><pubDate>Thu, 01 Jan 1970 00:00:00 +0000</pubDate></item>"
        "<item><title>Old but real</title><guid>b</guid><pubDate>Tue, 06 Aug 1991 12:00:00 +0000</pubDate></item>"
        "<item><title>Epoch in its URL</title><guid>c</guid><link>https://example.org/1970/01/01/x</link></item>"
        "</channel></rss>",
        encoding="utf-8",
    )
    add_feeds(db, [(str(feed), "Blog")])
    run_ingest(db)
    published = dict(db.execute("SELECT title, published FROM items"))
    assert published["Epoch"] is None and published["Epoch in its URL"] is None
    assert published["Old but real"] == "1991-08-06T12:00:00+00:00"


def _listing(path: Path, n: int, start: int = 0) -> None:
    """A small listing of recent items (today's dates), so the 7-day window is not empty."""
    now = datetime.now(UTC)
    items = "".join(
        f"<item><title>Recent paper {k} on galaxy formation</title>"
        f"<link>https://example.org/papers/{k}</link><guid>paper-{k}</guid>"
        f"<description>Star formation and reionization in early galaxies, part {k}.</description>"
        f"<pubDate>{(now - timedelta(hours=k)):%a, %d %b %Y %H:%M:%S} +0000</pubDate></item>"
        for k in range(start, start + n)
    )
    path.write_text(
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>Papers</title>'
        f"<link>https://example.org/</link>{items}</channel></rss>",
        encoding="utf-8",
    )


@pytest.fixture
def subscribed(db, tmp_path):
    uol = tmp_path / "uol.xml"
    shutil.copy(FIXTURES / "uol-eleicoes-2018.xml", uol)
    elpais = tmp_path / "elpais.xml"
    shutil.copy(FIXTURES / "elpais-internacional-2018.xml", elpais)
    papers = tmp_path / "papers.xml"
    _listing(papers, 5)
    add_feeds(db, [(str(papers), "Papers"), (str(uol), "UOL"), (str(elpais), "El País")])
    create_user(db, "astro", "galaxy formation, star formation, reionization")
    return {"uol": uol, "elpais": elpais, "papers": papers}


def titles_in_window(db, days):
    user = db.execute("SELECT id, name, interests FROM users").fetchone()
    ranking = rank(db, dict(zip(("id", "name", "interests"), user)), CandidateQuery(since_days=days))
    marks = ",".join("?" * len(ranking.item_ids))
    return {
        r[0] for r in db.execute(f"SELECT title FROM items WHERE id IN ({marks})", [int(i) for i in ranking.item_ids])
    }


def test_old_news_is_dated_correctly_and_absent_from_the_7_day_window(db, subscribed):
    summary = run_ingest(db)
    by_feed = {s["title"]: s for s in summary}
    assert by_feed["UOL"]["new"] == 8 and by_feed["UOL"]["undated"] == 1
    assert by_feed["El País"]["undated"] == 0 and summary.undated == 1
    published = dict(db.execute("SELECT title, published FROM items"))
    assert published["Brasil vota en unas elecciones marcadas por la polarización"] == "2018-10-07T06:00:00+00:00"
    assert published["Especial: a história das eleições diretas no Brasil"] is None
    assert all(p.startswith("2018-") for t, p in published.items() if p and not t.startswith("Recent paper"))

    week = titles_in_window(db, 7)
    assert week == {f"Recent paper {k} on galaxy formation" for k in range(5)}
    everything = titles_in_window(db, None)
    assert "Especial: a história das eleições diretas no Brasil" in everything  # the archive has it
    assert len(everything) == 5 + 8 + 4
    # Undated is in no window at all, however wide.
    assert "Especial: a história das eleições diretas no Brasil" not in titles_in_window(db, 36500)


def _add_an_undated_entry(feed: Path) -> None:
    """The UOL feed publishes one more entry, with no date in it or in its URL."""
    text = feed.read_text(encoding="utf-8").replace(
        "</channel>",
        """
    <item><title>Nova matéria sem data</title>
      <link>https://noticias.uol.com.br/politica/nova-materia.htm</link>
      <description>Sem data no feed nem na URL.</description></item></channel>""",
    )
    feed.write_text(text, encoding="utf-8")


def test_an_undated_item_of_a_later_fetch_gets_the_time_it_was_first_seen(db, subscribed):
    run_ingest(db)
    _add_an_undated_entry(subscribed["uol"])
    before = datetime.now(UTC) - timedelta(seconds=5)
    summary = run_ingest(db)
    assert {s["title"]: s["undated"] for s in summary}["UOL"] == 1
    seen = db.execute("SELECT published FROM items WHERE title = 'Nova matéria sem data'").fetchone()[0]
    assert datetime.fromisoformat(seen) >= before.replace(microsecond=0)
    assert "Nova matéria sem data" in titles_in_window(db, 1)
    # The first fetch's undated item stays undated.
    assert db.execute("SELECT published FROM items WHERE title LIKE 'Especial:%'").fetchone()[0] is None


def test_a_date_hermes_estimated_is_marked_first_seen_on_every_face(db, db_path, subscribed):
    """A trial's two undated entries of a later fetch ranked #1 and #3 as "2026-12-01", under
    an ingest line saying they were "shown as 'date unknown'"."""
    from hermes.storage.records import create_user

    run_ingest(db)
    _add_an_undated_entry(subscribed["uol"])
    out = CliRunner().invoke(build_app(), ["ingest", "--db", str(db_path)])
    assert (
        "1 without a usable date (none, unreadable, before 1980 or more than a day in the "
        "future): 1 dated by when first seen (marked 'first seen')"
    ) in out.output
    assert "shown as 'date unknown'" not in out.output
    create_user(db, "reader", "política eleições")
    listed = call_tool(
        db, collect_tools()["list_feed"], {"user": "reader", "since_days": None, "below_bar": True, "limit": 100}
    )
    # (the compact page names a date's source only where it is not the feed's own)
    sources = {i["title"]: i.get("date_source", "feed") for i in listed["items"]}
    assert sources["Nova matéria sem data"] == "first seen"
    assert set(sources.values()) <= {"feed", "first seen", None} and "feed" in sources.values()
    feed = (
        CliRunner()
        .invoke(build_app(), ["feed", "reader", "--all", "-n", "100", "--below-bar", "--db", str(db_path)])
        .output
    )
    line = feed.split("Nova matéria sem data")[1].splitlines()[1]
    assert f"first seen {datetime.now(UTC):%Y-%m-%d}" in line


def test_the_cli_reports_unreadable_dates_and_shows_date_unknown(db, db_path, subscribed):
    runner = CliRunner()
    out = runner.invoke(build_app(), ["ingest", "--db", str(db_path)])
    assert out.exit_code == 0, out.output
    assert "1 without a usable date" in out.output
    data = json.loads(runner.invoke(build_app(), ["ingest", "--db", str(db_path), "--json"]).stdout)
    assert data["undated"] == 0  # nothing new the second time
    listing = runner.invoke(build_app(), ["feed", "astro", "--all", "-n", "30", "--below-bar", "--db", str(db_path)])
    assert listing.exit_code == 0, listing.output
    line = listing.output.split("Especial: a história")[1].splitlines()[1]
    assert "date unknown" in line


def test_items_dated_by_first_sight_before_the_mark_existed_get_it(db, add_items):
    from hermes.storage.migrations import migrate

    [seen, dated] = add_items([{"title": "seen"}, {"title": "dated"}])
    db.execute("UPDATE items SET published = fetched WHERE id = ?", [seen])
    db.execute("ALTER TABLE items DROP COLUMN dated_by")  # the archive as it was
    db.execute("DELETE FROM _migrations WHERE name = 'core:m013_items_dated_by'")
    assert migrate(db) == ["core:m013_items_dated_by"]
    assert dict(db.execute("SELECT id, dated_by FROM items")) == {seen: "first seen", dated: None}
