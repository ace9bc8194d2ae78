"""The plugin manager: built-in plugins first, then the ``hermes`` entry-point group.

Built-ins are registered exactly like external plugins, from :data:`DEFAULT_PLUGINS`. The
core never imports a plugin anywhere else. ``HERMES_PLUGINS`` (or ``[plugins] enabled`` in
``config.toml``) is an allow-list by plugin name; tests set ``HERMES_LOAD_ENTRYPOINTS=0`` so
whatever happens to be installed on the machine does not leak into them.

An installed plugin that fails to load (an import error, a hook with arguments no hook has,
a tool that breaks the tool contract: :func:`plugin_tools`) is skipped with one line on
stderr naming it, its distribution, the error and the way out, and ``hermes plugins`` lists
it as failed: one broken optional package must not take
``hermes --version`` or the MCP server down with it (as pytest, llm and datasette users
expect). stderr only: stdout carries the MCP stdio stream. A plugin that fails while a hook
runs is named the same way (:func:`call_each`, :func:`warn`).
"""

from __future__ import annotations

import ast
import contextvars
import dataclasses
import importlib
import importlib.util
import logging
import os
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from functools import cache, lru_cache
from importlib.metadata import PackageNotFoundError, entry_points, packages_distributions, version
from typing import TYPE_CHECKING, Any

import pluggy

from .config import check_sections, settings
from .errors import HermesError, NotFound

if TYPE_CHECKING:  # annotations only: `hermes --help` reads the plugins' commands without pydantic
    from .contract import Embedder, Tool

log = logging.getLogger(__name__)

