"""One way per thing (issue 35): the small repeats stay gone.

Stored timestamps are read by :func:`hermes.clock.read_stamp`, counted nouns by
:func:`hermes.facekit.faces.plural`, envelopes built by :func:`hermes.contract.ok` / ``fail``, the
LaTeX font switches and command pattern live in :mod:`hermes.text.latex`, and the stop-word lists
in :mod:`hermes.text.language`. The source checks parse the code (nothing is imported).
"""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hermes.clock import now_iso, read_stamp

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "hermes").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")])


def _trees():
    for path in SOURCES:
        yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_a_stored_timestamp_is_read_back_as_written():
    written = now_iso()
    when = read_stamp(written)
    assert when.tzinfo is not None and when.isoformat(timespec="seconds") == written
    assert read_stamp("2026-11-30T10:00:00Z") == datetime(2026, 11, 30, 10, tzinfo=UTC)
    # no zone: read as UTC (what hermes writes is UTC)
    assert read_stamp("2026-11-30T10:00:00") == datetime(2026, 11, 30, 10, tzinfo=UTC)
    assert read_stamp("2026-11-30T12:00:00+02:00").utcoffset() == timedelta(hours=2)
    for nothing in (None, "", "soon", "2026-13-01"):
        assert read_stamp(nothing) is None


def test_the_faces_read_timestamps_through_the_one_parser():
    from hermes.ingest.schedule import next_due
    from hermes.web.render import fmt_ago, fmt_date, fmt_until

    assert fmt_date("2026-11-30T23:30:00+00:00") == "2026-11-30"
    assert fmt_date("not a date at all") == "not a date"  # shown as given, cut to a day's width
    assert fmt_ago("garbage") == "" and fmt_until(None) == ""
    past = (datetime.now(UTC) - timedelta(hours=3)).isoformat(timespec="seconds")
    assert fmt_ago(past.replace("+00:00", "Z")) == "3h ago"
    due = next_due({"last_fetched": "2026-11-30T10:00:00", "retry_after": None, "ttl": 0}, 3600)
    assert due == datetime(2026, 11, 30, 11, tzinfo=UTC)


def test_timestamps_are_parsed_in_one_place():
    """Nowhere else turns a stored ``…Z`` into ``+00:00`` for :meth:`datetime.fromisoformat`
    (five modules did, each its own way)."""
    found = [
        path
        for path, tree in _trees()
        if path != "hermes/clock.py"
        and any(isinstance(n, ast.Constant) and n.value == "+00:00" for n in ast.walk(tree))
    ]
    assert not found, found


def test_envelopes_come_from_the_contract():
    """A dict literal with ``ok`` and ``message`` keys is built only by hermes.contract."""
    found = []
    for path, tree in _trees():
        if path == "hermes/contract.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                if {"ok", "message"} <= keys:
                    found.append(f"{path}:{node.lineno}")
    assert not found, found


def test_one_plural():
    """Counted nouns go through hermes.facekit.faces.plural: no module defines its own helper (two
    tools files did) or spells ``'' if n == 1 else 's'`` inline."""
    found = []
    for path, tree in _trees():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.IfExp)
                and isinstance(node.body, ast.Constant)
                and isinstance(node.orelse, ast.Constant)
                and {node.body.value, node.orelse.value} == {"", "s"}
            ):
                found.append(f"{path}:{node.lineno}")
    assert not found, found


def test_one_stop_word_home():
    """Stop-word lists are defined in hermes.text.language only (lexical, feeds' suggestions and
    the tagger each had their own)."""
    found = []
    for path, tree in _trees():
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else ([node.target] if isinstance(node, ast.AnnAssign) else [])
            )
            for target in targets:
                if (
                    isinstance(target, ast.Name)
                    and "STOP" in target.id.upper()
                    and path != "hermes/text/language.py"
                    and isinstance(node.value, ast.Call)
                ):
                    found.append(f"{path}:{node.lineno} {target.id}")
    assert not found, found


