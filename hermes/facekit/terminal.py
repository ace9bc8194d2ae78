"""What every CLI command shares, hermes' own (``hermes.cli``) and plugins': the ``--db`` / ``--json`` options, opening (or starting) the
database, calling a tool as a person at the terminal, printing JSON, the status line, and
turning a user mistake into one ``error:`` line with exit status 1. It imports no face, so
a plugin's commands import it rather than the CLI (docs/architecture.md, "Layers")."""

from __future__ import annotations

import contextvars
import difflib
import functools
import json
import os
import re
import shutil
import sys
import textwrap
import threading
import time
import unicodedata
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

try:  # typer ≥ 0.20 carries its own copy of click
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import get_current_context

from hermes.facekit.faces import plural, typed
from hermes.text.clip import clip
from hermes.text.latex import readable

from .. import config
from ..errors import HermesError

# The database, the tools and the answers' envelope (sqlite-utils, the plugins, pydantic)
# are imported in the functions that use them, not at the top: every command's options come
# from here, and `hermes --version` and `--help` start without them (issue 36).

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="PATH",
        help="Database file; also accepted before the command (`hermes --db PATH …`). "
        "Default: $HERMES_DB, else <HERMES_HOME>/hermes.db.",
    ),
]
#: Whether the running command was given ``--json`` (set by the option's callback): then
#: even a refusal prints one JSON document on stdout.
JSON_REQUESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_json", default=False)


def _remember_json(value: bool) -> bool:
    if value:
        JSON_REQUESTED.set(True)
    return value


JsonOption = Annotated[bool, typer.Option("--json", callback=_remember_json, help="Print one JSON document on stdout.")]


def tool_number(text):
    """The value of a number option that a tool checks (``parser=tool_number``, no ``min`` /
    ``max`` of the option's own): ``"12"`` is 12, anything else goes on as typed, so the
    tool's own model refuses it in its words, named as the command spells it (``--limit must
    be a whole number from 1 to 100, got "abc".``). The bounds live in the tool alone."""
    try:
        return int(text)
    except (TypeError, ValueError):
        return text


def checked_options(command: str, **options: tuple[object, type, dict]) -> dict:
    """Options no tool takes (``--port``, ``--batch``), checked the way a tool's arguments are
    (issue 36: one way to validate): ``name=(value, type, bounds)`` makes a strict pydantic
    model (``bounds`` are ``Field``'s: ``{"ge": 1, "le": 65535}``), validated by
    :func:`hermes.arguments.validate` and refused in the CLI's words (:func:`cli_words`:
    ``--port must be a whole number from 1 to 65535, got 0.``), under ``--json`` as a tool's
    refusal is, ``{"ok": false, "message", "errors": [{"field", "problem"}]}``; exit 1. The
    option takes its text with ``parser=tool_number``, so a value that is no number is the
    model's to refuse too. Returns ``{name: value}`` checked."""
    # Here, not at the top: pydantic loads when a command checks its options, not for --help.
    from pydantic import ConfigDict, Field, create_model

    # Here, not at the top: the arguments' checks and the refusal's envelope load with pydantic.
    from .. import arguments as tool_arguments
    from ..contract import failure

    values = {name: value for name, (value, _, _) in options.items()}
    fields = {name: (Annotated[kind, Field(**bounds)], ...) for name, (_, kind, bounds) in options.items()}
    model = create_model(f"{command}_options", __config__=ConfigDict(strict=True, extra="forbid"), **fields)
    with tool_arguments.worded(cli_words(values)):
        try:
            return tool_arguments.validate(command, model, values)
        except tool_arguments.InvalidArguments as exc:
            refusal = failure(exc, {})
    if _json_requested():
        emit_json(refusal)
    typer.echo(f"error: {lower_first(refusal['message'])}", err=True)
    raise typer.Exit(1)


#: ``hermes --db PATH COMMAND``: the root option, used when the command has no --db of its own.
ROOT_DB: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_root_db", default=None)
#: the ``--db`` of the command running (:func:`database` sets it for its block): every hint
#: a tool's message names keeps it (:func:`run_tool`, :func:`keeping_db`)
COMMAND_DB: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_command_db", default=None)

#: The commands that may start a new database (the others refuse a path that does not exist).
STARTERS = (
    "`hermes ingest`, `hermes feeds add URL`, `hermes feeds import-opml FILE` or "
    "`hermes persona create NAME --interests TEXT`"
)


DEFAULT_ORIGIN = "the default location, <HERMES_HOME>/hermes.db"


