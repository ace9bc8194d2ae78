"""The feeds tool group: the ranked feed, explanations and subscriptions (``record_feedback``,
in the same group, is served by the core's click plugin, :mod:`hermes.builtins.clicks`).

Tools are registered here (the functions live in :mod:`hermes_feeds.tools`); the CLI's
``hermes feeds …`` and ``hermes feed USER`` come from :mod:`hermes_feeds.cli`. Each hook
imports what it uses: registering the plugin loads none of its modules.
"""

from hermes.hookspecs import hookimpl

from . import prompts

#: The commands :func:`hermes_register_commands` adds (:mod:`.cli`), each with the first
#: paragraph of its help: ``hermes --help`` reads them from this file without importing the
#: plugin (:func:`hermes.plugins.declared_commands`; tests/test_cli_start_declared.py holds them to
#: what the hook adds).
COMMANDS = {
    "feed": "Print USER's ranked feed: the items that clear its bar, each with the reason it ranks "
    "(--below-bar: the others too, under a fold; -i: triage it with keys).",
    "like": "Like items for USER: teaches the ranking (click source ui).",
    "dislike": "Dislike items for USER: teaches the ranking (click source ui).",
    "unrate": "Take back USER's like or dislike on items: they return to the unread feed and stop "
    "teaching the ranking (the `remove_feedback` tool MCP calls; what the web's undo and "
    "`u` in `hermes feed -i` do).",
    "explain": "Why ITEM ranks where it does for USER: the feed line's reason, its rank in that "
    "window, the evidence (closest interest, nearest liked item, classifier, rated tags "
    "and authors) and each ranking component's contribution.",
}
COMMAND_GROUPS = {"feeds": "Manage feed subscriptions (add, list, rename, folder, remove, preview, OPML)."}


@hookimpl
def hermes_register_tools():
    # Here, not at the top: the tools (their pydantic models, the ranking) load when tools are collected.
    from . import tools as t

    return [
        t.list_feed,
        t.explain_item,
        t.add_feed,
        t.preview_feed,
        t.list_feeds,
        t.rename_feed,
        t.remove_feed,
        t.suggest_feeds,
    ]


@hookimpl
def hermes_register_prompts():
    return [prompts.TRIAGE]


@hookimpl
def hermes_register_commands(app):
    # Here, not at the top: the commands (and the tools they call) load when one is looked up.
    from .cli import register

    register(app)
