"""The corpus plugin: reading signals, faceted membership, revision log, strength, recall.

Hook implementations only; the work lives in :mod:`.signals` (writes), :mod:`.membership`
(facets, revision counter, change log), :mod:`.strength`, :mod:`.entities` (entity view,
recall), :mod:`.tools` (the MCP tools) and :mod:`.routes` (the JSON API). Items leave and
enter through :mod:`.references` (one record per item), :mod:`.export` (BibTeX, RIS,
CSL-JSON, Markdown, JSONL), :mod:`.sync` (a Markdown vault), :mod:`.save` with
:mod:`.metadata` (items no feed brought) and their tools in :mod:`.exchange`.
"""

from __future__ import annotations

from hermes.contract import UNTRUSTED, Tool
from hermes.hookspecs import hookimpl

from . import exchange, membership, routes, schema, tools
from .cli import register as register_commands
from .signals import KINDS, collect


@hookimpl
def hermes_migrations():
    return list(schema.MIGRATIONS)


@hookimpl
def hermes_register_signals():
    return list(KINDS)


@hookimpl
def hermes_signal_written(db, signal):
    # Runs inside the write's BEGIN IMMEDIATE transaction. Clicks and other plugins' kinds
    # do not change corpus membership.
    if signal.kind not in KINDS:
        return
    collect(membership.sync_item(db, signal.user_id, signal.item_id, at=signal.at))


EMPTY = {**tools.EMPTY, **exchange.EMPTY}


def _tool(fn, description: str, *, read_only: bool = False, destructive: bool = False,
          idempotent: bool = False, open_world: bool = False) -> Tool:
    return Tool(name=fn.__name__, fn=fn, description=description, group="corpus",
                read_only=read_only, destructive=destructive, idempotent=idempotent,
                open_world=open_world, empty=dict(EMPTY[fn.__name__]))


@hookimpl
def hermes_register_tools():
    return [
        _tool(tools.record_progress,
              "Record how much of an item a persona read or played (fraction 0-1). Reaching 0.3 "
              "puts the item in the persona's corpus as experienced. Returns the item's facet, "
              "the corpus revision and the membership changes."),
        _tool(tools.add_highlight,
              "Save a highlighted passage (and optional comment) from an item for a persona. The "
              "item becomes experienced. Returns highlight_id."),
        _tool(tools.delete_highlight,
              "Delete one of a persona's highlights by id. With confirm=false (default) it only "
              "shows the highlight that would be deleted; confirm=true deletes it.",
              destructive=True),
        _tool(tools.add_note,
              "Write a note about an item for a persona. The item becomes experienced. Returns note_id."),
        _tool(tools.delete_note,
              "Delete one of a persona's notes by id. With confirm=false (default) it only shows "
              "the note that would be deleted; confirm=true deletes it.",
              destructive=True),
        _tool(tools.favorite,
              "Save an item for later (on=true) or remove the favorite (on=false). A favorite "
              "alone puts the item in the 'saved' facet, not in 'experienced'.",
              idempotent=True),
        _tool(tools.corpus,
              "Summary of a persona's corpus: revision number, counts of experienced (read or "
              "captured) and saved-for-later items, and the top topics." + UNTRUSTED,
              read_only=True, idempotent=True),
        _tool(tools.corpus_items,
              "List a persona's corpus items in one facet: 'experienced' (read or highlighted/"
              "noted) or 'saved' (favorited, not yet read), newest first." + UNTRUSTED,
              read_only=True, idempotent=True),
        _tool(tools.corpus_changes,
              "Changes to a persona's corpus after a revision: items added to or removed from "
              "each facet, the current revision, and truncated=true if older changes were trimmed.",
              read_only=True, idempotent=True),
        _tool(tools.corpus_ranked,
              "A persona's experienced items ranked by strength (0-1): how much was read, "
              "highlights and notes, favorite, re-reads." + UNTRUSTED,
              read_only=True, idempotent=True),
        _tool(tools.corpus_entities,
              "Topics (tags) of the items a persona has read or captured, each with its items and "
              "first/last seen dates." + UNTRUSTED,
              read_only=True, idempotent=True),
        _tool(tools.recall,
              "Search what a persona has read or captured (never merely saved items) by keywords, "
              "across titles, summaries, highlights and notes: 'what have I learned about X'."
              + UNTRUSTED,
              read_only=True, idempotent=True),
        _tool(exchange.export_corpus,
              "Export a persona's corpus as BibTeX, RIS, CSL-JSON (for Zotero and other reference "
              "managers), Markdown or JSON lines: title, authors, year, URL, arXiv id, DOI, "
              "abstract, and the persona's highlights and notes, under keys stable across "
              "exports. Bounded by max_chars; has_more/next_since page through the rest, and "
              "since=<revision of an earlier export> returns only what is new." + UNTRUSTED,
              read_only=True, idempotent=True),
        _tool(exchange.save_item,
              "Save a paper or page that no feed brought, by arXiv id, DOI or URL: fetches its "
              "metadata once (arXiv's API, the DOI's citation record, or the page's title and "
              "description), stores and embeds it, and puts it in the persona's saved facet. An "
              "item already stored (same arXiv id in any version) is only marked saved. Only "
              "public addresses are fetched.",
              idempotent=True, open_world=True),
    ]


@hookimpl
def hermes_register_routes(app):
    routes.register(app)


@hookimpl
def hermes_register_commands(app):
    register_commands(app)
