"""The plugin manager: built-in plugins first, then the ``hermes`` entry-point group.

Built-ins are registered exactly like external plugins, from :data:`DEFAULT_PLUGINS`. The
core never imports a plugin anywhere else. ``HERMES_PLUGINS`` (or ``[plugins] enabled`` in
``config.toml``) is an allow-list by plugin name; tests set ``HERMES_LOAD_ENTRYPOINTS=0`` so
whatever happens to be installed on the machine does not leak into them.
"""

from __future__ import annotations

import importlib
import os
import sys
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, entry_points, packages_distributions, version

import pluggy

from . import hookspecs
from .config import settings
from .errors import HermesError, NotFound

#: plugin name -> module, registered in this order (the names are what ``HERMES_PLUGINS``
#: and ``hermes plugins`` use)
DEFAULT_PLUGINS: dict[str, str] = {
    "signals": "hermes.builtins.clicks",
    "default_embedder": "hermes.builtins.default_embedder",
    "default_candidates": "hermes.builtins.default_candidates",
    "scorers": "hermes.builtins.scorers",
    "feeds": "hermes_feeds",
    "persona": "hermes_persona",
    "digest": "hermes_digest",
    "corpus": "hermes_corpus",
}


def _build() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("hermes")
    pm.add_hookspecs(hookspecs)
    allowed = settings().plugins
    seen: set[str] = set()
    for name, module_name in DEFAULT_PLUGINS.items():
        seen.add(name)
        if allowed is None or name in allowed:
            pm.register(importlib.import_module(module_name), name=name)
    if os.environ.get("HERMES_LOAD_ENTRYPOINTS", "1") != "0":
        for ep in entry_points(group="hermes"):
            seen.add(ep.name)
            if allowed is None or ep.name in allowed:
                if pm.get_plugin(ep.name) is None:
                    pm.register(ep.load(), name=ep.name)
    if allowed is not None:
        unknown = sorted(set(allowed) - seen)
        if unknown:
            raise NotFound(
                f"unknown plugin(s) in the allow-list: {', '.join(unknown)}; "
                f"known: {', '.join(sorted(seen))}"
            )
    check(pm)
    if os.environ.get("HERMES_TRACE_PLUGINS") == "1":
        trace(pm)
    return pm


def check(pm: pluggy.PluginManager) -> None:
    """Refuse a ``@hookimpl`` that matches no hook (``hermes_scroe`` for ``hermes_score``):
    unchecked, pluggy would register it and never call it."""
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        known = ", ".join(sorted(h for h in dir(hookspecs) if h.startswith("hermes_")))
        name = pm.get_name(exc.plugin) or repr(exc.plugin)
        raise HermesError(f"plugin {name!r} implements a hook that does not exist ({exc}); the "
                          f"hooks are: {known}") from None


def trace(pm: pluggy.PluginManager) -> None:
    """``HERMES_TRACE_PLUGINS=1``: every hook call, its arguments and results, on stderr
    (never stdout: it carries the MCP stdio stream)."""
    pm.trace.root.setwriter(sys.stderr.write)
    pm.enable_tracing()


@lru_cache(maxsize=1)
def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (built on first use)."""
    return _build()


pm_cache_clear = get_plugin_manager.cache_clear


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
    """What every loaded plugin provides: hooks it implements, tools it registers, and the
    distribution (and version) it comes from."""
    pm = get_plugin_manager()
    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda np_: np_[0]):
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        tools = []
        if hasattr(plugin, "hermes_register_tools"):
            tools = [t.name for t in plugin.hermes_register_tools() or []]
        module = getattr(plugin, "__name__", type(plugin).__module__)
        dist, dist_version = distribution(module)
        out.append({"name": name, "module": module, "distribution": dist,
                    "version": dist_version, "hooks": hooks, "tools": tools})
    return out

