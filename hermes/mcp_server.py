"""The MCP server: every tool collected from ``hermes_register_tools``, nothing listed by hand.

Each tool function's ``db`` parameter is replaced by a connection opened per call; its
other type hints (``Annotated[..., Field(...)]``) are the input schema and are checked by
hermes itself, strictly (:mod:`hermes.arguments`), not by the SDK; the tool's result model is
its output schema, and its read-only / destructive / idempotent / open-world flags its
annotations. Results are the hermes envelope (``ok``, ``message``, payload) as structured
content and as compact JSON text (:func:`answer_text`); a refused or failed call (``ok:
false``, other than "nothing to show") also sets MCP's ``isError``, so a client that checks
only that still sees it.
Importing this module does not import torch: ``initialize`` and ``tools/list`` are answered
before any model loads.

The server is the SDK's public low-level one (:class:`mcp.server.lowlevel.Server`): hermes
answers ``tools/list``, ``tools/call``, ``prompts/list`` and ``prompts/get`` itself
(:class:`Handlers`) and the SDK speaks the protocol (the handshake, ping, both protocol
eras, the transports). Transports: stdio (default) or streamable HTTP (:func:`http_app`),
optionally behind a bearer token.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import hmac
import inspect
import json
import logging
import os
import signal
import sys
import threading
import typing
from collections.abc import Callable
from importlib.metadata import version as dist_version
from pathlib import Path

import platformdirs
import pydantic
import pydantic_core

if typing.TYPE_CHECKING:  # annotations only: the SDK is imported by _load_sdk
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolRequestParams, GetPromptRequestParams
from . import __version__, config, net
from . import mcp_unreadable as unreadable
from .contract import NAME_MAX, UNTRUSTED, Prompt, Tool, server_failure
from .errors import HermesError
from .facekit import faces
from .files import write_atomic
from .net import is_loopback
from .plugins import get_plugin_manager, shipped
from .ranking.threads import start_blas_pool
from .tools import call_tool, collect_prompts, collect_tools, find_tool

log = logging.getLogger(__name__)


def _load_sdk() -> None:
    """Import the MCP SDK's names this module uses (about two thirds of a start-up's CPU
    time): on first use, not when the module is imported, so that a start whose tool listing
    is missing builds it in a child process while this one loads the SDK
    (:func:`cached_listings`)."""
    global anyio, Server, MCPError, INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, GetPromptResult
    global ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult, ListToolsResult
    global PromptArgument, PromptMessage, TextContent, ToolAnnotations, MCPPrompt, MCPTool
    if "MCPTool" in globals():
        return
    import anyio
    import anyio.to_thread
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError
    from mcp.types import (
        INTERNAL_ERROR,
        INVALID_PARAMS,
        CallToolResult,
        GetPromptResult,
        ListPromptsResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        ListToolsResult,
        PromptArgument,
        PromptMessage,
        TextContent,
        ToolAnnotations,
    )
    from mcp.types import Prompt as MCPPrompt
    from mcp.types import Tool as MCPTool


#: What the instructions say, said once for every tool rather than in each description: what
#: a persona argument and an item id are, the dry run of a destructive tool, and that feed
#: text is third parties' (the output schemas mark each field that carries it).
INSTRUCTIONS = (
    "hermes ranks feed items (papers, posts, episodes) for a persona and learns "
    "from feedback. `user` is a persona's name{named}; an "
    "item_id is an id from any list or search answer. Without confirm=true a "
    "deleting tool only says what it would delete." + UNTRUSTED + " Output schemas mark such fields 'third-party text'."
    # the CLI and web show TeX as Unicode; an answer keeps the feed's own text (a trial read
    # "Koll\'ar" in JSON beside "Kollár" on the page)
    " Titles and summaries are as the feed wrote them, TeX included ($T_c$, Koll\\'ar for "
    "Kollár): render it for a person."
)
#: The tools that call their persona parameter ``name`` (the seed's: those that create,
#: change or delete a persona; ``*`` stands for any start), said where one is served; every
#: other tool's is ``user``. A test checks this against every tool's arguments: the words
#: were "`name` in persona tools", yet profile_status and search_feed of that group take
#: ``user``. (Not said: most of them take ``user`` too, but create_persona does not.)
NAMED_PERSONA = ("*_persona", "reset_feedback", "import_library")
NAMED_WORDS = " (the *_persona tools, reset_feedback and import_library call it `name`)"


def names_persona(tool: str) -> bool:
    """Whether ``tool``'s persona parameter is ``name`` (:data:`NAMED_PERSONA`)."""
    return any(fnmatch.fnmatchcase(tool, pattern) for pattern in NAMED_PERSONA)