def test_the_latex_tables_are_latexs():
    """The BibTeX export passes on exactly hermes.text.latex's text font switches; the reader also
    knows math's ``{\\cal O}``, which the export escapes in text (LaTeX typesets \\cal only in
    math mode)."""
    from hermes_corpus import bibtex, sync

    from hermes.text import latex

    assert set(bibtex._SWITCHES) == latex.FONT_SWITCHES
    assert {"cal"} | latex.FONT_SWITCHES == latex._SWITCHES
    assert bibtex.COMMAND is latex.COMMAND is sync.COMMAND
    assert bibtex.bib_tex(r"A {\em Mixture}") == r"A {\em Mixture}"
    assert r"{\cal" not in bibtex.bib_tex(r"A {\cal O} bound")
    assert latex.readable(r"$\mathcal{O}(n^2)$ attention") == "𝒪(n²) attention"


def test_the_web_face_has_no_sql_of_its_own():
    """The web face reads the database through hermes.storage.records and hermes.storage (it ran 15
    statements of its own)."""
    found = [
        f"{path}:{node.lineno}"
        for path, tree in _trees()
        if path.startswith("hermes/web/")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("execute", "executemany", "executescript")
    ]
    assert not found, found


# --- validating input: the tool's model is the one source (issue 35) ----------------------


#: number options whose value goes to no tool, so the command checks it itself:
#: (module, function, parameter)
def _bounded_options():
    """``(module, function, parameter)`` of every typer option or argument given ``min`` /
    ``max`` of its own."""
    for path, tree in _trees():
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for arg in fn.args.args + fn.args.kwonlyargs:
                for call in ast.walk(arg.annotation) if arg.annotation else ():
                    if (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr in ("Option", "Argument")
                        and {k.arg for k in call.keywords} & {"min", "max"}
                    ):
                        yield path, fn.name, arg.arg


def test_no_number_option_has_bounds_of_its_own():
    """No CLI option has typer's ``min`` / ``max`` (issue 35: one way to validate): a tool's
    option is checked by the tool's model, an option no tool takes (``--port``, ``--batch``,
    ``feeds preview --limit``, ``corpus export --since``) by a model of its own
    (:func:`hermes.facekit.terminal.checked_options`); either refusal is worded by the CLI.
    (The options copied 22 bounds of the tools' models, reworded by a ``_range_message``.)"""
    assert not sorted(_bounded_options())


def test_a_tools_refusal_of_a_bad_number_is_in_the_commands_words(db, db_path):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app
    from hermes.storage.records import create_user

    create_user(db, "ann", "anything")
    for args, said in (
        (["feed", "ann", "--limit", "abc"], 'error: --limit must be a whole number from 1 to 100, got "abc".'),
        (["digest", "ann", "--days", "0"], "error: --days must be a whole number from 1 to 36500, got 0."),
    ):
        result = CliRunner().invoke(build_app(), [*args, "--db", str(db_path)])
        assert result.exit_code == 1 and result.stderr.strip() == said, result.output


# --- an explanation: built in ranking.explain, worded in ranking.explain_words -------------


def test_an_explanation_is_worded_in_one_module():
    """:mod:`hermes.ranking.explain` builds the payload and :mod:`hermes.ranking.explain_words`
    words it (they were one file of both): the prose is defined there only, and nothing
    takes it from ``explain``."""
    words_tree = ast.parse((ROOT / "hermes/ranking/explain_words.py").read_text(encoding="utf-8"))
    prose = {n.name for n in words_tree.body if isinstance(n, ast.FunctionDef)}
    assert {"reason_line", "rank_line", "weight_note", "phrases_of", "note_of"} <= prose
    found = []
    for path, tree in _trees():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef)
                and node.name in prose
                and path != "hermes/ranking/explain_words.py"
                and node in tree.body
            ):
                found.append(f"{path}: defines {node.name}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "explain":
                found += [f"{path}: {a.name} from explain" for a in node.names if a.name in prose]
    assert not found, found


def test_the_feeds_commands_are_a_module_per_concept():
    """plugins/feeds/cli.py held two command groups and a renderer: now ``cli`` only
    registers, ``subscriptions_cli`` is ``hermes feeds …``, ``reading_cli`` is ``hermes feed``
    and the verbs, ``feed_lines`` draws (and defines no command)."""

    def defined(name: str) -> set[str]:
        tree = ast.parse((ROOT / "plugins/feeds" / name).read_text(encoding="utf-8"))
        return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}

    assert defined("cli.py") == {"register"}
    assert {"add", "preview", "import_opml", "export_opml"} <= defined("subscriptions_cli.py")
    assert {"feed", "like", "explain"} <= defined("reading_cli.py")
    assert "explanation_lines" in defined("feed_lines.py")
    for name in ("reading_cli.py", "subscriptions_cli.py"):
        assert not {"item_lines", "explanation_lines"} & defined(name), name
    assert "typer" not in (ROOT / "plugins/feeds/feed_lines.py").read_text(encoding="utf-8")


