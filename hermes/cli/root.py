"""The ``hermes`` root command (typer): its group, the core commands, the plugins' commands
(added via ``hermes_register_commands`` when they are looked up). :mod:`.app` is the entry
point that starts it.

:func:`build_app` makes a fresh app each time (the tests build one per plugin set). Every
invocation runs in the CLI face (:mod:`hermes.facekit.faces`: messages name commands and options,
signals are recorded with source ``ui``), shows slow steps on stderr (:mod:`hermes.facekit.status`),
and reports every mistake — usage errors included — as one ``error:`` line with exit 1. A
command whose reader goes away (``hermes feed ann | head -1``) stops quietly and ends as a
pipe's writer does, killed by SIGPIPE (a shell's status 141), as git and ls do.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import signal
import sys

import typer
from typer.core import TyperCommand, TyperGroup

from hermes import __version__
from hermes.facekit import faces, status

from ..config import settings
from ..errors import HermesError
from ..facekit.terminal import JSON_REQUESTED, ROOT_DB, DbOption, JsonOption, StatusLine, emit_json, lower_first
from . import core


class HermesGroup(TyperGroup):
    """The root command: one error style, the CLI face, the status line, tidy help."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        _polish(self)  # the commands when they are looked up (get_command)
        face = faces.enter("cli")
        root_db, as_json = ROOT_DB.set(None), JSON_REQUESTED.set(False)
        try:
            with status.listen(StatusLine()):
                code = self._run(args, prog_name, complete_var, **extra)
        finally:
            JSON_REQUESTED.reset(as_json)
            ROOT_DB.reset(root_db)
            faces.leave(face)
        if not standalone_mode:
            return code
        sys.exit(code or 0)

    def invoke(self, ctx):
        """The command, then its output flushed; a closed stdout (EPIPE) becomes
        :class:`_StdoutClosed`, which click does not catch (it exits 1 on EPIPE, saying
        nothing)."""
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a pipe that closed after the last write: still a closed pipe
            return result
        except BrokenPipeError:
            raise _StdoutClosed from None

    # The plugins' commands are added on first need, not when the app is built: `hermes
    # --version` and the core commands start without importing a plugin (issue 36). The
    # root's help lists them as the built-in plugins declare them (name and help, read from
    # their files: :func:`hermes.plugins.declared_plugin_commands`), importing no plugin,
    # and a plugin's command registers that plugin's commands only.

    _hermes_listing = False  # while the root's help is drawn (format_help)

    def format_help(self, ctx, formatter):
        self._hermes_listing = True
        try:
            return super().format_help(ctx, formatter)
        finally:
            self._hermes_listing = False

    def list_commands(self, ctx):
        declared = self._declared() if self._hermes_listing else None
        if declared is None:
            self._add_plugin_commands()
            return super().list_commands(ctx)
        core = super().list_commands(ctx)
        plugin = [(name, group) for name, (_, _, group) in declared.items() if name not in self.commands]
        return [
            *(n for n in core if not isinstance(self.commands[n], TyperGroup)),
            *(n for n, group in plugin if not group),
            *(n for n in core if isinstance(self.commands[n], TyperGroup)),
            *(n for n, group in plugin if group),
        ]

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)  # a core command needs no plugin
        if command is None:
            command = self._hermes_partial.get(name) if hasattr(self, "_hermes_partial") else None
        if command is None:
            declared = (self._declared() or {}).get(name)
            if declared is not None and self._hermes_listing:
                command = TyperCommand(name=name, help=declared[1])  # listed, never run
            elif declared is not None:
                command = self._add_commands_of(declared[0]).get(name)
            else:
                self._add_plugin_commands()
                command = super().get_command(ctx, name)
        if command is not None:
            _polish_help(command)
        return command

    def _declared(self) -> dict[str, tuple[str, str, bool]] | None:
        """``{command: (plugin, help, is a group)}`` as the plugins declare them, or ``None``
        once the plugins' commands are added (or when they cannot be known undeclared)."""
        if getattr(self, "_hermes_plugin_commands", None) is not None:
            return None
        if not hasattr(self, "_hermes_declared"):
            # Here, not at the top: the plugin machinery loads only when a command or the
            # help needs the plugins' commands.
            from ..plugins import declared_plugin_commands

            found = declared_plugin_commands()
            self._hermes_declared = (
                None if found is None else {name: (plugin, text, group) for name, plugin, text, group in found}
            )
        return self._hermes_declared

    def _add_commands_of(self, plugin: str) -> dict:
        """The commands of plugin ``plugin`` (registered, the others' not), kept beside the
        core's until every plugin's are added (:meth:`_add_plugin_commands`)."""
        # Here, not at the top: the plugin machinery loads only when a plugin's command runs.
        from ..plugins import registered_plugins

        if not hasattr(self, "_hermes_partial"):
            self._hermes_partial, self._hermes_owner = {}, {}
        pm = registered_plugins()
        impls = pm.hook.hermes_register_commands.get_hookimpls()
        added = _registered_commands(pm, impls, plugin)
        for name, command in added.items():
            self._hermes_partial.setdefault(name, command)
            self._hermes_owner.setdefault(name, plugin)
        return added

    def _add_plugin_commands(self) -> None:
        """Every plugin's commands (``hermes_register_commands``), after the core's in the
        order a single typer app gives: commands first, then groups; each remembered with
        its plugin (:meth:`resolve_command`)."""
        if getattr(self, "_hermes_plugin_commands", None) is not None:
            return
        self._hermes_plugin_commands = {}
        self._hermes_partial, self._hermes_owner = {}, {}
        # Here, not at the top: the plugin machinery (pluggy, the contract's pydantic, every
        # plugin's package) loads only when a command or the help needs the plugins' commands.
        from ..plugins import registered_plugins

        pm = registered_plugins()
        impls = pm.hook.hermes_register_commands.get_hookimpls()
        commands, groups = {}, {}
        for impl in reversed(impls):  # pluggy's calling order: the last registered first
            for name, command in _registered_commands(pm, impls, impl.plugin_name).items():
                (groups if isinstance(command, TyperGroup) else commands)[name] = command
                self._hermes_plugin_commands[name] = impl.plugin_name
        ordered = {
            **{n: c for n, c in self.commands.items() if not isinstance(c, TyperGroup)},
            **commands,
            **{n: c for n, c in self.commands.items() if isinstance(c, TyperGroup)},
            **groups,
        }
        self.commands.clear()
        self.commands.update(ordered)

    def resolve_command(self, ctx, args):
        """An unknown command that a built-in plugin left out by the allow-list would add
        says so, with the allow-list that brings it back: "no such command" alone sends
        the person looking for a typo. A plugin's command runs only when its plugin passed
        the tool check (:func:`hermes.plugins.get_plugin_manager`)."""
        if args and not ctx.resilient_parsing and self.get_command(ctx, args[0]) is None:
            why = left_out_command(args[0])
            if why:
                raise HermesError(why)
        name, command, rest = super().resolve_command(ctx, args)
        plugin = (getattr(self, "_hermes_plugin_commands", None) or {}).get(name) or getattr(
            self, "_hermes_owner", {}
        ).get(name)
        if plugin and not ctx.resilient_parsing:
            why = _failed_plugin(plugin)
            if why:
                raise HermesError(
                    f"{name!r} comes from the plugin {plugin!r}, which failed to load and is skipped: {why}"
                )
        return name, command, rest

    def _run(self, args, prog_name, complete_var, **extra) -> int:
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            return result if isinstance(result, int) else 0
        except typer.TyperException as exc:  # click's usage errors (typer vendors click)
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError":  # `hermes feeds`: show its help
                # The error drew the help when it was made (rich prints it then and keeps ""
                # as the message; plain click keeps the text): print only what is left.
                text = exc.format_message()
                if text.strip():
                    typer.echo(text)
                return 0
            message = _not_a_number_message(exc) or exc.format_message().rstrip(".")
            if ctx is not None:  # a usage error: point at the command's help
                message += f" (see `{ctx.command_path} --help`)"
            if "--json" in (sys.argv[1:] if args is None else list(args)):
                # Here, not at the top: pydantic (the contract's) loads only when a command answers --json.
                from ..contract import fail

                emit_json(fail(message))  # --json: still one document
            typer.echo(f"error: {lower_first(message)}", err=True)
            return 1
        except HermesError as exc:
            typer.echo(f"error: {lower_first(str(exc))}", err=True)
            return 1
        except _StdoutClosed:
            _quiet_stdout()
            return PIPE_CLOSED
        except (typer.Abort, KeyboardInterrupt, EOFError):
            typer.echo("", err=True)
            return 130


