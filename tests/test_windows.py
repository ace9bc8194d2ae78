"""A persona's feed window: the one a person chose is remembered (``hermes feed`` in the
database, the web feed in a cookie, starting from the CLI's), an empty window of a non-empty archive offers a wider one that
has items, and the header's click weight is the persona's when the window is empty."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner
from web_support import client

from hermes.cli.app import build_app
from hermes.ranking.feed_window import chosen_window, wider_window
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user, require_user

OLD = [
    {"title": f"Sparse autoencoder paper {k} of last year", "days_ago": 200 + k, "url": f"https://e.org/old/{k}"}
    for k in range(6)
]
NEW = [{"title": "Sparse autoencoders this week", "days_ago": 1, "url": "https://e.org/new"}]


def cli(*args, env=None):
    return CliRunner().invoke(build_app(), [str(a) for a in args], env=env)


def shown(db_path, *extra) -> set[int]:
    result = cli("feed", "ada", "--below-bar", "--json", *extra, "--db", db_path)
    assert result.exit_code == 0, result.output
    return {i["id"] for i in json.loads(result.stdout)["items"]}


@pytest.fixture
def archive(db, add_items, no_bar):
    old = add_items(OLD)
    create_user(db, "ada", "sparse autoencoders")
    return old


def test_the_cli_remembers_the_window_a_person_chose(archive, db, db_path):
    assert shown(db_path) == set()  # 7 days by default: last year's papers are not in it
    assert shown(db_path, "--all") == set(archive)
    assert shown(db_path) == set(archive)  # remembered
    assert chosen_window(db, require_user(db, "ada")) is None
    assert shown(db_path, "--since-days", "7") == set()
    assert shown(db_path) == set()
    assert chosen_window(db, require_user(db, "ada")) == 7


def test_an_empty_window_offers_the_one_that_has_items(archive, db, db_path):
    assert wider_window(db, require_user(db, "ada"), 7) == (365, len(archive))
    result = cli("feed", "ada", "--db", db_path)
    assert result.exit_code == 0
    # the command to type names the database given, as the next-page hint does (a trial's
    # demo database)
    assert (
        f"The last 365 days have 6 unread items: `hermes --db {shlex.quote(str(db_path))} feed ada --since-days 365` shows them "
        "(and keeps that window)."
    ) in result.stdout
    assert "`hermes feed ada --since-days 365`" in cli("feed", "ada", env={"HERMES_DB": str(db_path)}).stdout
    assert wider_window(db, require_user(db, "ada"), None) is None


def test_the_web_remembers_the_window_chosen_in_it(archive, db, db_path):
    with client(db_path) as web:
        assert 'aria-current="true">7 days' in web.get("/feed?user=ada").text
        web.get("/feed?user=ada&days=all")
        page = web.get("/feed?user=ada").text  # a later visit, no days in the address
        assert 'aria-current="true">all' in page and "Sparse autoencoder paper 0" in page
        # from the whole archive, the 7-day link says days=7 (the default is "all" now)
        assert "/feed?user=ada&amp;days=7" in page
        assert 'aria-current="true">7 days' in web.get("/feed?user=ada&days=7").text
        assert 'aria-current="true">7 days' in web.get("/feed?user=ada").text
    # kept in the browser (a GET writes no database): another browser starts from the CLI's
    assert chosen_window(db, require_user(db, "ada")) == 7


def test_the_web_starts_from_the_window_the_cli_chose(archive, db_path):
    cli("feed", "ada", "--since-days", "30", "--db", db_path)
    with client(db_path) as web:
        assert 'aria-current="true">30 days' in web.get("/feed?user=ada").text


def test_a_tag_link_into_the_archive_is_no_choice_of_window(archive, db_path):
    with client(db_path) as web:
        web.get("/feed?user=ada&days=all&tag=anything")
        assert 'aria-current="true">7 days' in web.get("/feed?user=ada").text


def test_the_web_offers_the_window_that_has_items(archive, db_path):
    with client(db_path) as web:
        page = web.get("/feed?user=ada").text
    assert "data-offer" in page and "Show the last 365 days: 6 unread items" in page
    assert "/feed?user=ada&amp;days=365" in page


def test_the_header_weight_of_an_empty_window_is_the_personas(archive, db, db_path):
    ada = require_user(db, "ada")
    for item in archive:
        record_click(db, ada["id"], item, item != archive[5], "ui")
    # six clicks: 6 / (6 + 5) of the ranking, as `hermes persona show` says
    persona = cli("persona", "show", "ada", "--db", db_path).stdout
    assert "55%" in persona
    with client(db_path) as web:
        page = web.get("/feed?user=ada").text  # 7 days: empty
    assert "your likes and dislikes weigh 55%" in page and "weigh 0%" not in page


def test_the_digest_reaches_past_a_year(archive, db_path):
    with client(db_path) as web:
        week = web.get("/digest?user=ada").text
        assert "/digest?user=ada&amp;days=36500" in week and ">all</a>" in week
        page = web.get("/digest?user=ada&days=36500").text
    assert "· whole archive" in page and 'aria-current="true">all' in page
    assert "36500 days" not in page


def test_a_wider_window_is_offered_only_when_it_holds_more(db, add_items, db_path):
    """A trial: nothing in the last 7 days cleared the bar, and the hint sent the person to
    30 days, then to 365, over the same 147 items. A wider window is offered only where it
    holds more unread items than this one."""
    add_items(OLD + NEW)
    create_user(db, "bea", "medieval church architecture")  # nothing clears her bar
    week = cli("feed", "bea", "--db", db_path)
    assert "Nothing in the last 7 days clears bea's bar" in week.stdout
    assert "The last 365 days have 7 unread items" in " ".join(week.stdout.split())
    year = cli("feed", "bea", "--since-days", "365", "--db", db_path)
    assert "Nothing in the last 365 days clears bea's bar" in year.stdout
    assert "shows them (and keeps that window)" not in year.stdout  # the archive holds no more
    assert wider_window(db, require_user(db, "bea"), 365, more_than=7) is None
    assert wider_window(db, require_user(db, "bea"), 7, more_than=1) == (365, 7)


def test_a_remembered_window_reads_as_whole_days_on_the_web(archive, db_path):
    """A trial: after `hermes feed NAME --since-days 7` the web said "the last 7.0 days"."""
    cli("feed", "ada", "--since-days", "7", "--db", db_path)
    with client(db_path) as web:
        page = web.get("/feed?user=ada").text
    assert "7.0" not in page and "7 days" in page