def database_path(path: str | None) -> tuple[Path, str]:
    """The database file a command uses, and where that choice came from (for messages)."""
    chosen = path or ROOT_DB.get()
    if chosen:
        return config.db_path(chosen), "--db"
    if os.environ.get("HERMES_DB"):
        return config.db_path(), "HERMES_DB"
    return config.db_path(), DEFAULT_ORIGIN


def hermes_command(words: str, db: str | None = None) -> str:
    """``hermes WORDS`` as the person types it next, naming the database they gave (the
    command's ``--db``, else the root's, ``hermes --db PATH …``): a hint shown on the demo's
    database sends them back to it, not to hermes.db. ``$HERMES_DB`` needs no naming."""
    chosen = db or COMMAND_DB.get() or ROOT_DB.get()
    return "hermes" + (f" --db {typed(str(chosen))}" if chosen else "") + (f" {words}" if words else "")


def keeping_db(message: str, db: str | None = None) -> str:
    """A tool's ``message`` for the terminal, every command it names in backticks
    (`` `hermes ingest` ``) written by :func:`hermes_command`: a tool's advice cannot know
    the ``--db`` the person gave; the command printing it does."""
    if not message or not (db or COMMAND_DB.get() or ROOT_DB.get()):
        return message
    prefix = hermes_command("", db)
    return re.sub(r"`hermes (?!--db )", lambda _: f"`{prefix} ", message)


def open_db(path: str | None, *, create: bool = False):
    """Open the hermes database; a missing file is an error unless ``create`` (the command
    is one meant to start a database). A database this starts gets the starter feeds, and
    stderr says so."""
    db, started = _open(path, create)
    if started:
        announce_started(*started, path)
    return db


def _open(path: str | None, create: bool, starters: bool = True):
    """``(database, None)``, or ``(database, (file, created, starter feed ids, feeds.toml))``
    when this call created the file or gave it the starter feeds (``starters=False``: a
    command bringing its own feeds starts the database without them)."""
    target, origin = database_path(path)
    exists = target.exists() or target.is_symlink()
    if not exists and not create:
        demo = config.home() / "demo.db"
        raise HermesError(
            f"no hermes database at {target} (from {origin}); nothing was created. Check the "
            f"path for a typo, or start a database with {STARTERS}."
            + (
                f" The demo's database is {demo}: add --db {demo} to use it."
                if demo.exists() and demo != target
                else ""
            )
        )
    if not create:
        # Here, not at the top: sqlite-utils loads only when a command opens a database.
        from ..storage.db import get_db

        return get_db(target), None
    if not exists and origin != DEFAULT_ORIGIN and not target.parent.is_dir():
        raise HermesError(
            f"cannot start a database at {target}: the folder {target.parent} does not exist "
            f"(a typo in {origin}?). Create the folder first if you meant it."
        )
    # Here, not at the top: the ingest modules load httpx, needed only to start a database.
    from ..ingest.feedlist import start_database

    db, created, seeded, source = start_database(target, starters=starters)
    return db, ((target, created, seeded, source) if created or seeded else None)


def announce_started(target: Path, created: bool, seeded: list[int], source: Path, given: str | None = None) -> None:
    """Say on stderr that a database was created and given the starter feeds (the commands
    named keep the ``given`` --db)."""
    if created:
        typer.echo(f"created a new hermes database at {target}", err=True)
    if seeded:
        typer.echo(
            keeping_db(
                f"subscribed to {plural(len(seeded), 'starter feed')} from {source} "
                "(`hermes feeds list` shows them; `hermes feeds remove ID --yes` drops one)",
                given,
            ),
            err=True,
        )


@contextmanager
def database(path: str | None, *, create: bool = False, starters: bool = True):
    """``with database(db) as conn:`` — opened (a mistake becomes an ``error:`` line) and
    closed afterwards. A database this block starts is announced when the block succeeds
    and removed again when it fails (a mistyped ``hermes persona create`` leaves nothing)."""
    db, started = run_guarded(_open, path, create, starters)
    created, ok = bool(started and started[1]), False
    chosen = COMMAND_DB.set(path)
    try:
        yield db
        ok = True
    except typer.Exit as exc:
        ok = not exc.exit_code
        raise
    finally:
        db.conn.close()
        if started and (ok or not created):  # starter feeds given to an existing file stay
            announce_started(*started, path)
        elif created:
            target = started[0]
            for leftover in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
                leftover.unlink(missing_ok=True)
        COMMAND_DB.reset(chosen)