#: the status of a command whose stdout closed early: 128 + SIGPIPE, what a shell reports of a
#: writer the signal killed (:func:`main` ends the process by the signal itself)
PIPE_CLOSED = 141


class _StdoutClosed(Exception):
    """The command's reader went away (a BrokenPipeError while it wrote)."""


def _quiet_stdout() -> None:
    """Point stdout at the null device, so what is still buffered (flushed at exit) goes
    nowhere instead of raising again — Python's advice for a closed pipe."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's captured output)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _end_as_sigpipe() -> None:
    """End the process as SIGPIPE ends a pipe's writer (the shell sees 141, ``set -o pipefail``
    too); where there is no SIGPIPE, exit 141."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # Python ignores it, to raise EPIPE
        os.kill(os.getpid(), signal.SIGPIPE)
    sys.exit(PIPE_CLOSED)


def _registered_commands(pm, impls, plugin: str) -> dict:
    """``{name: command}`` that plugin ``plugin``'s ``hermes_register_commands`` adds, on a
    scratch app of its own (the other plugins' implementations left out)."""
    scratch = typer.Typer()
    scratch.callback()(lambda: None)  # a group, even when the plugin adds one command
    others = [i.plugin for i in impls if i.plugin_name != plugin]
    pm.subset_hook_caller("hermes_register_commands", others)(app=scratch)
    return dict(typer.main.get_command(scratch).commands)