# --- config: one typed read of config.toml per process -------------------------------------


def test_config_toml_is_read_in_one_place():
    """Only hermes.config parses TOML (the feed candidates, feeds.toml and config.toml
    through its ``load_toml``), and nothing reads config.toml's tables raw: the second read
    in the matrix storage setting, the ``.extra`` sections and the raw tomllib read of the
    feed suggestions are gone; a plugin's section is read by ``settings().section``."""
    found = []
    for path, tree in _trees():
        if path == "hermes/config.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if "tomllib" in names:
                    found.append(f"{path}:{node.lineno} imports tomllib")
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("extra", "tables")
                and isinstance(node.value, ast.Call)
                and "settings" in ast.dump(node.value.func)
            ):
                found.append(f"{path}:{node.lineno} settings().{node.attr}")
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) == "load_toml"
                and any("config_toml" in ast.dump(a) for a in node.args)
            ):
                found.append(f"{path}:{node.lineno} reads config.toml itself")
    assert not found, found
    from hermes import config

    assert not hasattr(config, "matrix_storage") and not hasattr(config.Settings(), "extra")


def test_a_plugins_config_section_is_declared_and_checked_by_its_model():
    from hermes_corpus.settings import CorpusSettings

    from hermes.plugins import get_plugin_manager

    declared = [n for names in get_plugin_manager().hook.hermes_config_sections() for n in names]
    assert "corpus" in declared
    assert CorpusSettings.model_config["strict"] and CorpusSettings.model_config["extra"] == "forbid"


def test_the_web_hands_typed_values_to_the_tools():
    """A value a tool takes goes to it as typed (``forms.as_typed`` / the query string): the
    tool's model reads it (``"7"`` is 7 on the web) and refuses it in its words. No web
    module passes a tool a value it first checked with its own bounds (``forms.parse_text``
    / ``parse_int`` / ``parse_days``: the digest's days, per_topic, a highlight, a persona's
    name and interests, a feed's address and title had a second check each)."""
    found = []
    for path, tree in _trees():
        if not path.startswith("hermes/web/"):
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            checked = {
                t.id
                for node in ast.walk(fn)
                if isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", "") in ("parse_text", "parse_int", "parse_days")
                for t in node.targets
                if isinstance(t, ast.Name)
            }
            for call in ast.walk(fn):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr in ("call", "require", "read")
                ):
                    found += [
                        f"{path}:{call.lineno} {k.arg}"
                        for k in call.keywords
                        if isinstance(k.value, ast.Name) and k.value.id in checked
                    ]
    assert not found, found


def test_a_form_value_is_read_by_the_tools_model(db):
    """Typed as text, the strict model reads a whole number and yes / no; what it cannot
    read is refused in its words (named as the page labels it), and outside a form the
    strict model stays strict."""
    import pytest

    from hermes import arguments
    from hermes.tools import collect_tools

    model = collect_tools()["digest"].argument_model
    with arguments.typed_as_text(), arguments.worded(arguments.Wording({"below_bar": "below"}, typed="form")):
        taken = arguments.validate("digest", model, {"user": "ada", "days": "14", "below_bar": "yes"})
        assert (taken["days"], taken["below_bar"]) == (14, True)
        with pytest.raises(arguments.InvalidArguments) as refused:
            arguments.validate("digest", model, {"user": "ada", "below_bar": "maybe"})
        assert str(refused.value) == 'below must be yes or no, got "maybe".'
    with pytest.raises(arguments.InvalidArguments) as strict:
        arguments.validate("digest", model, {"user": "ada", "days": "14"})
    assert str(strict.value).startswith('days must be a whole number from 1 to 36500, got "14"')