#: plugin name -> module, registered in this order (the names are what ``HERMES_PLUGINS``
#: and ``hermes plugins`` use)
DEFAULT_PLUGINS: dict[str, str] = {
    "signals": "hermes.builtins.clicks",
    "default_embedder": "hermes.builtins.default_embedder",
    "default_candidates": "hermes.builtins.default_candidates",
    "default_keyphrases": "hermes.builtins.default_keyphrases",
    "scorers": "hermes.builtins.scorers",
    "feeds": "hermes_feeds",
    "persona": "hermes_persona",
    "digest": "hermes_digest",
    "corpus": "hermes_corpus",
}


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager with what hermes keeps per process beside it, as typed fields
    (not attributes set on pluggy's object)."""

    def __init__(self) -> None:
        super().__init__("hermes")
        #: the installed plugins that failed to load: see :func:`load_failures`
        self.failed: list[dict] = []
        #: the embedder the ``hermes_embedder`` hook chose, once per process
        #: (:func:`hermes.embed.get_embedder`); ``None`` until then, or to choose again
        self.embedder: Embedder | None = None
        #: whether the registered plugins' tools were checked (:func:`get_plugin_manager`)
        self.tools_checked = False


def _build() -> PluginManager:
    # A plugin that prints while it loads put a line that is no JSON first on `hermes
    # serve`'s stdout (the MCP stream) and into `--json` answers: it goes to stderr instead.
    with redirect_stdout(sys.stderr):
        return _build_quietly()


def _build_quietly() -> PluginManager:
    # Here, not at the top: the hook contract (pydantic) loads only when the plugins are
    # registered, not for `hermes --help`'s list of their commands (:func:`declared_commands`).
    from . import hookspecs

    pm = PluginManager()
    pm.add_hookspecs(hookspecs)
    allowed = settings().plugins
    seen: set[str] = set()
    for name, module_name in DEFAULT_PLUGINS.items():
        seen.add(name)
        if allowed is None or name in allowed:
            pm.register(importlib.import_module(module_name), name=name)
    if os.environ.get("HERMES_LOAD_ENTRYPOINTS", "1") != "0":
        for ep in hermes_entry_points(tuple(sys.path)):
            seen.add(ep.name)
            if (allowed is None or ep.name in allowed) and pm.get_plugin(ep.name) is None:
                _load(pm, ep)
    if allowed is not None:
        unknown = sorted(set(allowed) - seen)
        if unknown:
            raise NotFound(
                f"unknown plugin(s) in the allow-list: {', '.join(unknown)}; known: {', '.join(sorted(seen))}"
            )
    for failure in pm.failed:
        sys.stderr.write(f"hermes: warning: {failure_line(failure, pm)}\n")
    check(pm)
    check_sections(name for names in pm.hook.hermes_config_sections() for name in names or ())
    if os.environ.get("HERMES_TRACE_PLUGINS") == "1":
        trace(pm)
    return pm


@lru_cache(maxsize=4)
def hermes_entry_points(path: tuple[str, ...]) -> tuple:
    """The installed ``hermes`` entry points, read once per process for the search path
    ``path`` (``tuple(sys.path)``: an entry point appears only with the folder holding its
    distribution). Reading them opens every installed distribution's ``entry_points.txt``:
    a command read them twice, to know whether the commands are all declared
    (:func:`declared_plugin_commands`) and to register the plugins (issue 36)."""
    return tuple(entry_points(group="hermes"))


def _load(pm: PluginManager, ep) -> None:
    """Import and register entry point ``ep``, or record why it could not be."""
    try:
        pm.register(ep.load(), name=ep.name)
    except Exception as exc:  # noqa: BLE001 - any error in a third-party import is its own
        dist = getattr(ep, "dist", None)
        pm.failed.append(
            {
                "name": ep.name,
                "module": ep.module,
                "distribution": dist.name if dist is not None else None,
                "version": dist.version if dist is not None else None,
                "error": error_line(exc),
            }
        )


def skip_broken_tools(pm: PluginManager) -> None:
    """Leave out, like a plugin that fails to import, every plugin whose tools break the tool
    contract (a string parameter without ``max_length``, a name another plugin's tool has,
    something not a ``Tool``), or whose ``hermes_register_tools`` raises.

    The whole plugin goes, not only its tools: its scorer ranking for a domain an agent
    cannot then ask about would be a plugin half there, and ``hermes plugins`` would call it
    healthy. Plugins are checked in registration order, so of two with one tool name the
    later (an installed plugin, not a built-in) is left out. Checked once here, so every
    command, ``hermes serve`` and ``hermes plugins`` agree on which plugins are in.

    The plugins hermes ships (:data:`SHIPPED`) pass this check in its own test suite
    (tests/test_plugin_tool_refusal.py), so with no other plugin registering tools nothing
    is collected here: a command imports the tools module of the tool it calls
    (:func:`hermes.tools.find_tool`), not every plugin's. Any other plugin is checked
    against every tool, the shipped ones' included."""
    impls = [
        impl for impl in pm.hook.hermes_register_tools.get_hookimpls() if pm.get_plugin(impl.plugin_name) is not None
    ]
    if all(shipped(pm, impl.plugin_name) for impl in impls):
        return
    taken: dict[str, Tool] = {}
    for impl in impls:
        if pm.get_plugin(impl.plugin_name) is None:  # its other implementation failed
            continue
        try:
            found = plugin_tools(impl, taken)
            if not shipped(pm, impl.plugin_name):
                # its answers' models are built when first asked for (hermes.contract.Answer):
                # built here, a bad field type leaves the plugin out now, not tools/list later
                for t in found:
                    t.output_schema()
            taken.update((t.name, t) for t in found)
        except Exception as exc:  # noqa: BLE001 - a third-party bug, reported by name
            pm.unregister(name=impl.plugin_name)
            module = getattr(impl.plugin, "__name__", type(impl.plugin).__module__)
            dist, dist_version = distribution(module)
            pm.failed.append(
                {
                    "name": impl.plugin_name,
                    "module": module,
                    "distribution": dist,
                    "version": dist_version,
                    "error": str(exc) if isinstance(exc, HermesError) else error_line(exc),
                }
            )


#: ``(name, module)`` of every plugin hermes ships (:data:`DEFAULT_PLUGINS` as released):
#: their tools are checked by hermes's test suite, not at every start (:func:`skip_broken_tools`)
SHIPPED: frozenset[tuple[str, str]] = frozenset(DEFAULT_PLUGINS.items())


def shipped(pm: pluggy.PluginManager, name: str) -> bool:
    """Whether plugin ``name`` is one hermes ships, registered from its own module."""
    plugin = pm.get_plugin(name)
    return (name, getattr(plugin, "__name__", None)) in SHIPPED


def plugin_tools(impl, taken: dict[str, Tool], *, trusted: bool = False) -> list[Tool]:
    """The tools one ``hermes_register_tools`` implementation registers, each marked with its
    plugin, checked against the contract: a :class:`Tool`, a name no tool in ``taken`` has,
    every string parameter bounded. Raises :class:`HermesError` saying what to change (the
    caller names the plugin).

    ``trusted``: a plugin hermes ships (:func:`shipped`), whose tools the test suite checks
    (tests/test_cli_start_declared.py): their bounds are not checked again, so collecting
    them builds no tool's JSON schema (a command calls one tool; ``hermes feed`` collected the
    click plugin's and ``list_feed``'s schemas at every run, issue 36)."""
    # Here, not at the top: the contract (pydantic) loads only when tools are collected.
    from .contract import Tool

    found: list[Tool] = []
    for tool in impl.function() or []:
        if not isinstance(tool, Tool):
            raise HermesError(f"it registered {tool!r}, not a Tool: define tools with the hermes.tool decorator")
        if tool.name in taken:
            raise HermesError(
                f"its tool {tool.name!r} has the name of a tool of plugin "
                f"{taken[tool.name].plugin!r}: give it another name"
            )
        marked = _marked(tool, impl.plugin_name)
        if not trusted:
            _check_limits(marked)
        found.append(marked)
    return found


@cache
def _marked(tool: Tool, plugin: str) -> Tool:
    """``tool`` marked with its plugin, the same object at every collection, with what
    ``tool`` has computed already (its argument model, built when the tool was defined: a
    cached property, kept beside the fields): the check (:func:`_check_limits`),
    ``tools/list`` and every call use that model, not one built again for each copy."""
    marked = dataclasses.replace(tool, plugin=plugin)
    fields = {f.name for f in dataclasses.fields(tool)}
    vars(marked).update({k: v for k, v in vars(tool).items() if k not in fields})
    return marked


def _check_limits(tool: Tool) -> None:
    """Refuse a tool with a string parameter an agent could fill without limit: a 10 MB
    argument would otherwise reach the tool (and the database) unchecked."""
    unbounded = _unbounded_strings(tool)
    if unbounded:
        raise HermesError(
            f"tool {tool.name!r} has string parameter(s) {', '.join(unbounded)} without a "
            "max_length; its author declares one (Annotated[str, Field(max_length=...)]) or a "
            "Literal of the allowed values"
        )


@cache
def _unbounded_strings(tool: Tool) -> tuple[str, ...]:
    """The parameters of ``tool`` whose schema admits a string of any length (cached: the
    schema of a tool never changes, and tools are collected at every call)."""
    properties = tool.input_schema().get("properties", {})
    return tuple(name for name, schema in properties.items() if _unbounded(schema))


def _unbounded(schema: object) -> bool:
    """Whether a JSON schema admits a string with no ``maxLength`` (nor an ``enum``),
    looking into ``anyOf`` options and array items."""
    if not isinstance(schema, dict):
        return False
    if any(_unbounded(option) for option in schema.get("anyOf", [])):
        return True
    if _unbounded(schema.get("items")):
        return True
    types = schema.get("type")
    is_string = types == "string" or (isinstance(types, list) and "string" in types)
    return is_string and "maxLength" not in schema and "enum" not in schema and "const" not in schema


def error_line(exc: BaseException) -> str:
    """``KeyError: 'boom' (hermes_boom/__init__.py:12)``: the error and where it was raised,
    on one line (a traceback of pluggy's and importlib's frames names neither)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    # the innermost frame of the plugin's own code: not importlib's or pluggy's
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<")
        and "/pluggy/" not in f.filename.replace(os.sep, "/")
        and "/importlib/" not in f.filename.replace(os.sep, "/")
    ]
    if frames:
        path = frames[-1].filename.replace(os.sep, "/").split("/")
        text += f" ({'/'.join(path[-2:])}:{frames[-1].lineno})"
    return text


def failure_line(failure: dict, pm: pluggy.PluginManager) -> str:
    """What went wrong with a plugin that failed to load, and the two ways out."""
    origin = f"{failure['distribution']} {failure['version']}" if failure["distribution"] else failure["module"]
    others = allow_list(name for name, _ in pm.list_name_plugin())
    uninstall = f"uninstall it (pip uninstall {failure['distribution']})" if failure["distribution"] else "uninstall it"
    return (
        f"plugin {failure['name']!r} ({origin}) failed to load and is skipped: "
        f"{failure['error']}; {uninstall} or leave it out with HERMES_PLUGINS={others}"
    )


def allow_list(names) -> str:
    """A ``HERMES_PLUGINS`` value that loads ``names`` and the core's own built-ins (the
    embedder, candidates, scorers: without them no feed can be ranked), built-ins first in
    their order, so a suggested allow-list works when pasted."""
    names = list(names)
    core = [name for name, module in DEFAULT_PLUGINS.items() if name in names or module.startswith("hermes.builtins.")]
    return ",".join(dict.fromkeys(core + names))


def load_failures() -> list[dict]:
    """The installed plugins that failed to load (``name``, ``module``, ``distribution``,
    ``version``, ``error``), skipped by the plugin manager."""
    return list(get_plugin_manager().failed)


def check(pm: pluggy.PluginManager) -> None:
    """Refuse a ``@hookimpl`` that matches no hook (``hermes_scroe`` for ``hermes_score``):
    unchecked, pluggy would register it and never call it."""
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        # Here, not at the top: the hook contract (pydantic) loads only with the plugins.
        from . import hookspecs

        known = ", ".join(sorted(h for h in dir(hookspecs) if h.startswith("hermes_")))
        name = pm.get_name(exc.plugin) or repr(exc.plugin)
        raise HermesError(
            f"plugin {name!r} implements a hook that does not exist ({exc}); the hooks are: {known}"
        ) from None


def trace(pm: pluggy.PluginManager) -> None:
    """``HERMES_TRACE_PLUGINS=1``: every hook call, its arguments and results, on stderr
    (never stdout: it carries the MCP stdio stream)."""
    pm.trace.root.setwriter(sys.stderr.write)
    pm.enable_tracing()


@lru_cache(maxsize=1)
def registered_plugins() -> PluginManager:
    """The process-wide plugin manager with every plugin registered, its tools not yet
    checked: what a plugin's command needs to be added. Registering imports each plugin's
    package (a built-in plugin imports its tools and commands in the hooks that use them);
    ``hermes --help`` lists the built-ins' commands without even that
    (:func:`declared_plugin_commands`); everything else uses :func:`get_plugin_manager`."""
    return _build()


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager (built on first use), the plugins whose tools break
    the contract left out (:func:`skip_broken_tools`, once per process)."""
    pm = registered_plugins()
    if not pm.tools_checked:
        # One check; another thread waits for it, and a plugin that asks for the manager
        # while its tools are collected (the same thread) gets it as it is.
        with _checking:
            if not pm.tools_checked and not _in_check:
                _in_check.append(pm)
                try:
                    known = len(pm.failed)
                    with redirect_stdout(sys.stderr):  # as while loading: stdout is the MCP stream
                        skip_broken_tools(pm)
                    for failure in pm.failed[known:]:
                        sys.stderr.write(f"hermes: warning: {failure_line(failure, pm)}\n")
                    pm.tools_checked = True
                finally:
                    _in_check.clear()
    return pm