def _not_a_number_message(exc) -> str | None:
    """A typed argument that is not a whole number (``hermes like ann abc``), said in the
    tools' words (``ITEM must be a whole number, such as an item id `hermes feed USER`
    prints``), not in the validator's. No option has bounds of its own: a tool's options are
    checked by the tool's model, the others by :func:`hermes.facekit.terminal.checked_options`."""
    param = getattr(exc, "param", None)
    if not isinstance(exc, typer.BadParameter) or param is None or not _not_an_integer(exc.__cause__):
        return None
    if getattr(param, "param_type_name", "") == "option":
        return f"{max(param.opts, key=len)} must be a whole number"
    name = (param.metavar or param.name.upper()).rstrip(".")
    hint = ", such as an item id `hermes feed USER` prints" if name == "ITEM" else ""
    return f"{name} must be a whole number{hint}"


def _not_an_integer(cause) -> bool:
    """Whether typer's value check (pydantic's, raised as the ``BadParameter``'s cause)
    failed because a value is not a whole number; read from its error types, not its words."""
    try:
        return any(error.get("type") == "int_parsing" for error in cause.errors())
    except (AttributeError, TypeError):  # another cause, or none
        return False


def _polish_help(command) -> None:
    """:func:`_polish` for ``command`` and every command under it, once."""
    if getattr(command, "_hermes_polished", False):
        return
    _polish(command)
    for sub in getattr(command, "commands", {}).values():
        _polish_help(sub)
    command._hermes_polished = True


def _polish(command) -> None:
    """Help that reads like a conventional CLI: click's plain help, not typer's rich panels
    (``typer.rich_utils`` imports rich's markdown, syntax and traceback: half of what
    ``hermes --help`` cost, issue 36), ``USER`` rather than ``{user}`` for an argument, no
    ``<bool>`` type after a flag (it takes no value), and help text shown as written
    (:func:`_as_written`), each command listed with the first paragraph of its help."""
    if hasattr(command, "rich_markup_mode"):  # a plugin's typer app sets typer's default
        command.rich_markup_mode = None
    _as_written(command)
    for param in getattr(command, "params", []):
        _as_written(param)
        if getattr(param, "param_type_name", "") == "argument":
            if param.metavar is None:
                param.metavar = param.name.upper()
            if type(param).__name__ != "_PlainArgument" and hasattr(param, "_usage_display_name"):
                param.__class__ = _plain_argument(type(param))
        elif getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    try:  # --help itself is a flag, made (and cached) on first use
        helper = command.get_help_option(command.context_class(command))
    except Exception:  # noqa: BLE001 - help stays as typer draws it
        helper = None
    if helper is not None and helper.metavar is None:
        helper.metavar = ""


def _as_written(thing) -> None:
    """Help text is plain prose, each paragraph flowing to the terminal's width (a
    docstring's line breaks are not kept), and a command is listed (``hermes --help``) with
    the first paragraph of its help, not click's first sentence cut at 45 characters with
    ``...``; once per command."""
    if getattr(thing, "_hermes_help_flowed", False):
        return
    for attribute in ("help", "short_help", "epilog"):
        text = getattr(thing, attribute, None)
        if isinstance(text, str):
            paragraphs = inspect.cleandoc(text).split("\n\n")
            text = "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)
            setattr(thing, attribute, text)
    help_text = getattr(thing, "help", None)
    if hasattr(thing, "get_short_help_str") and isinstance(help_text, str) and help_text and not thing.short_help:
        thing.short_help = help_text.split("\n\n")[0].removeprefix("\b").strip()  # a command's listing
    thing._hermes_help_flowed = True


