"""The feeds tool group: the ranked feed, explanations and subscriptions (``record_feedback``,
in the same group, is served by the core's click plugin, :mod:`hermes.builtins.clicks`).

Tools are registered here (the functions live in :mod:`hermes_feeds.tools`); the CLI's
``hermes feeds …`` and ``hermes feed USER`` come from :mod:`hermes_feeds.cli`.
"""

from hermes.hookspecs import hookimpl

from . import prompts
from . import tools as t
from .cli import register


@hookimpl
def hermes_register_tools():
    return [t.list_feed, t.explain_item, t.add_feed, t.preview_feed,
            t.list_feeds, t.rename_feed, t.remove_feed, t.suggest_feeds]


@hookimpl
def hermes_register_prompts():
    return [prompts.TRIAGE]


@hookimpl
def hermes_register_commands(app):
    register(app)
