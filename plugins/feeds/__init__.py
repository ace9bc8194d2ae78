"""The feeds tool group: the ranked feed, feedback, explanations and subscriptions.

Tools are registered here (the functions live in :mod:`hermes_feeds.tools`); the CLI's
``hermes feeds …`` and ``hermes feed USER`` come from :mod:`hermes_feeds.cli`.
"""

from hermes.contract import UNTRUSTED, Tool
from hermes.hookspecs import hookimpl

from . import tools as t
from .cli import register

GROUP = "feeds"

TOOLS = [
    Tool(
        name="list_feed", fn=t.list_feed, group=GROUP, read_only=True, idempotent=True,
        empty=t.EMPTY["list_feed"],
        description="The persona's ranked feed: unread items, best first, each with an id, "
                    "title, url, source, score and a short reason (the ranking components that "
                    "pushed it up). since_days limits to recent items (default 7; null = the "
                    "whole archive). Use the item ids with record_feedback and explain_item."
                    + UNTRUSTED,
    ),
    Tool(
        name="record_feedback", fn=t.record_feedback, group=GROUP, idempotent=True,
        empty=t.EMPTY["record_feedback"],
        description="Record that the persona liked (liked=true) or disliked (liked=false) an "
                    "item; a new answer replaces the persona's earlier one on that item. "
                    "Stored as agent feedback; the next list_feed learns from it.",
    ),
    Tool(
        name="explain_item", fn=t.explain_item, group=GROUP, read_only=True, idempotent=True,
        empty=t.EMPTY["explain_item"],
        description="Explain why an item ranks where it does for a persona: each ranking "
                    "component's contribution, the matched tags with their preference scores, "
                    "the blend weight between written interests and learned behaviour, and the "
                    "liked items it is closest to." + UNTRUSTED,
    ),
    Tool(
        name="add_feed", fn=t.add_feed, group=GROUP, idempotent=True, open_world=True,
        empty=t.EMPTY["add_feed"],
        description="Subscribe to an RSS/Atom/RDF feed by its http(s) URL. The URL is fetched "
                    "once to check that it is a feed; nothing is subscribed if it is not, or "
                    "if it is already subscribed. Items are NOT loaded now: they arrive with "
                    "the next `hermes ingest`. Use preview_feed to look first. Private, "
                    "loopback and local-network addresses are refused." + UNTRUSTED,
    ),
    Tool(
        name="preview_feed", fn=t.preview_feed, group=GROUP, read_only=True, idempotent=True,
        open_world=True, empty=t.EMPTY["preview_feed"],
        description="Fetch an http(s) feed URL and show its most recent entries without "
                    "subscribing or storing anything. Private, loopback and local-network "
                    "addresses are refused." + UNTRUSTED,
    ),
    Tool(
        name="list_feeds", fn=t.list_feeds, group=GROUP, read_only=True, idempotent=True,
        empty=t.EMPTY["list_feeds"],
        description="List the subscribed feeds: id, title, url, number of items stored, when "
                    "each was last fetched, and its last error and error count if fetching "
                    "fails. Use the ids with remove_feed." + UNTRUSTED,
    ),
    Tool(
        name="remove_feed", fn=t.remove_feed, group=GROUP, destructive=True, idempotent=True,
        empty=t.EMPTY["remove_feed"],
        description="Unsubscribe from a feed (by id from list_feeds). Its items stay in the "
                    "archive and every like/dislike on them is kept; the feed is just no "
                    "longer fetched. Requires confirm=true: with confirm=false nothing changes "
                    "and the answer says exactly what would be removed." + UNTRUSTED,
    ),
    Tool(
        name="suggest_feeds", fn=t.suggest_feeds, group=GROUP, read_only=True, idempotent=True,
        empty=t.EMPTY["suggest_feeds"],
        description="Suggest feeds to subscribe to from a curated list shipped with hermes, "
                    "scored against the tags the persona liked and the words of its interests; "
                    "already-subscribed feeds are left out. No web search. Subscribe with "
                    "add_feed(url).",
    ),
]


@hookimpl
def hermes_register_tools():
    return list(TOOLS)


@hookimpl
def hermes_register_commands(app):
    register(app)
