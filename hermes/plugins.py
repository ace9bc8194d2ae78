"""The plugin manager: built-in plugins first, then the ``hermes`` entry-point group.

Built-ins are registered exactly like external plugins, from :data:`DEFAULT_PLUGINS`. The
core never imports a plugin anywhere else. ``HERMES_PLUGINS`` (or ``[plugins] enabled`` in
``config.toml``) is an allow-list by plugin name; tests set ``HERMES_LOAD_ENTRYPOINTS=0`` so
whatever happens to be installed on the machine does not leak into them.
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache
from importlib.metadata import entry_points

import pluggy

from . import hookspecs
from .config import settings
from .errors import NotFound

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
    return pm


@lru_cache(maxsize=1)
def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (built on first use)."""
    return _build()


pm_cache_clear = get_plugin_manager.cache_clear


def describe_plugins() -> list[dict]:
    """What every loaded plugin provides: hooks it implements and tools it registers."""
    pm = get_plugin_manager()
    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda np_: np_[0]):
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        tools = []
        if hasattr(plugin, "hermes_register_tools"):
            tools = [t.name for t in plugin.hermes_register_tools() or []]
        module = getattr(plugin, "__name__", type(plugin).__name__)
        out.append({"name": name, "module": module, "hooks": hooks, "tools": tools})
    return out