_PLAIN: dict[type, type] = {}


def _plain_argument(base: type) -> type:
    """``base`` with click's usage notation: ``USER`` when required, ``[USER]`` otherwise."""
    if base not in _PLAIN:

        def _usage_display_name(self) -> str:
            name = self.metavar or self.name.upper()
            name = name if self.required else f"[{name}]"
            return name + ("..." if self.nargs != 1 else "")

        _PLAIN[base] = type("_PlainArgument", (base,), {"_usage_display_name": _usage_display_name})
    return _PLAIN[base]


def plugins_command(db: DbOption = None, as_json: JsonOption = False):
    """List every plugin: its distribution and version, the hooks and tools it provides, or
    why it failed to load."""
    # Here, not at the top: the plugin machinery loads only when a command needs it.
    from ..plugins import describe_plugins

    found = describe_plugins()
    if as_json:
        emit_json(found)
        return
    for p in found:
        origin = f"{p['distribution']} {p['version']}" if p["distribution"] else "not installed"
        typer.echo(f"{p['name']}  ({p['module']}, {origin})")
        if p["error"]:  # skipped at start-up (see hermes.plugins); the warning said how to fix it
            typer.echo(f"    failed to load: {p['error']}")
            continue
        typer.echo(f"    hooks: {', '.join(p['hooks']) or '-'}")
        if p["tools"]:
            typer.echo(f"    tools: {', '.join(p['tools'])}")


def left_out_command(name: str) -> str | None:
    """Why command ``name`` is missing, when the plugin allow-list leaves out the built-in
    plugin that adds it (``None`` otherwise); the fix it gives is the allow-list plus that
    plugin (:func:`hermes.plugins.allow_list`)."""
    # Here, not at the top: the plugin machinery loads only when a command needs it.
    from ..plugins import DEFAULT_PLUGINS, allow_list

    allowed = settings().plugins
    if allowed is None:
        return None
    provider = next(
        (
            plugin
            for plugin, module in DEFAULT_PLUGINS.items()
            if plugin not in allowed and name in _commands_of(module)
        ),
        None,
    )
    if provider is None:
        return None
    wanted = allow_list([*allowed, provider])
    if "HERMES_PLUGINS" in os.environ:
        where, fix = f"HERMES_PLUGINS={','.join(allowed)}", f"HERMES_PLUGINS={wanted}"
    else:
        where, fix = "[plugins] enabled in config.toml", f"enabled = {json.dumps(wanted.split(','))}"
    return f"{name!r} comes from the built-in plugin {provider!r}, which {where} leaves out; list it too: {fix}"


def _failed_plugin(name: str) -> str | None:
    """Why plugin ``name`` was left out by the tool check, or ``None`` when it is in."""
    # Here, not at the top: the plugin machinery loads only when a command needs it.
    from ..plugins import get_plugin_manager, load_failures

    if get_plugin_manager().get_plugin(name) is not None:
        return None
    return next((f["error"] for f in load_failures() if f["name"] == name), "see `hermes plugins`")


def _commands_of(module_name: str) -> set[str]:
    """The top-level commands the plugin module ``module_name`` adds (registered on a
    scratch app: it is left out of the real one)."""
    register = getattr(importlib.import_module(module_name), "hermes_register_commands", None)
    if register is None:
        return set()
    scratch = typer.Typer()
    scratch.callback()(lambda: None)  # a group, even when the plugin adds one command
    register(app=scratch)
    return set(typer.main.get_command(scratch).commands)


def _version(value: bool):
    if value:
        typer.echo(f"hermes {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="hermes",
        cls=HermesGroup,
        help="A self-hosted personal feed engine for researchers.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # click's plain help (:func:`_polish`)
    )

    @app.callback()
    def _root(
        db: DbOption = None,
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ):
        """hermes: ingest feeds, rank them per persona, explain, digest, keep a corpus."""
        if db:
            ROOT_DB.set(db)

    app.command("plugins")(plugins_command)
    core.register(app)
    return app  # the plugins' commands come when they are looked up (HermesGroup)


def main() -> None:
    try:
        build_app()()
    except HermesError as exc:  # raised while building the app (a broken plugin list)
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except SystemExit as exc:
        # The process's own end, here and not in HermesGroup.main: a test runs the app in
        # its own process, which a signal would end too.
        if exc.code == PIPE_CLOSED:
            _end_as_sigpipe()
        raise
