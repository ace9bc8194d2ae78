"""The one place tools are collected and called, and the argument types tools share.

A tool is made by :func:`hermes.contract.tool`; its result is the envelope
``{"ok": bool, "message": str, **payload}`` (:class:`hermes.contract.Result`). A failure keeps
the success-path keys present (empty) and its message says what went wrong and what to do
instead; one that is not the caller's doing (a full disk, a bug) also carries
``server_error: true``. :func:`call_tool` is how every face calls one: it says which face is
calling (the words of the messages and the signal source, :mod:`hermes.faces`) and keeps the
server alive whatever a tool does; a plugin that failed during the call and was worked
around (a scorer left out of the ranking) is named at the end of the message. Every string
parameter has a ``max_length`` (or allowed values): a tool without one is refused when the
tools are collected, naming its plugin, the tool and the parameter.
"""

from __future__ import annotations

import dataclasses
import logging
from functools import lru_cache
from typing import Annotated

from pydantic import Field

from . import faces
from .contract import NAME_MAX, Tool, server_failure
from .errors import HermesError
from .plugins import collecting, get_plugin_manager

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
            _check_limits(tool, impl.plugin_name)
            tools[tool.name] = dataclasses.replace(tool, plugin=impl.plugin_name)
    return tools


def _check_limits(tool: Tool, plugin: str) -> None:
    """Refuse a tool with a string parameter an agent could fill without limit: a 10 MB
    argument would otherwise reach the tool (and the database) unchecked."""
    unbounded = _unbounded_strings(tool)
    if unbounded:
        raise HermesError(
            f"plugin {plugin!r}: tool {tool.name!r} has string parameter(s) "
            f"{', '.join(unbounded)} without a max_length; declare one "
            "(Annotated[str, Field(max_length=...)]) or a Literal of the allowed values, or "
            f"leave the plugin out with HERMES_PLUGINS")


@lru_cache(maxsize=None)
def _unbounded_strings(tool: Tool) -> tuple[str, ...]:
    """The parameters of ``tool`` whose schema admits a string of any length (cached: the
    schema of a tool never changes, and tools are collected at every call)."""
    properties = tool.input_schema().get("properties", {})
    return tuple(name for name, schema in properties.items() if _unbounded(schema))


def _unbounded(schema: dict) -> bool:
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


def call_tool(db, tool: Tool, arguments: dict, *, face: str | None = None) -> dict:
    """Run a tool; a user mistake or an unexpected error becomes an ``ok: false`` result.

    :param face: who is calling — ``mcp`` (an agent), ``cli`` or ``web`` (a person); ``None``
        keeps the current face. It words the messages and sets the signal source, readable
        inside through :func:`caller` (:mod:`hermes.faces`).
    """
    with faces.speaking(face), collecting() as warnings:
        try:
            result = tool.run(db, arguments)
        except Exception as exc:  # the server must survive any tool bug
            log.exception("tool %s failed", tool.name)
            result = server_failure(f"{tool.name} failed unexpectedly: "
                                    f"{type(exc).__name__}: {exc}", **tool.empty)
    return _with_warnings(result, warnings)


def _with_warnings(result: dict, warnings: list[str]) -> dict:
    """A plugin that failed during the call (a scorer left out of the ranking) is named in
    the message: the caller reads the answer as complete otherwise."""
    if not warnings or not isinstance(result, dict):
        return result
    message = str(result.get("message", "")).rstrip()
    notes = " ".join(f"Warning: {w}." for w in warnings)
    return {**result, "message": f"{message} {notes}".strip()}