def run_tool(db, name: str, /, **arguments) -> dict:
    """Call tool ``name`` as a person at the terminal: the same function MCP calls (one write
    path), worded for the CLI, signals recorded with source ``ui``; a refused argument is
    named as the running command spells it (:func:`cli_words`)."""
    # Here, not at the top: pydantic and the plugins' tools load only when a command calls one.
    from .. import arguments as tool_arguments
    from ..tools import call_tool, find_tool

    tool = find_tool(name)
    if tool is None:
        raise HermesError(
            f"the {name} tool is not available: the plugin that provides it is disabled (see `hermes plugins`)"
        )
    with tool_arguments.worded(cli_words(arguments)):
        result = call_tool(db, tool, arguments, face="cli")
    if isinstance(result.get("message"), str):
        # the commands its advice names keep the --db given (`hermes ingest` on the demo's)
        result["message"] = keeping_db(result["message"])
    return result


def cli_words(arguments: dict | None = None):
    """The CLI's words for a refusal (:class:`hermes.arguments.Wording`): each tool parameter
    as the running command spells it (:func:`cli_names`), values as typed at a shell (no
    JSON ``null``: an option left out is its default)."""
    # Here, not at the top: pydantic loads only when a command words a refusal.
    from ..arguments import Wording

    ctx = get_current_context(silent=True)
    names = {p.name: _spelling(p) for p in ctx.command.params} if ctx is not None else {}
    names.update(cli_names(arguments or {}))
    return Wording(names, typed="shell")


def cli_names(arguments: dict) -> dict[str, str]:
    """How the running command spells the tool's parameters: ``--facet`` for an option, the
    metavar (``TEXT``) for an argument. A tool parameter is the command's parameter of the
    same name, else the one parameter the person gave that very value (``item_id`` is
    ``ITEM``); one that matches neither keeps the tool's name."""
    ctx = get_current_context(silent=True)
    if ctx is None:
        return {}
    params = {p.name: p for p in ctx.command.params}
    spelled = {}
    for name, value in arguments.items():
        param = params.get(name) or _given(ctx, [p for n, p in params.items() if n not in arguments], value, name)
        if param is not None:
            spelled[name] = _spelling(param)
    return spelled


def cli_message(exc: HermesError) -> str:
    """A mistake's message for the ``error:`` line: a refused parameter (a library's, raised
    outside a tool call: ``hermes corpus export --since 99``) written in the command's words
    from the problems it carries, any other message as written."""
    if hasattr(exc, "problems") and hasattr(exc, "worded"):  # hermes.arguments.InvalidArguments
        return exc.worded(cli_words())
    return str(exc)


def _given(ctx, params: list, value, name: str):
    """The parameter of ``params`` whose value (or one of whose values) is ``value``; of
    several, the one named most like tool parameter ``name`` (``--likes 9 --dislikes 9``:
    ``n_like`` is ``--likes``, ``n_dislike`` ``--dislikes``)."""
    if value is None or isinstance(value, bool):
        return None

    def holds(given) -> bool:
        if isinstance(given, (list, tuple)):
            return any(type(v) is type(value) and v == value for v in given)
        return type(given) is type(value) and given == value

    found = [p for p in params if holds(ctx.params.get(p.name))]
    if len(found) > 1:
        alike = sorted(
            ((difflib.SequenceMatcher(None, name, p.name).ratio(), p.name, p) for p in found),
            key=lambda t: t[:2],
            reverse=True,
        )
        return alike[0][2] if alike[0][0] > alike[1][0] else None
    return found[0] if found else None


def _spelling(param) -> str:
    if getattr(param, "param_type_name", "") == "option":
        return max(param.opts, key=len)
    return (param.metavar or param.name.upper()).strip("[]").removesuffix("...")


def emit_json(payload) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")


def die(message: str, code: int = 1):
    """Print one line on stderr and exit non-zero (no traceback for user mistakes). Under
    ``--json`` stdout still gets one document, ``{"ok": false, "message": …}``."""
    if _json_requested():
        # Here, not at the top: pydantic (the contract's) loads only when a command answers --json.
        from ..contract import fail

        emit_json(fail(message))
    typer.echo(f"error: {lower_first(message)}", err=True)
    raise typer.Exit(code)


def _json_requested() -> bool:
    return JSON_REQUESTED.get()


def lower_first(message: str) -> str:
    """``Nothing removed …`` → ``nothing removed …`` after ``error:``; acronyms, paths and
    quoted names stay as they are."""
    if len(message) > 1 and message[0].isupper() and message[1].islower():
        return message[0].lower() + message[1:]
    return message


def check(result: dict, as_json: bool) -> dict:
    """Print a tool result as JSON (``--json``), or exit with its message as an ``error:``
    line when it failed. An empty answer (``"nothing_to_show": true``) is not a
    failure: every command exits 0 on it."""
    failed = not result.get("ok", True) and not result.get("nothing_to_show")
    if as_json:
        emit_json(result)
        if failed:
            raise typer.Exit(1)
    elif failed:
        die(result.get("message") or "failed")
    return result