#: Where to start, each said only when its tool is served (``--tools feeds`` serves no
#: list_users: the agent must not be sent to it).
START = (
    ("list_users", "list_users names the personas"),
    ("list_feed", "list_feed is a persona's ranked feed"),
    ("record_feedback", "record_feedback teaches it"),
)
ASK_PERSONA = "ask the person which persona (a name) to use"


def instructions(db_path: str | None, served: set[str] | frozenset[str] = frozenset()) -> str:
    """The server instructions for the tools ``served``, naming the database: a host that
    does not pass HERMES_HOME or HERMES_DB silently gets the default one, and the agent (and
    its person) can see which. A persona's name comes from ``list_users`` when it is served,
    else from the person."""
    steps = [words for name, words in START if name in served]
    if "list_users" not in served:
        steps.insert(0, ASK_PERSONA)
    start = f" Start: {'; '.join(steps)}." if steps else ""
    named = NAMED_WORDS if any(names_persona(tool) for tool in served) else ""
    return f"{INSTRUCTIONS.format(named=named)}{start} Database: {config.db_path(db_path)}."


class _Database:
    """Opens a connection per tool call; migrations run on the first open only (a
    connection per call keeps concurrent calls on worker threads independent)."""

    def __init__(self, path: str | None):
        self.path = path
        self._migrated = False
        self._lock = threading.Lock()

    def open(self):
        # Here, not at the top: sqlite-utils (and numpy, which it imports) load at the first
        # call, not before tools/list.
        from .storage.db import get_db

        with self._lock:
            if not self._migrated:
                db = get_db(self.path)
                self._migrated = True
                return db
        return get_db(self.path, migrate=False)


@functools.cache
def listing(tool: Tool) -> dict:
    """What ``tools/list`` says of ``tool`` (JSON: a listing kept between starts is this,
    :func:`cached_listings`): name, title, description, group, input and output schema, hints."""
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "group": tool.group,
        "input": listed_input(tool.input_schema()),
        "output": tool.output_schema(),
        "hints": {
            "read_only": tool.read_only,
            "destructive": tool.destructive,
            "idempotent": tool.idempotent,
            "open_world": tool.open_world,
        },
    }


def listed_input(schema: dict) -> dict:
    """The input schema as ``tools/list`` shows it: without ``additionalProperties: false``,
    which a persona parameter's alias makes untrue (``reset_feedback`` takes ``user`` for
    ``name``) and which cost 29 characters a tool; an unknown parameter is still refused,
    by hermes, naming the parameters there are."""
    return {k: v for k, v in schema.items() if k != "additionalProperties"}


def answer_text(result: dict) -> str:
    """The text block of a tool result: the structured content serialized as JSON, as the MCP
    spec asks of a tool that returns structured content (for clients that read only text),
    but compact — no indentation, no spaces after separators, non-ASCII as is. An agent's
    host often puts both copies in its context; the SDK's indent-2 text was about 1.5x the
    size of the structured copy (a 20-item list_feed: 37 kB of text beside 27 kB)."""
    return pydantic_core.to_json(result, fallback=str).decode()