_checking = threading.RLock()
_in_check: list[PluginManager] = []  # non-empty while the check runs (under _checking)


def pm_cache_clear() -> None:
    """Forget the plugin manager and the entry points read (a test's new installed plugin)."""
    registered_plugins.cache_clear()
    hermes_entry_points.cache_clear()


def declared_commands(module_name: str) -> dict[str, tuple[str, bool]] | None:
    """The commands plugin module ``module_name`` says it adds, read from its source file
    without importing it: ``{name: (the first paragraph of its help, whether it is a group)}``
    from the module's ``COMMANDS`` and ``COMMAND_GROUPS`` literals, ``{}`` for a module
    that does not implement ``hermes_register_commands``. ``None`` when that cannot be read
    so (no source file, commands added but not declared): the caller registers the plugin
    instead. ``hermes --help`` lists the built-in plugins' commands from this, without
    their packages, the hook contract, pydantic or sqlite-utils; tests/test_cli_start_declared.py
    holds every built-in's declaration to the commands its hook adds."""
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None)
    if not origin or not origin.endswith(".py"):
        return None
    try:
        with open(origin, encoding="utf-8") as handle:
            source = handle.read()
    except OSError:
        return None
    if "hermes_register_commands" not in source:
        return {}
    literals: dict[str, Any] = {}
    for node in ast.parse(source, origin).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("COMMANDS", "COMMAND_GROUPS"):
            try:
                literals[target.id] = ast.literal_eval(value)
            except ValueError:
                return None
    if "COMMANDS" not in literals and "COMMAND_GROUPS" not in literals:
        return None
    declared: dict[str, tuple[str, bool]] = {}
    for key, group in (("COMMANDS", False), ("COMMAND_GROUPS", True)):
        for name, text in dict(literals.get(key) or {}).items():
            declared[str(name)] = (str(text), group)
    return declared


