"""The persona tool group: personas (create, update, rename, delete), what they learned
(``profile_status``), search over the whole archive in a persona's order, a bootstrap
that warms a new persona from its interests text, and an import that teaches it from the
person's own library (BibTeX, RIS, CSL-JSON). Also ``hermes persona …`` on the CLI."""

from hermes.hookspecs import hookimpl

from . import tools as t
from .cli import persona_app
from .library_scorer import hermes_score  # noqa: F401 - the library's ranking component


@hookimpl
def hermes_register_tools():
    return [t.list_users, t.create_persona, t.propose_interests, t.update_persona, t.rename_persona,
            t.profile_status, t.search_feed, t.delete_persona, t.reset_feedback,
            t.bootstrap_persona, t.import_library]


@hookimpl
def hermes_register_commands(app):
    app.add_typer(persona_app(), name="persona")
