"""The corpus plugin: reading signals, faceted membership, revision log, strength, recall.

Hook implementations only; the work lives in :mod:`.signals` (writes), :mod:`.membership`
(facets, revision counter, change log), :mod:`.strength`, :mod:`.entities` (entity view,
recall), :mod:`.tools` (the MCP tools) and :mod:`.routes` (the JSON API). Items leave and
enter through :mod:`.references` (one record per item), :mod:`.export` (BibTeX, RIS,
CSL-JSON, Markdown, JSONL), :mod:`.sync` (a Markdown vault), :mod:`.save` with
:mod:`.metadata` (items no feed brought) and their tools in :mod:`.exchange`.

Each hook imports what it uses: registering the plugin (every command does) loads none of
its modules, and a command another plugin serves (``hermes feed``) loads only what it calls.
"""

from __future__ import annotations

from hermes.hookspecs import hookimpl

#: The commands :func:`hermes_register_commands` adds (:mod:`.cli`), each with the first
#: paragraph of its help: ``hermes --help`` reads them from this file without importing the
#: plugin (:func:`hermes.plugins.declared_commands`; tests/test_cli_start_declared.py holds them to
#: what the hook adds).
COMMANDS = {
    "read": "Mark items read by USER: they enter the corpus as experienced.",
    "save": "Save items for later for USER (the saved facet; not marked read).",
    "unsave": "Remove items from USER's saved-for-later list.",
    "note": "Write a note on ITEM for USER: the item enters the corpus as experienced.",
    "highlight": "Keep a passage of ITEM for USER: the item enters the corpus as experienced.",
}
COMMAND_GROUPS = {"corpus": "A persona's corpus: what it read or captured, and what it saved."}


@hookimpl
def hermes_config_sections():
    return ["corpus"]  # read by .settings


@hookimpl
def hermes_migrations():
    # Here, not at the top: the corpus schema loads when a database is opened, not with the plugin.
    from . import schema

    return list(schema.MIGRATIONS)


@hookimpl
def hermes_register_signals():
    # Here, not at the top: the signal writes (sqlite-utils) load when signals are read or written.
    from .signals import KINDS

    return list(KINDS)


@hookimpl
def hermes_signal_written(db, signal):
    # Runs inside the write's BEGIN IMMEDIATE transaction. Clicks and other plugins' kinds
    # do not change corpus membership.
    # Here, not at the top: the membership (sqlite-utils) loads when a signal is written.
    from . import membership
    from .signals import KINDS

    if signal.kind not in KINDS:
        return None
    return membership.sync_item(db, signal.user_id, signal.item_id, at=signal.at)


@hookimpl
def hermes_candidates(db, user, query, matrix):
    # The read state lives here, so this plugin answers ``exclude_read``: items the persona
    # has experienced (read past the threshold, highlighted or noted) leave the candidates.
    if not getattr(query, "exclude_read", False):
        return None
    # Here, not at the top: numpy and the membership load when a ranking asks to leave read items out.
    import numpy as np

    # (the membership reads the corpus tables)
    from . import membership

    read = membership.facet_item_ids(db, user["id"], "experienced")
    return ~np.isin(matrix.ids, np.fromiter(read, dtype=np.int64)) if read else None


@hookimpl
def hermes_register_tools():
    # Here, not at the top: the tools (their pydantic models) load when tools are collected.
    from . import exchange, tools

    t = tools
    return [
        t.record_progress,
        t.add_highlight,
        t.delete_highlight,
        t.add_note,
        t.delete_note,
        t.favorite,
        t.mark_read,
        t.mark_unread,
        t.corpus,
        t.corpus_items,
        t.corpus_changes,
        t.corpus_ranked,
        t.corpus_entities,
        t.recall,
        exchange.export_corpus,
        exchange.save_item,
    ]


@hookimpl
def hermes_register_routes(app):
    # Here, not at the top: the JSON API needs starlette, which loads only for the web app
    # (a CLI or MCP process never imports it).
    from . import routes

    routes.register(app)


@hookimpl
def hermes_register_commands(app):
    # Here, not at the top: the commands (and the tools they call) load when one is looked up.
    from .cli import register

    register(app)