def declared_plugin_commands() -> list[tuple[str, str, str, bool]] | None:
    """``(command, plugin, help, is a group)`` for every command the enabled plugins add, in
    the order registering them gives (the last registered plugin's first), known without
    importing a plugin (:func:`declared_commands`). ``None`` when it cannot be known so —
    the plugins are registered in this process already (a test's plugin may be among them),
    a package is installed in the ``hermes`` entry-point group, the allow-list names a
    plugin that is not built in (registering says which), or a built-in does not declare
    its commands — and the caller registers the plugins instead."""
    if registered_plugins.cache_info().currsize:
        return None
    if os.environ.get("HERMES_LOAD_ENTRYPOINTS", "1") != "0" and hermes_entry_points(tuple(sys.path)):
        return None
    allowed = settings().plugins
    if allowed is not None and set(allowed) - set(DEFAULT_PLUGINS):
        return None
    found: list[tuple[str, str, str, bool]] = []
    for name, module in reversed(DEFAULT_PLUGINS.items()):
        if allowed is not None and name not in allowed:
            continue
        declared = declared_commands(module)
        if declared is None:
            return None
        found.extend((command, name, text, group) for command, (text, group) in declared.items())
    return found


def distribution(module: str) -> tuple[str | None, str | None]:
    """The installed distribution that provides ``module``, and its version."""
    names = packages_distributions().get(module.split(".")[0]) or []
    for name in dict.fromkeys(names):
        try:
            return name, version(name)
        except PackageNotFoundError:
            continue
    return None, None


