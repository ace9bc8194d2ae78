"""The one place tools are collected and called, and the argument types tools share.

A tool is made by :func:`hermes.contract.tool`; its result is the envelope
``{"ok": bool, "message": str, **payload}`` (:class:`hermes.contract.Result`). A failure keeps
the success-path keys present (empty) and its message says what went wrong and what to do
instead; one that is not the caller's doing (a full disk, a bug) also carries
``server_error: true``. :func:`call_tool` is how every face calls one: it says who is calling
``server_error: true``. :func:`call_tool` is how every face calls one: it says which face is
calling (the words of the messages and the signal source, :mod:`hermes.faces`) and keeps the
server alive whatever a tool does.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Annotated

from pydantic import Field

from . import faces
from .contract import NAME_MAX, Tool, server_failure
from .errors import HermesError
from .plugins import get_plugin_manager

log = logging.getLogger(__name__)

#: A persona named in a tool call (the one persona argument type of every tool group).
User = Annotated[str, Field(description="Persona name, as list_users shows it.",
                            min_length=1, max_length=NAME_MAX)]
#: An item named in a tool call.
ItemId = Annotated[int, Field(description="Item id (from list_feed, search_feed or corpus_items).",
                              ge=1)]

def caller() -> str:
    """The signal source of the tool call in progress: ``agent`` over MCP, ``ui`` for a person
    at the CLI or in the web UI (see :mod:`hermes.faces`). Signal-writing tools record it, so
    provenance survives the shared tool path."""
    return faces.source()


def collect_tools(groups: set[str] | None = None) -> dict[str, Tool]:
    """Every registered tool by name, remembering the plugin it came from."""
    pm = get_plugin_manager()
    tools: dict[str, Tool] = {}
    for impl in pm.hook.hermes_register_tools.get_hookimpls():
        for tool in impl.function() or []:
            if not isinstance(tool, Tool):
                raise HermesError(f"plugin {impl.plugin_name} registered {tool!r}, not a Tool: "
                                  "define tools with the hermes.tool decorator")
            if groups is not None and tool.group not in groups:
                continue
            if tool.name in tools:
                raise HermesError(
                    f"tool {tool.name!r} is registered twice "
                    f"({tools[tool.name].plugin} and {impl.plugin_name})"
                )
            tools[tool.name] = dataclasses.replace(tool, plugin=impl.plugin_name)
    return tools


def call_tool(db, tool: Tool, arguments: dict, *, face: str | None = None) -> dict:
    """Run a tool; a user mistake or an unexpected error becomes an ``ok: false`` result.

    :param face: who is calling — ``mcp`` (an agent), ``cli`` or ``web`` (a person); ``None``
        keeps the current face. It words the messages and sets the signal source, readable
        inside through :func:`caller` (:mod:`hermes.faces`).
    """
    with faces.speaking(face):
        try:
            return tool.run(db, arguments)
        except Exception as exc:  # the server must survive any tool bug
            log.exception("tool %s failed", tool.name)
            return server_failure(f"{tool.name} failed unexpectedly: "
                                  f"{type(exc).__name__}: {exc}", **tool.empty)