def test_the_corpus_routes_read_the_query_through_the_tools_models():
    """The JSON routes hand the query string to the tool as typed (``_int_param`` and the
    missing-user check were a second reading of it): no route turns a query value into a
    number itself."""
    found = []
    for path, tree in _trees():
        if not (path.endswith("routes.py") or path.startswith("hermes/web/")):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "_int_param":
                found.append(f"{path}:{node.lineno} defines _int_param")
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") in ("int", "float")
                and node.args
                and "query_params" in ast.dump(node.args[0])
            ):
                found.append(f"{path}:{node.lineno} reads a number from the query itself")
    assert not found, found


#: the functions behind the tools' strict models, which checked their parameters' types again
_BEHIND_THE_MODELS = {
    "plugins/persona/personas.py": {
        "validate_name",
        "validate_interests",
        "update_interests",
        "rename_persona",
        "plan",
    },
    "plugins/feeds/subscriptions.py": {"check_web_url", "subscribe", "rename", "folder_path"},
    "plugins/corpus/signals.py": {"_text", "record_progress", "favorite", "_delete"},
    "plugins/corpus/references.py": {"check_since"},
    "plugins/corpus/entities.py": {"recall"},
    "plugins/corpus/metadata.py": {"identify"},
}


def test_no_type_check_behind_the_tools_strict_models():
    """A value reaching these functions came through a tool's strict model (or a typed CLI
    option): they do not ask ``isinstance`` of their parameters again (17 re-checks did)."""
    found = []
    for path, names in _BEHIND_THE_MODELS.items():
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name in names:
                params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
                found += [
                    f"{path}:{n.lineno} {fn.name}"
                    for n in ast.walk(fn)
                    if isinstance(n, ast.Call)
                    and getattr(n.func, "id", "") == "isinstance"
                    and isinstance(n.args[0], ast.Name)
                    and n.args[0].id in params
                ]
    assert not found, found


def test_two_options_with_the_same_bad_value_are_each_named(db, db_path):
    """The tool's refusal names each option as the command spells it, also when both were
    given the same value (``n_like`` is ``--likes``: the bounds are the tool's alone now)."""
    from typer.testing import CliRunner

    from hermes.cli.app import build_app
    from hermes.storage.records import create_user

    create_user(db, "ann", "anything")
    result = CliRunner().invoke(
        build_app(), ["persona", "bootstrap", "ann", "--likes", "99", "--dislikes", "99", "--db", str(db_path)]
    )
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: --likes must be a whole number from 0 to 50, got 99. "
        "--dislikes must be a whole number from 0 to 50, got 99."
    )


def test_every_plugin_registers_its_commands_one_way():
    """Four styles of plugin CLI registration became one: each plugin's ``cli.py`` defines its
    commands at module level and a ``register(app)`` that adds them; the plugin's
    ``hermes_register_commands`` imports that and calls it."""

    for package in sorted((ROOT / "plugins").iterdir()):
        cli, init = package / "cli.py", package / "__init__.py"
        if not cli.exists():
            continue
        tree = ast.parse(cli.read_text())
        (register,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "register"]
        assert not [n for n in ast.walk(register) if isinstance(n, ast.FunctionDef) and n is not register], (
            f"{cli}: commands defined inside register()"
        )
        hook = next(
            n
            for n in ast.walk(ast.parse(init.read_text()))
            if isinstance(n, ast.FunctionDef) and n.name == "hermes_register_commands"
        )
        calls = [n.func.id for n in ast.walk(hook) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        assert calls == ["register"], f"{init}: hermes_register_commands calls {calls}"