def _annotations(*, read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> ToolAnnotations:
    """A tool's hints, leaving out what the MCP defaults already say (readOnly and idempotent
    default to false) and what the specification calls meaningful only for a tool that
    writes (destructive, idempotent: a read-only tool is both harmless and repeatable)."""
    _load_sdk()
    return ToolAnnotations(
        read_only_hint=read_only or None,
        destructive_hint=None if read_only else destructive,
        idempotent_hint=None if read_only else idempotent or None,
        open_world_hint=open_world,
    )


def _listed_tool(entry: dict) -> MCPTool:
    """The ``tools/list`` entry of the tool ``entry`` (:func:`listing`) describes."""
    _load_sdk()
    return MCPTool(
        name=entry["name"],
        title=entry["title"],
        description=entry["description"],
        input_schema=entry["input"],
        output_schema=entry["output"],
        annotations=_annotations(**entry["hints"]),
    )


def prompt_arguments(render: Callable[..., str]) -> list[PromptArgument]:
    """A prompt's arguments: the parameters of its ``render``, required when they have no
    default, described by an ``Annotated[str, Field(description=...)]`` hint if there is one."""
    _load_sdk()
    try:
        hints = typing.get_type_hints(render, include_extras=True)
    except Exception:  # noqa: BLE001 - a hint that cannot be resolved describes nothing
        hints = {}
    arguments = []
    for parameter in inspect.signature(render).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        said = [getattr(m, "description", None) for m in getattr(hints.get(parameter.name), "__metadata__", ())]
        arguments.append(
            PromptArgument(
                name=parameter.name,
                description=next((s for s in said if isinstance(s, str)), None),
                required=parameter.default is parameter.empty,
            )
        )
    return arguments


class Handlers:
    """What hermes answers on the low-level server: ``tools/list`` and ``tools/call`` from the
    tools ``listed`` (:func:`listing`), each called through ``resolve[name]()`` (a listing
    kept between starts collects a tool when it is first called), and ``prompts/list`` and
    ``prompts/get`` from the ``prompts`` whose tools are served."""

    def __init__(
        self,
        listed: list[dict],
        resolve: dict[str, Callable[[], Tool]],
        prompts: list[Prompt],
        database: _Database,
        unserved: frozenset[str] = frozenset(),
    ):
        _load_sdk()
        self._inputs = {entry["name"]: entry["input"] for entry in listed}
        #: the tools of the groups ``--tools`` left out: advice naming one speaks of the CLI
        self._unserved = unserved
        self._tools = [_listed_tool(entry) for entry in listed]
        self._resolve = resolve
        self._prompts = {prompt.name: prompt for prompt in prompts}
        self._prompt_arguments = {prompt.name: prompt_arguments(prompt.render) for prompt in prompts}
        self._database = database

    def input_schema(self, name: str) -> dict | None:
        """The input schema of the tool ``name`` (the SDK checks ``Mcp-Param-*`` headers of the
        2026-07-28 HTTP transport against it), ``None`` for a tool not served."""
        return self._inputs.get(name)

    async def list_tools(self, ctx, params) -> ListToolsResult:
        return ListToolsResult(tools=list(self._tools))

    async def call_tool(self, ctx, params: CallToolRequestParams) -> CallToolResult:
        """A call of a tool not served is the JSON-RPC error ``-32602`` (invalid params), as
        the 2025-11-25 specification asks (a tool result with ``isError`` reads as a tool that
        ran and failed), naming the tools served so the agent can correct the call. The
        arguments go to hermes unchecked: it checks them itself (:meth:`Tool.run`, strict), so
        that a bad one comes back in the envelope with a fix-it message, as from any face."""
        if params.name not in self._resolve:
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown tool: {str(params.name)[:100]!r}. The tools are: {', '.join(sorted(self._resolve))}.",
            )
        start_blas_pool()  # deferred by `hermes serve` until now: tools/list never needs it
        return await anyio.to_thread.run_sync(self._call, params.name, dict(params.arguments or {}))

    def _call(self, name: str, arguments: dict) -> CallToolResult:
        try:
            result = self._run(name, arguments)
        except HermesError as exc:  # the listing named a tool that no plugin provides now
            return _failed(str(exc))
        except Exception:  # answered whatever fails around the tool (call_tool catches its own)
            log.exception("tool %s could not be called", name)
            return _failed(f"Error executing tool {name}; the details are in the server's log")
        # A refusal or failure is a tool execution error in MCP's terms (isError), with the
        # envelope still as structured content; "nothing to show" is a fine call, not one.
        refused = not result.get("ok") and not result.get("nothing_to_show")
        return CallToolResult(
            content=[TextContent(type="text", text=answer_text(result))], structured_content=result, is_error=refused
        )

    def _run(self, name: str, arguments: dict) -> dict:
        tool = self._resolve[name]()
        try:
            db = self._database.open()
        except HermesError as exc:  # the agent cannot fix this: a server-side failure
            return server_failure(f"cannot open the hermes database: {exc}", **tool.empty)
        try:
            with faces.serving_without(self._unserved):
                return call_tool(db, tool, arguments, face="mcp")
        finally:
            db.conn.close()

    async def list_prompts(self, ctx, params) -> ListPromptsResult:
        return ListPromptsResult(
            prompts=[
                MCPPrompt(
                    name=p.name, title=p.title, description=p.description, arguments=self._prompt_arguments[p.name]
                )
                for p in self._prompts.values()
            ]
        )

    async def get_prompt(self, ctx, params: GetPromptRequestParams) -> GetPromptResult:
        """The prompt's text as its user message. A prompt not served, an argument it does not
        take or one it needs left out is the protocol's invalid-params error, naming what
        there is (the SDK's own answer was an error with code 0)."""
        prompt = self._prompts.get(params.name)
        if prompt is None:
            served = ", ".join(self._prompts) or "none"
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {str(params.name)[:100]!r}. The prompts are: {served}.")
        arguments = dict(params.arguments or {})
        expected = self._prompt_arguments[prompt.name]
        names = ", ".join(a.name for a in expected) or "none"
        unknown = sorted(set(arguments) - {a.name for a in expected})
        missing = [a.name for a in expected if a.required and a.name not in arguments]
        if unknown:
            raise MCPError(
                INVALID_PARAMS,
                f"prompt {prompt.name} has no argument {unknown[0][:100]!r}; its arguments are: {names}.",
            )
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"prompt {prompt.name} needs {', '.join(missing)}; its arguments are: {names}."
            )
        start_blas_pool()
        text = await anyio.to_thread.run_sync(self._render, prompt, arguments)
        return GetPromptResult(
            description=prompt.description,
            messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))],
        )

    def _render(self, prompt: Prompt, arguments: dict) -> str:
        """``prompt.render(**arguments)``; its refusal of an argument (a :class:`HermesError`)
        reaches the client as the invalid-params error with hermes's message, any other
        failure as an internal error (the details in the log). A ``user`` argument names a
        persona: an unknown one is refused here, as a tool refuses it, rather than in the
        middle of the session the prompt starts, and the prompt names the persona as it is
        stored ("bea" is "Bea")."""
        try:
            if isinstance(arguments.get("user"), str):
                arguments["user"] = self._persona_name(arguments["user"][:NAME_MAX])
            text = prompt.render(**arguments)
        except HermesError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        except Exception:
            log.exception("prompt %s failed", prompt.name)
            raise MCPError(INTERNAL_ERROR, f"Error rendering prompt {prompt.name}") from None
        return text if isinstance(text, str) else str(text)

    async def list_resources(self, ctx, params) -> ListResourcesResult:
        """None: hermes serves tools and prompts. Kept as the SDK's MCPServer answered (an empty
        list), for a host that asks whatever the capabilities say."""
        return ListResourcesResult(resources=[])

    async def list_resource_templates(self, ctx, params) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=[])

    def _persona_name(self, name: str) -> str:
        # Here, not at the top: the records (sqlite-utils) load at a prompt's first use.
        from .storage.records import require_user

        db = self._database.open()
        try:
            return require_user(db, name)["name"]
        finally:
            db.conn.close()


