"""The feeds list beside the web feed: a feed with nothing unread in the window but items
outside it says so and links the window that has them — a newcomer trial read "Physics
Conversations 0" for the bundled sample feeds (dated 2007) and never saw them. The window
offered is the one an empty feed page offers (the narrowest wider one with unread items)."""

from __future__ import annotations

import html
import re

import pytest
from web_support import client, seed

OLD = "https://example.org/physics.xml"
LAST_MONTH = "https://example.org/monthly.xml"


@pytest.fixture
def feeds(db, add_items, no_bar):
    seed(db, add_items)  # ada, and two feeds with this week's items
    add_items(
        [{"title": f"Physics conversation {n}", "published": f"2007-05-0{n}T10:00:00+00:00"} for n in range(1, 4)],
        feed_url=OLD,
        feed_title="Physics Conversations",
    )
    add_items([{"title": "A monthly letter", "days_ago": 40}], feed_url=LAST_MONTH, feed_title="Monthly letter")
    return {url: db.execute("SELECT id FROM feeds WHERE url = ?", [url]).fetchone()[0] for url in (OLD, LAST_MONTH)}


@pytest.fixture
def web(db_path, feeds):
    with client(db_path) as c:
        yield c


def views_row(page: str) -> str:
    return re.search(r'<nav class="views" aria-label="Views">.*?</nav>', page, re.S).group(0)


def link_of(row: str, title: str) -> re.Match:
    found = re.search(
        rf'<a href="([^"]+)"[^>]*>{re.escape(title)} <span class="count"[^>]*>(\d+)</span>(.*?)</a>', row, re.S
    )
    assert found, row
    return found


def test_a_feed_with_nothing_in_the_window_says_how_many_are_older_and_links_them(web, feeds):
    row = html.unescape(views_row(web.get("/feed?user=ada").text))
    old = link_of(row, "Physics Conversations")
    assert old.group(2) == "0"
    assert "3 older" in old.group(3)
    assert old.group(1) == f"/feed?user=ada&days=all&feed={feeds[OLD]}"
    assert 'title="Nothing unread from the last 7 days; the whole archive holds 3"' in row
    # one of last month: the narrowest wider window that has it, as an empty page offers
    monthly = link_of(row, "Monthly letter")
    assert monthly.group(2) == "0" and "1 older, last 365 days" in monthly.group(3)
    assert monthly.group(1) == f"/feed?user=ada&days=365&feed={feeds[LAST_MONTH]}"
    # a feed with this week's items: its count, and its link keeps the window
    week = link_of(row, "arXiv cs.LG")
    assert week.group(2) != "0" and "older" not in week.group(3) and "days=" not in week.group(1)


def test_the_link_shows_the_feed_s_items(web, feeds):
    page = web.get(f"/feed?user=ada&days=all&feed={feeds[OLD]}").text
    assert "Physics conversation 1" in page and "Physics conversation 3" in page
    # in the whole archive nothing is outside the window: no hint
    assert "older</span>" not in views_row(page)


def test_the_feed_s_empty_window_offers_the_window_that_has_its_items(web, feeds):
    page = html.unescape(web.get(f"/feed?user=ada&feed={feeds[OLD]}").text)
    assert "Nothing unread from the last 7 days in this view." in page
    offer = re.search(r'<a class="offer" data-offer href="([^"]+)">([^<]+)</a>', page)
    assert offer, page[-3000:]
    assert offer.group(2) == "Show the whole archive: 3 unread items"
    assert offer.group(1) == f"/feed?user=ada&days=all&feed={feeds[OLD]}"


def test_a_feed_with_nothing_unread_anywhere_has_no_hint(web, db, feeds):
    db.execute("DELETE FROM items WHERE feed_id = ?", [feeds[LAST_MONTH]])
    from hermes.ranking import matrix

    matrix.clear_cache()
    row = html.unescape(views_row(web.get("/feed?user=ada").text))
    monthly = link_of(row, "Monthly letter")
    assert monthly.group(2) == "0" and "older" not in monthly.group(3)
