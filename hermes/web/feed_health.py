"""What the pages say about failing feeds: how many the last refresh could not fetch (the
refresh line of the feed and feeds pages, and the JSON their script polls), and each failing
feed's next step on the Feeds page. A failure said only in the server's log is one the
reader never sees."""

from __future__ import annotations

from hermes.facekit.faces import plural
from hermes.storage.records import failing_feed_ids

from .render import fmt_until


def refresh_failures(db, state: dict) -> dict:
    """``failed``: feeds the last refresh tried and could not fetch (its outcome);
    ``failing``: feeds whose last try failed, those it left alone too (a feed backing off
    after repeated failures is skipped, not tried); ``words``: the two said in one phrase,
    which links to the Feeds page ("" when none); ``url``: the Feeds page at the first
    failing feed, where each error is shown."""
    by_status = (state.get("last") or {}).get("feeds_by_status") or {}
    failed = int(by_status.get("failed") or 0)
    rows = failing_feed_ids(db)
    failing = max(len(rows), failed)
    if failed:
        words = f"{plural(failed, 'feed')} failed"
        if failing > failed:
            words += f", {failing} failing in all"
    elif failing:
        words = f"{plural(failing, 'feed')} failing"
    else:
        words = ""
    if words:
        words += ": see why on the Feeds page"
    return {"failed": failed, "failing": failing, "words": words, "url": f"/feeds#feed-{rows[0]}" if rows else "/feeds"}


def next_step(feed: dict, refresh: dict) -> dict:
    """What happens next to a feed whose last try failed, and what the person can do, in
    the CLI's words (``hermes.ingest.pipeline.skip_reason``, ``hermes ingest``'s lines):
    ``text``, then ``command`` (a terminal command, or None) and ``after``.

    A feed that failed twice or more backs off, and "Refresh now" skips it until then: only
    ``hermes ingest --feed ID`` fetches it sooner. A pause the server asked for is kept even
    then, and a private address an agent subscribed needs ``hermes feeds trust``."""
    # Here, not at the top: the ingest modules load httpx, which a page without a failing
    # feed does not need.
    from ..ingest.guard import REFUSED
    from ..ingest.pipeline import SERVER_PAUSE

    error = feed.get("last_error") or ""
    failures = feed.get("error_count") or 0
    retry = fmt_until(feed.get("retry_after")) if feed.get("retry_after") else ""
    if REFUSED in error:
        return {
            "text": "An agent subscribed this private address; to let hermes fetch it, run",
            "command": f"hermes feeds trust {feed['id']}",
            "after": " in a terminal.",
        }
    if error.startswith(GONE):
        # trying again cannot help while the file or page is missing, however soon
        return {
            "text": "Trying again will not help while it is missing: put it back, or remove the feed (Remove…).",
            "command": None,
            "after": "",
        }
    if SERVER_PAUSE in error and retry:
        return {"text": f"The server asked for a pause: next try {retry}.", "command": None, "after": ""}
    if retry and retry != "now":
        return {
            "text": f"It failed {failures} times in a row, so it is tried less often: "
            f"next try {retry} (Refresh now skips it until then). To fetch it now, run",
            "command": f"hermes ingest --feed {feed['id']}",
            "after": " in a terminal.",
        }
    if refresh.get("background"):
        when = fmt_until(feed.get("next_fetch")) if feed.get("next_fetch") else ""
        return {
            "text": f"The next refresh tries it again{f' ({when})' if when != 'now' else ''}, or press Refresh now.",
            "command": None,
            "after": "",
        }
    return {"text": "Refresh now tries it again.", "command": None, "after": ""}


#: errors that say the feed's file or page is not there (no retry brings it back)
GONE = ("file not found", "HTTP 404", "HTTP 410")

__all__ = ["next_step", "refresh_failures"]
