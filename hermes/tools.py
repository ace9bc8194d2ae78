"""The result envelope, and the one place tools are collected and called.

A tool is a plain function ``fn(db, **arguments) -> dict``. Its result is the envelope
``{"ok": bool, "message": str, **payload}``; a failure keeps the success-path keys present
(empty) and its message says what went wrong and what to do instead. The tool record
itself, :class:`hermes.contract.Tool`, is part of the plugin contract.
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Callable

from . import faces
from .contract import Tool
from .errors import HermesError, InvalidInput
from .plugins import get_plugin_manager

log = logging.getLogger(__name__)


def caller() -> str:
    """The signal source of the tool call in progress: ``agent`` over MCP, ``ui`` for a person
    at the CLI or in the web UI (see :mod:`hermes.faces`). Signal-writing tools record it, so
    provenance survives the shared tool path."""
    return faces.source()


def ok(message: str, **payload) -> dict:
    return {"ok": True, "message": message, **payload}


def fail(message: str, **empty_payload) -> dict:
    return {"ok": False, "message": message, **empty_payload}


def nothing(message: str, **empty_payload) -> dict:
    """A valid call with nothing to show, where the tool's contract says ``ok: false`` (the
    digest of an empty week, seed 001). ``empty: true`` tells it apart from a mistake: the
    CLI exits 0 on it, as on every empty answer."""
    return {"ok": False, "message": message, "empty": True, **empty_payload}


def int_arg(name: str, value, low: int, high: int | None = None, hint: str = "") -> int:
    """``value`` as an int in ``[low, high]`` (an integral float such as ``3.0`` is accepted:
    some clients send every number as a float), else :class:`InvalidInput` naming the range."""
    bound = f"between {low} and {high}" if high is not None else f">= {low}"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be a whole number {bound}, got {value!r}")
    if value < low or (high is not None and value > high):
        raise InvalidInput(f"{name} must be {bound}, got {value}{hint}")
    return value


def envelope(empty_payloads: dict[str, dict]):
    """Decorator for tool functions: a :class:`HermesError` they raise becomes
    ``fail(message, **empty_payloads[name])``, so a direct call (CLI, web, scripts, tests)
    gets the same envelope as a call through :func:`call_tool`."""

    def decorate(fn: Callable[..., dict]) -> Callable[..., dict]:
        empty = empty_payloads[fn.__name__]

        @functools.wraps(fn)
        def wrapper(db, *args, **kwargs):
            try:
                return fn(db, *args, **kwargs)
            except HermesError as exc:
                return fail(str(exc), **copy.deepcopy(empty))

        return wrapper

    return decorate


def collect_tools(groups: set[str] | None = None) -> dict[str, Tool]:
    """Every registered tool by name, remembering the plugin it came from."""
    pm = get_plugin_manager()
    tools: dict[str, Tool] = {}
    for impl in pm.hook.hermes_register_tools.get_hookimpls():
        for tool in impl.function() or []:
            if groups is not None and tool.group not in groups:
                continue
            if tool.name in tools:
                raise HermesError(
                    f"tool {tool.name!r} is registered twice "
                    f"({tools[tool.name].plugin} and {impl.plugin_name})"
                )
            tools[tool.name] = Tool(**{**tool.__dict__, "plugin": impl.plugin_name})
    return tools


def call_tool(db, tool: Tool, arguments: dict, *, face: str | None = None) -> dict:
    """Run a tool; a user mistake or an unexpected error becomes an ``ok: false`` result.

    :param face: who is calling — ``mcp`` (an agent), ``cli`` or ``web`` (a person); ``None``
        keeps the current face. It words the messages and sets the signal source
        (:mod:`hermes.faces`).
    """
    token = faces.enter(face) if face is not None else None
    try:
        return tool.fn(db, **arguments)
    except HermesError as exc:
        return fail(str(exc), **tool.empty)
    except TypeError as exc:
        return fail(f"bad arguments for {tool.name}: {exc}", **tool.empty)
    except OverflowError:
        # An id like 2**64 passes a schema with only a lower bound, then cannot be bound as
        # an SQLite integer: no such row can exist, so it is the caller's mistake.
        return fail(f"a number given to {tool.name} is too large: ids and counts must be "
                    f"below {2 ** 63:,}", **tool.empty)
    except Exception as exc:  # the server must survive any tool bug
        log.exception("tool %s failed", tool.name)
        return fail(f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}", **tool.empty)
    finally:
        if token is not None:
            faces.leave(token)
