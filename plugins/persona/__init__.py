"""The persona tool group: personas (create, update, rename, delete), what they learned
(``profile_status``), search over the whole archive in a persona's order, a bootstrap
that warms a new persona from its interests text, and an import that teaches it from the
person's own library (BibTeX, RIS, CSL-JSON). Also ``hermes persona …`` on the CLI.

The tools and the commands are imported by the hooks that register them: registering the
plugin loads its ranking component only."""

from hermes.hookspecs import hookimpl

from .library_scorer import hermes_score  # noqa: F401 - the library's ranking component

#: The command group :func:`hermes_register_commands` adds (:mod:`.cli`), with the first
#: paragraph of its help: ``hermes --help`` reads it from this file without importing the
#: plugin (:func:`hermes.plugins.declared_commands`; tests/test_cli_start_declared.py holds it to
#: what the hook adds).
COMMAND_GROUPS = {
    "persona": "Personas: create, list, show, update, rename, delete, reset, bootstrap, import, search, tags."
}


@hookimpl
def hermes_register_tools():
    # Here, not at the top: the tools (their pydantic models) load when tools are collected.
    from . import tools as t

    return [
        t.list_users,
        t.create_persona,
        t.propose_interests,
        t.update_persona,
        t.rename_persona,
        t.profile_status,
        t.search_feed,
        t.delete_persona,
        t.reset_feedback,
        t.bootstrap_persona,
        t.import_library,
    ]


@hookimpl
def hermes_register_commands(app):
    # Here, not at the top: the commands (and the tools they call) load when one is looked up.
    from .cli import register

    register(app)