def describe_plugins() -> list[dict]:
    """What every plugin provides: hooks it implements, tools it registers, and the
    distribution (and version) it comes from; ``error`` says why one failed to load
    (``None`` for a loaded one)."""
    pm = get_plugin_manager()
    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda np_: np_[0]):
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        tools = []
        if hasattr(plugin, "hermes_register_tools"):
            tools = [t.name for t in plugin.hermes_register_tools() or []]
        module = getattr(plugin, "__name__", type(plugin).__module__)
        dist, dist_version = distribution(module)
        out.append(
            {
                "name": name,
                "module": module,
                "distribution": dist,
                "version": dist_version,
                "hooks": hooks,
                "tools": tools,
                "error": None,
            }
        )
    failed = [{**f, "hooks": [], "tools": []} for f in load_failures()]
    return sorted(out + failed, key=lambda p: p["name"])


# --- a plugin failing while a hook runs ----------------------------------------------------

_notes: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("hermes_plugin_warnings", default=None)


def warn(message: str, *, said: str | None = None) -> None:
    """Report a plugin's failure that hermes worked around: logged (stderr, never stdout) and
    kept for the tool call in progress, which adds it to its message (:func:`collecting`).
    ``said``: what the answer says instead, when ``message`` holds an exception's text (paths,
    secrets), which only the log may hold."""
    log.warning("hermes: warning: %s", message)
    notes = _notes.get()
    said = said or message
    if notes is not None and said not in notes:
        notes.append(said)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """The :func:`warn` messages of the block, in order."""
    notes: list[str] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def call_each(hook: str, *, failed: set[str] | None = None, **kwargs) -> Iterator[tuple[str, Any]]:
    """Call hook ``hook``'s implementations one at a time, in pluggy's order, yielding
    ``(plugin name, answer)``. Plugins named in ``failed`` are not called; one that raises
    is added to it.

    A plugin that raises is named with :func:`warn` and left out, instead of its error
    ending the whole hook call: one broken scorer must not make the feed unusable. A
    :class:`~hermes.errors.HermesError` is a message meant for the user and propagates. Each
    call goes through pluggy (a subset caller), so ``HERMES_TRACE_PLUGINS`` still shows it.
    """
    pm = get_plugin_manager()
    impls = getattr(pm.hook, hook).get_hookimpls()
    # pluggy calls the last registered first; a plugin may implement a hook more than once
    # (``specname``), so it is called with all its own implementations
    names = dict.fromkeys(i.plugin_name for i in reversed(impls) if not (i.hookwrapper or i.wrapper))
    for name in names:
        if failed is not None and name in failed:
            continue
        others = [i.plugin for i in impls if i.plugin_name != name]
        try:
            answers = pm.subset_hook_caller(hook, others)(**kwargs)
        except HermesError:
            raise
        except Exception as exc:  # a plugin's bug, reported by name
            log.debug("plugin %s failed in %s", name, hook, exc_info=True)
            warn(
                f"plugin {name!r} failed in {hook} and was left out: {error_line(exc)}",
                said=f"plugin {name!r} failed in {hook} and was left out ({type(exc).__name__}; "
                "the details are in the server's log)",
            )
            if failed is not None:
                failed.add(name)
            continue
        for answer in answers:
            yield name, answer
