"""The one place tools are collected and called, and the argument types tools share.

A tool is made by :func:`hermes.contract.tool`; its result is the envelope
``{"ok": bool, "message": str, **payload}`` (:class:`hermes.contract.Result`). A failure keeps
the success-path keys present (empty) and its message says what went wrong and what to do
instead; one that is not the caller's doing (a full disk, a bug) also carries
``server_error: true``. :func:`call_tool` is how every face and route calls one (the one
call path; :func:`call_tool_status` adds the HTTP status for a route): it checks the
arguments against the tool's model, says which face is calling (the words of the messages
and the signal source, :mod:`hermes.facekit.faces`) and keeps the server alive whatever a tool does;
a plugin that failed during the call and was worked around (a scorer left out of the
ranking) is named at the end of the message. Every string
parameter has a ``max_length`` (or allowed values): the plugin manager leaves a plugin with a
tool without one out at start-up, like a plugin that fails to import, naming the tool and the
parameter (:func:`hermes.plugins.plugin_tools`): the contract stays strict, and the blast
radius is that one plugin.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Annotated

from pydantic import BeforeValidator, Field

from hermes.facekit import faces

from .arguments import PERSONA
from .contract import NAME_MAX, Prompt, Tool, server_failure
from .errors import HermesError, NotFound
from .plugins import collecting, get_plugin_manager, plugin_tools, shipped

log = logging.getLogger(__name__)

#: A persona named in a tool call (the one persona argument type of every tool group). Marked
#: PERSONA: a parameter of this type answers to ``user`` too, whatever its name. Described
#: once, in the server's instructions, with where names come from (``hermes serve --tools
#: feeds`` serves no list_users), not in each of 30 parameters.
User = Annotated[str, Field(min_length=1, max_length=NAME_MAX), PERSONA]
#: An item named in a tool call: any list or search answer gives ids (the instructions say
#: so once, not each of the tools).
ItemId = Annotated[int, Field(ge=1)]
#: the most items one call rates or marks alike (one transaction)
MAX_BATCH = 50


def _whole_numbers(value):
    """3.0 as 3, in a list too: some clients send every number as a float (the leniency
    :mod:`hermes.arguments` gives a plain integer parameter)."""

    def whole(v):
        return int(v) if isinstance(v, float) and v.is_integer() else v

    return [whole(v) for v in value] if isinstance(value, list) else whole(value)


#: An item, or a list of up to MAX_BATCH treated alike (record_feedback, mark_read).
ItemIds = Annotated[
    ItemId | Annotated[list[ItemId], Field(min_length=1, max_length=MAX_BATCH)],
    BeforeValidator(_whole_numbers),
    Field(description=f"An id, or a list of up to {MAX_BATCH} treated alike."),
]


def caller() -> str:
    """The signal source of the tool call in progress: ``agent`` over MCP, ``ui`` for a person
    at the CLI or in the web UI (see :mod:`hermes.facekit.faces`). Signal-writing tools record it, so
    provenance survives the shared tool path."""
    return faces.source()


def _collecting(tools: dict[str, Tool]) -> Iterator[None]:
    """Collect the tools into ``tools`` plugin by plugin in registration order, pausing
    after each (one registered after the plugin manager's check — a test's fixture —
    raises, naming it; a plugin hermes ships is taken on trust, :func:`hermes.plugins.plugin_tools`)."""
    pm = get_plugin_manager()
    for impl in pm.hook.hermes_register_tools.get_hookimpls():
        try:
            tools.update((t.name, t) for t in plugin_tools(impl, tools, trusted=shipped(pm, impl.plugin_name)))
        except HermesError as exc:
            raise HermesError(f"plugin {impl.plugin_name!r}: {exc}") from None
        yield


def collect_tools(groups: set[str] | None = None) -> dict[str, Tool]:
    """Every registered tool by name, remembering the plugin it came from.

    The plugin manager has already left out a plugin whose tools break the contract
    (:func:`hermes.plugins.plugin_tools`); one registered later — a test's fixture —
    raises here, naming it, so its test fails rather than the tool going missing."""
    tools: dict[str, Tool] = {}
    for _ in _collecting(tools):
        pass
    return {name: t for name, t in tools.items() if groups is None or t.group in groups}


def find_tool(name: str) -> Tool | None:
    """``collect_tools().get(name)``, collecting plugin by plugin in registration order and
    stopping at the one that has it: a command imports the tools module of the tool it
    calls, not every plugin's (the plugin manager has checked that no two plugins' tools
    share a name, :func:`hermes.plugins.skip_broken_tools`)."""
    tools: dict[str, Tool] = {}
    for _ in _collecting(tools):
        if name in tools:
            return tools[name]
    return None


def collect_prompts(served: set[str] | frozenset[str]) -> list[Prompt]:
    """Every registered MCP prompt whose tools are all ``served``, by name. A plugin whose
    ``hermes_register_prompts`` raises, or returns something not a :class:`Prompt`, loses its
    prompts (a warning names it), not the server."""
    prompts: dict[str, Prompt] = {}
    for impl in get_plugin_manager().hook.hermes_register_prompts.get_hookimpls():
        try:
            offered = list(impl.function() or [])
            if not all(isinstance(p, Prompt) for p in offered):
                raise TypeError("hermes_register_prompts returned something not a hermes.Prompt")
        except Exception as exc:  # noqa: BLE001 - one plugin's prompts are lost, not the server
            log.warning("plugin %s: its prompts are left out: %s: %s", impl.plugin_name, type(exc).__name__, exc)
            continue
        prompts.update((p.name, p) for p in offered if set(p.uses) <= set(served))
    return [prompts[name] for name in sorted(prompts)]


def call_tool(db, tool: Tool, arguments: dict, *, face: str | None = None) -> dict:
    """Run a tool; a user mistake or an unexpected error becomes an ``ok: false`` result.

    ``arguments`` are checked strictly against the tool's model: one it does not take is
    refused, naming it (no face drops or adds any on the tool's behalf).

    :param face: who is calling — ``mcp`` (an agent), ``cli`` or ``web`` (a person); ``None``
        keeps the current face. It words the messages and sets the signal source, readable
        inside through :func:`caller` (:mod:`hermes.facekit.faces`).
    """
    return call_tool_status(db, tool, arguments, face=face)[1]


def call_tool_status(db, tool: Tool, arguments: dict, *, face: str | None = None) -> tuple[int, dict]:
    """:func:`call_tool`, with the HTTP status its answer maps to, for a route: 200 for what
    the tool returned (an ``ok: false`` of its own too), 404 when a name or id named nothing
    (:class:`~hermes.errors.NotFound`), 400 for another refused call, 500 when the server
    failed (``server_error``)."""
    with faces.speaking(face), collecting() as warnings:
        try:
            status, result = 200, tool.invoke(db, arguments)
        except (HermesError, OverflowError) as exc:
            result = tool.refusal(exc, arguments)
            status = 404 if isinstance(exc, NotFound) else 500 if result.get("server_error") else 400
        except Exception as exc:  # the server must survive any tool bug
            log.exception("tool %s (plugin %s) failed", tool.name, tool.plugin or "?")
            result = server_failure(
                f"{tool.name} failed unexpectedly ({_cause(exc)} in plugin "
                f"{tool.plugin or '?'!r}); {DETAILS}. It is a bug to report, not a mistake in the call",
                **tool.empty,
            )
            status = 500
    return status, _with_warnings(result, warnings)


#: Where the traceback of a tool's bug went: the log of the process that ran the tool, which
#: for the CLI is the terminal the person typed the command in (printed just above).
DETAILS = faces.Say(
    mcp="the details are in the server's log, not in this answer",
    cli="the traceback above has the details",
    web="the details are in the log of the terminal running `hermes web`",
)


def _cause(exc: Exception) -> str:
    """The failure as an answer names it. The exception's text is for a person at their own
    terminal only: it can hold paths, addresses or secrets (a plugin's own), and an MCP or web
    answer goes to an agent or a page, so those name its type alone."""
    if faces.face() != "cli" or not str(exc):
        return type(exc).__name__
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:197] + '...' if len(text) > 200 else text}"


def _with_warnings(result: dict, warnings: list[str]) -> dict:
    """A plugin that failed during the call (a scorer left out of the ranking) is named in
    the message: the caller reads the answer as complete otherwise."""
    if not warnings or not isinstance(result, dict):
        return result
    message = str(result.get("message", "")).rstrip()
    notes = " ".join(f"Warning: {w}." for w in warnings)
    return {**result, "message": f"{message} {notes}".strip()}