def _failed(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(
    db_path: str | None = None, groups: set[str] | None = None, *, listed: list[dict] | None = None
) -> Server:
    """An MCP server exposing every collected tool (or only those of ``groups``). With
    ``listed`` (:func:`cached_listings`) the tools are served as listed there and each is
    collected when it is first called (:func:`hermes.tools.find_tool`)."""
    _load_sdk()
    if listed is None:
        every = collect_tools()
        collected = {name: t for name, t in every.items() if groups is None or t.group in groups}
        entries = [listing(tool) for tool in collected.values()]
        resolve = {name: (lambda tool=tool: tool) for name, tool in collected.items()}
    else:
        every = {entry["name"] for entry in listed}
        entries = [entry for entry in listed if groups is None or entry["group"] in groups]
        resolve = {entry["name"]: _finder(entry["name"]) for entry in entries}
    served = set(resolve)
    handlers = Handlers(entries, resolve, collect_prompts(served), _Database(db_path), frozenset(set(every) - served))
    return Server(
        "hermes",
        version=__version__,
        instructions=instructions(db_path, served),
        get_tool_input_schema=handlers.input_schema,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_prompts=handlers.list_prompts,
        on_get_prompt=handlers.get_prompt,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_resource_templates,
    )


def _finder(name: str):
    """``find()``: the tool ``name`` (collected on the first call, then kept)."""
    found: list[Tool] = []

    def find() -> Tool:
        if not found:
            tool = find_tool(name)
            if tool is None:  # the listing said otherwise: the plugins changed under it
                raise HermesError(f"the tool {name} is no longer provided by any plugin; restart the server")
            found.append(tool)
        return found[0]

    return find


# --- the listing kept between starts ----------------------------------------------------------
#
# `tools/list` needs every tool's schemas, and so every plugin's tools module with its pydantic
# models (about 0.4 CPU s of a start-up whose floor, the SDK itself, is about 1 s). They are the
# same from one start to the next while no source file, no plugin and no library version
# changes: the listing is kept in the user cache folder under a key made of exactly that, and a
# start that finds it serves from it, collecting each tool when it is first called. A start
# that finds none (the first after a change) has it built by a forked child while it imports
# the SDK itself (:func:`cached_listings`), then serves from it the same way.


def listing_key() -> str | None:
    """The key of the listing the registered plugins give: hermes's, pydantic's and the MCP
    SDK's versions, Python's, and the path, size and modification time of every source file
    of hermes and of each plugin registered; ``None`` when a plugin hermes does not ship
    registers tools (its tools are checked at start-up, :func:`hermes.plugins.skip_broken_tools`,
    which needs them collected)."""
    pm = get_plugin_manager()
    if any(not shipped(pm, impl.plugin_name) for impl in pm.hook.hermes_register_tools.get_hookimpls()):
        return None
    roots = {os.path.dirname(os.path.abspath(__file__))}
    names = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda pair: pair[0]):
        origin = getattr(plugin, "__file__", None)
        names.append(f"{name}={getattr(plugin, '__name__', type(plugin).__name__)}")
        if origin:
            roots.add(os.path.dirname(os.path.abspath(origin)))
    digest = hashlib.sha256(
        "\n".join([__version__, pydantic.VERSION, dist_version("mcp"), sys.version, *names]).encode()
    )
    for root in sorted(roots):
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            for file in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(folder, file)
                stat = os.stat(path)
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def _listing_path(key: str) -> Path:
    return Path(platformdirs.user_cache_dir("hermes")) / "tools-list" / f"{key}.json"