def run_guarded(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except HermesError as exc:
        die(cli_message(exc))


def guarded(command):
    """A command whose :class:`HermesError` becomes one ``error:`` line and exit status 1
    (:func:`run_guarded` around every call)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        return run_guarded(command, *args, **kwargs)

    return wrapper


def style(text: str, **kw) -> str:
    """Colour and weight only on a terminal."""
    return typer.style(text, **kw) if sys.stdout.isatty() else text


class StatusLine:
    """Shows :func:`hermes.facekit.status.step` messages that last longer than :attr:`DELAY`: a
    spinner on stderr when it is a terminal, else a ``hermes: …`` line when the step starts
    and one with its duration when it ends (a log or a cron mail says where the time went)."""

    DELAY = 0.4  # a step faster than this shows nothing

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.stack: list[str] = []
        self.revealed = 0  # how many of the stack's steps have been shown
        self.spinner = None
        self.timer = None
        self.lock = threading.RLock()

    @contextmanager
    def __call__(self, message: str):
        started = time.monotonic()
        with self.lock:
            self.stack.append(message)
            if len(self.stack) == 1:
                self.timer = threading.Timer(self.DELAY, self._reveal)
                self.timer.daemon = True
                self.timer.start()
            elif self.revealed:
                self._reveal()
        try:
            yield
        finally:
            with self.lock:
                shown = len(self.stack) <= self.revealed
                self.stack.pop()
                self.revealed = min(self.revealed, len(self.stack))
                if not self.stack and self.timer is not None:
                    self.timer.cancel()
                if shown and not self.live:
                    self._line(f"… {message.split(' (')[0]}: {time.monotonic() - started:.1f} s")
                elif self.spinner is not None:
                    if self.stack:
                        self.spinner.update(self.stack[-1])
                    else:
                        self.spinner.stop()
                        self.spinner = None

    def _reveal(self) -> None:
        with self.lock:
            for message in self.stack[self.revealed :]:
                self._show(message)
            self.revealed = len(self.stack)

    def _line(self, text: str) -> None:
        self.stream.write(f"hermes: {text}\n")
        self.stream.flush()

    def _show(self, message: str) -> None:
        if not self.live:
            self._line(f"{message} …")
        elif self.spinner is not None:
            self.spinner.update(message)
        else:
            from rich.console import Console
            from rich.errors import LiveError

            spinner = Console(file=self.stream).status(message)
            try:
                spinner.start()
            except LiveError:  # a progress bar is live (ingest): it says what is happening
                return
            self.spinner = spinner


def clean(text, width: int | None = None) -> str:
    """Feed text made safe for a terminal: LaTeX as readable Unicode (:mod:`hermes.text.latex`;
    ``--json`` keeps it as stored), control characters (escape sequences included) dropped,
    whitespace collapsed, cut to ``width``."""
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in readable(str(text or "")))
    text = " ".join(text.split())
    return clip(text, width) if width else text


def wrapped(text, indent: str, label: str = "") -> list[str]:
    """``text`` cleaned (:func:`clean`) and wrapped whole to the terminal's width, every line
    at ``indent``, the first opening with ``label`` (``why: ``): a reason is evidence, so
    nothing of it is cut."""
    width = max(shutil.get_terminal_size().columns, len(indent) + len(label) + 20)
    return textwrap.wrap(
        clean(text),
        width,
        initial_indent=indent + label,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent + label.rstrip()]


def run_each(db_path: str | None, tool: str, item_ids: list, as_json: bool, **arguments) -> list[dict]:
    """The person's verbs on several items (``hermes like ada 3 5 8``): one tool call per
    item through :func:`run_tool`, each result's message printed (a refusal as an
    ``error:`` line), or one JSON document ``{ok, message, results}`` (each result with the
    ``item_id`` it was asked about, also when refused). Exit 1 if any failed; the others are
    still applied."""
    with database(db_path) as db:
        results = [{**run_tool(db, tool, item_id=item_id, **arguments), "item_id": item_id} for item_id in item_ids]
    failed = [r for r in results if not r.get("ok")]
    if as_json:
        # Here, not at the top: pydantic (the contract's) loads only when a command answers --json.
        from ..contract import fail, ok

        emit_json(
            (fail if failed else ok)(
                f"{len(results) - len(failed)} of {plural(len(results), 'item')} done", results=results
            )
        )
    else:
        for result in results:
            if result.get("ok"):
                typer.echo(result["message"])
            else:
                typer.echo(f"error: {lower_first(result['message'])}", err=True)
    if failed:
        raise typer.Exit(1)
    return results
