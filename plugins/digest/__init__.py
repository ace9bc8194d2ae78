"""The digest tool group: topic communities of the tag graph and the weekly digest.

The tools and the commands' rendering are imported by the hooks that use them: registering
the plugin loads neither."""

from __future__ import annotations

from hermes.hookspecs import hookimpl

from . import prompts

#: The commands :func:`hermes_register_commands` adds, each with the first paragraph of its
#: help: ``hermes --help`` reads them from this file without importing the plugin
#: (:func:`hermes.plugins.declared_commands`; tests/test_cli_start_declared.py holds them to what the
#: hook adds).
COMMANDS = {
    "digest": "The persona's ranked unread items of the window that clear its bar, grouped by topic, with reasons.",
    "topics": "The topic communities of the tag graph (labels, sizes, top tags).",
}


@hookimpl
def hermes_register_tools():
    # Here, not at the top: the tools (their models, the topics, the ranking) load when tools are collected.
    from . import tools

    return [tools.kg_communities, tools.digest]


@hookimpl
def hermes_register_prompts():
    return [prompts.WORTH_READING]


@hookimpl
def hermes_register_commands(app) -> None:
    # Here, not at the top: the commands (the tools whose limits they take, the rendering)
    # load when one is looked up.
    from .cli import register

    register(app)