def cached_listings(*, build_missing: bool = True) -> list[dict] | None:
    """The tools' listings kept by an earlier start with the same :func:`listing_key`, or
    ``None`` (a plugin that needs its tools checked, or none kept and ``build_missing``
    false or the listing could not be built aside).

    ``build_missing``: when none is kept (the first start after a change), it is built in a
    child process, which also keeps it, while this one imports the MCP SDK (the child's
    collection and schemas ran after the SDK import, one after the other; on two cores the
    two overlap); this process then serves from it as from a kept one, collecting each tool
    when it is first called. Where there is no ``fork``, or the child fails, ``None``: the
    caller collects the tools itself, and any error is its own."""
    key = listing_key()
    if key is None:
        return None
    try:
        with open(_listing_path(key), encoding="utf-8") as handle:
            listed = json.load(handle)
    except (OSError, ValueError):
        listed = None
    if not isinstance(listed, list) and build_missing:
        listed = _built_aside(key)
    return listed if isinstance(listed, list) else None


def _built_aside(key: str) -> list[dict] | None:
    """Every tool's listing, built and kept (:func:`_keep`) by a forked child while this
    process imports the SDK (:func:`_load_sdk`), sent back through a pipe; ``None`` if it
    cannot be."""
    if not hasattr(os, "fork") or "MCPTool" in globals():
        return None  # no fork (Windows), or nothing left to overlap with
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read_end)
            os.dup2(2, 1)  # its stdout is the MCP client's stream: nothing may reach it
            text = _keep(key, collect_tools())
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(text.encode())
            status = 0
        finally:  # a failure says nothing here: the parent collects the tools itself, and says why
            os._exit(status)
    os.close(write_end)
    try:
        _load_sdk()
    finally:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    try:
        listed = json.loads(data)
    except ValueError:
        return None
    return listed if isinstance(listed, list) else None


def keep_listings(tools: dict[str, Tool]) -> None:
    """Keep every tool's listing for the next start (:func:`cached_listings`); a cache folder
    that cannot be written costs the next start its collection, nothing else."""
    key = listing_key()
    if key is not None:
        _keep(key, tools)


def _keep(key: str, tools: dict[str, Tool]) -> str:
    """Write the listing of ``tools`` as the one of ``key``, replacing the listings of other
    keys; returns its text (what the forked child sends back)."""
    text = json.dumps([listing(tool) for tool in tools.values()])
    path = _listing_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob("*.json"):
            if old != path:
                old.unlink(missing_ok=True)
        write_atomic(path, text.encode())
    except OSError as exc:
        log.debug("the tool listing was not kept: %s", exc)
    return text


