"""The corpus plugin: reading signals, faceted membership, revision log, strength, recall.

Hook implementations only; the work lives in :mod:`.signals` (writes), :mod:`.membership`
(facets, revision counter, change log), :mod:`.strength`, :mod:`.entities` (entity view,
recall), :mod:`.tools` (the MCP tools) and :mod:`.routes` (the JSON API). Items leave and
enter through :mod:`.references` (one record per item), :mod:`.export` (BibTeX, RIS,
CSL-JSON, Markdown, JSONL), :mod:`.sync` (a Markdown vault), :mod:`.save` with
:mod:`.metadata` (items no feed brought) and their tools in :mod:`.exchange`.
"""

from __future__ import annotations

import numpy as np

from hermes.hookspecs import hookimpl

from . import exchange, membership, schema, tools
from .cli import register as register_commands
from .signals import KINDS


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
        return None
    return membership.sync_item(db, signal.user_id, signal.item_id, at=signal.at)


@hookimpl
def hermes_candidates(db, user, query, matrix):
    # The read state lives here, so this plugin answers ``exclude_read``: items the persona
    # has experienced (read past the threshold, highlighted or noted) leave the candidates.
    if not getattr(query, "exclude_read", False):
        return None
    read = membership.facet_item_ids(db, user["id"], "experienced")
    return ~np.isin(matrix.ids, np.fromiter(read, dtype=np.int64)) if read else None


@hookimpl
def hermes_register_tools():
    t = tools
    return [t.record_progress, t.add_highlight, t.delete_highlight, t.add_note, t.delete_note,
            t.favorite, t.mark_read, t.mark_unread, t.corpus, t.corpus_items, t.corpus_changes,
            t.corpus_ranked, t.corpus_entities, t.recall, exchange.export_corpus,
            exchange.save_item]


@hookimpl
def hermes_register_routes(app):
    # Here, not at the top: the JSON API needs starlette, which loads only for the web app
    # (a CLI or MCP process never imports it).
    from . import routes

    routes.register(app)


@hookimpl
def hermes_register_commands(app):
    register_commands(app)