def _log_to_stderr() -> None:
    """Log at INFO on stderr while serving, as the SDK's MCPServer set up when it was made
    (stdout is the stdio protocol's), unless the host program has set logging up already."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


class BearerTokenMiddleware:
    """Refuse every HTTP request without ``Authorization: Bearer <token>`` (401).

    Defence in depth for ``--transport http``: even on loopback, any local process or a web
    page that reaches 127.0.0.1 could otherwise call the tools. The comparison is constant
    time so the token cannot be guessed byte by byte from response timings.
    """

    def __init__(self, app, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and not self._authorised(scope):
            from starlette.responses import JSONResponse

            response = JSONResponse(
                {"error": "unauthorized", "message": "send the hermes MCP token as 'Authorization: Bearer <token>'"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="hermes"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope) -> bool:
        for name, value in scope.get("headers") or []:
            if name == b"authorization":
                scheme, _, credential = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), self.token)
        return False


#: a session with no request for this long is closed (its client must initialize again)
SESSION_IDLE = 600.0
#: at most this many sessions at once; past it ``initialize`` answers 503 until one ends
MAX_SESSIONS = 64


def http_app(server: Server, *, host: str = "127.0.0.1", port: int, token: str | None = None):
    """The streamable-HTTP ASGI app (endpoint ``/mcp``), behind a bearer token if given.

    Sessions are bounded: idle ones close after :data:`SESSION_IDLE`, and at most
    :data:`MAX_SESSIONS` are open (1,000 ``initialize`` calls kept 41 MB for good). On a
    loopback bind only this server's own ``Host`` and ``Origin`` are accepted, port included:
    a web page that points a DNS name at 127.0.0.1 (DNS rebinding), or one served by another
    local server on another port (any ``http://127.0.0.1:*`` was accepted), cannot reach the
    tools. Clients that are not browsers send no ``Origin``.
    """
    _load_sdk()
    security = None
    if is_loopback(host):
        from mcp.server.transport_security import TransportSecuritySettings

        name = host.strip("[]")
        own = f"[{name}]" if ":" in name else name
        hosts = sorted({own, "localhost"})
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{h}:{port}" for h in hosts],
            allowed_origins=[f"http://{h}:{port}" for h in hosts],
        )
    app = server.streamable_http_app(
        host=host, transport_security=security, session_idle_timeout=SESSION_IDLE, max_sessions=MAX_SESSIONS
    )
    return BearerTokenMiddleware(app, token) if token else app


def run_http(server: Server, *, sock, host: str, token: str | None = None) -> None:
    """Serve streamable HTTP on ``sock`` (bound beforehand by :func:`hermes.net.bind`, so a
    busy port is reported before anything is announced). Ctrl-C stops uvicorn."""
    port = sock.getsockname()[1]
    _log_to_stderr()
    net.serve_asgi(http_app(server, host=host, port=port, token=token), sock)


# --- stdio -----------------------------------------------------------------------------------


def run_stdio(server: Server) -> None:
    """Serve over stdin/stdout until the client closes stdin or the person presses Ctrl-C.

    The stdio transport reads stdin on a worker thread that no signal interrupts, so after
    Ctrl-C a clean shutdown would wait for an input line that never comes. The first Ctrl-C
    therefore ends the process at once: every write is its own SQLite transaction, so an
    interrupted tool call leaves nothing half-written."""
    _load_sdk()

    def stop(signum, frame):
        sys.stderr.write("\nhermes MCP server stopped\n")
        sys.stderr.flush()
        os._exit(128 + signum)

    _log_to_stderr()
    previous = signal.signal(signal.SIGINT, stop)
    try:
        anyio.run(_serve_stdio, server)
    finally:
        signal.signal(signal.SIGINT, previous)


async def _serve_stdio(server: Server) -> None:
    """Serve over the SDK's stdio transport (``mcp.server.stdio.stdio_server``), answering a
    line that is not a JSON-RPC message: the transport hands such a line to the server as an
    exception item, which the SDK logs at debug level and drops, so the client got no answer
    and waited for its own timeout. The read stream is wrapped so that each one is answered
    at once (:class:`~hermes.mcp_unreadable.AnswerUnreadable`) and the end of input waits for the
    answers owed (:class:`~hermes.mcp_unreadable.AnswersOwed`)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        owed = unreadable.AnswersOwed(write_stream)
        reading = unreadable.AnswerUnreadable(read_stream, owed)
        await server.run(reading, owed, server.create_initialization_options())
