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

Transports: stdio (default) or streamable HTTP (:func:`http_app`), optionally behind a
bearer token.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
import signal
import sys
import threading
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Any

import platformdirs
import pydantic
import pydantic_core
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Prompt as SDKPrompt
from mcp.server.mcpserver.tools import Tool as MCPServerTool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from . import __version__, config, net
from . import mcp_unreadable as unreadable
from .contract import NAME_MAX, UNTRUSTED, Tool, server_failure
from .errors import HermesError
from .net import is_loopback
from .plugins import get_plugin_manager, shipped
from .storage.db import get_db
from .storage.records import require_user
from .tools import call_tool, collect_prompts, collect_tools, find_tool

log = logging.getLogger(__name__)

#: What the instructions say, said once for every tool rather than in each description: what
#: a persona argument and an item id are, the dry run of a destructive tool, and that feed
#: text is third parties' (the output schemas mark each field that carries it).
INSTRUCTIONS = (
    "hermes ranks feed items (papers, posts, episodes) for a persona and learns "
    "from feedback. `user` (`name` in persona tools) is a persona's name; an "
    "item_id is an id from any list or search answer. Without confirm=true a "
    "deleting tool only says what it would delete." + UNTRUSTED + " Output schemas mark such fields 'third-party text'."
)
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
    return f"{INSTRUCTIONS}{start} Database: {config.db_path(db_path)}."


class _Database:
    """Opens a connection per tool call; migrations run on the first open only (a
    connection per call keeps concurrent calls on worker threads independent)."""

    def __init__(self, path: str | None):
        self.path = path
        self._migrated = False
        self._lock = threading.Lock()

    def open(self):
        with self._lock:
            if not self._migrated:
                db = get_db(self.path)
                self._migrated = True
                return db
        return get_db(self.path, migrate=False)


class _AnyArguments(ArgModelBase):
    """Hands the raw arguments through: hermes checks them itself (:meth:`Tool.run`, strict),
    so that a bad argument comes back in the envelope with a fix-it message, as from any face."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _served(tool: Tool, database: _Database) -> MCPServerTool:
    """The SDK's record of ``tool``: our schemas as advertised, a connection opened per call."""
    return _record(listing(tool), lambda: tool, database)


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


def _record(listed: dict, resolve, database: _Database) -> MCPServerTool:
    """The SDK's record of the tool ``listed`` describes; ``resolve()`` gives the tool itself
    when it is first called (a listing kept between starts imports no tools module before)."""

    def call(**arguments) -> CallToolResult:
        tool = resolve()
        try:
            db = database.open()
        except HermesError as exc:  # the agent cannot fix this: a server-side failure
            result = server_failure(f"cannot open the hermes database: {exc}", **tool.empty)
        else:
            try:
                result = call_tool(db, tool, arguments, face="mcp")
            finally:
                db.conn.close()
        text = answer_text(result)
        # A refusal or failure is a tool execution error in MCP's terms (isError), with the
        # envelope still as structured content; "nothing to show" is a fine call, not one.
        refused = not result.get("ok") and not result.get("nothing_to_show")
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=result, is_error=refused
        )

    return MCPServerTool(
        fn=call,
        name=listed["name"],
        title=listed["title"],
        description=listed["description"],
        parameters=listed["input"],
        fn_metadata=FuncMetadata(arg_model=_AnyArguments, output_schema=listed["output"]),
        is_async=False,
        annotations=_annotations(**listed["hints"]),
    )


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
    return ToolAnnotations(
        read_only_hint=read_only or None,
        destructive_hint=None if read_only else destructive,
        idempotent_hint=None if read_only else idempotent or None,
        open_world_hint=open_world,
    )


class HermesServer(MCPServer):
    """The SDK's server, answering a call of a tool it does not serve with the JSON-RPC
    error ``-32602`` (invalid params), as the 2025-11-25 specification asks: the SDK answered a
    tool result (``isError``), which reads as a tool that ran and failed. The message names
    the tools served, so the agent can correct the call."""

    async def call_tool(self, name, arguments, context=None):
        served = [t.name for t in await self.list_tools()]
        if name not in served:
            raise MCPError(
                INVALID_PARAMS, f"Unknown tool: {str(name)[:100]!r}. The tools are: {', '.join(sorted(served))}."
            )
        return await super().call_tool(name, arguments, context)


def build_server(
    db_path: str | None = None, groups: set[str] | None = None, *, listed: list[dict] | None = None
) -> MCPServer:
    """An MCP server exposing every collected tool (or only those of ``groups``). With
    ``listed`` (:func:`cached_listings`) the tools are served as listed there and each is
    collected when it is first called (:func:`hermes.tools.find_tool`)."""
    database = _Database(db_path)
    if listed is None:
        collected = collect_tools(groups)
        tools = [_served(tool, database) for tool in collected.values()]
        served = set(collected)
    else:
        chosen = [entry for entry in listed if groups is None or entry["group"] in groups]
        tools = [_record(entry, _finder(entry["name"]), database) for entry in chosen]
        served = {entry["name"] for entry in chosen}
    server = HermesServer("hermes", version=__version__, instructions=instructions(db_path, served), tools=tools)
    for prompt in collect_prompts(served):
        server.add_prompt(
            SDKPrompt.from_function(
                _refusing(prompt.render, database), name=prompt.name, title=prompt.title, description=prompt.description
            )
        )
    return server


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
# start that finds it serves from it, collecting each tool when it is first called.


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


def cached_listings() -> list[dict] | None:
    """The tools' listings kept by an earlier start with the same :func:`listing_key`, or
    ``None`` (none kept, unreadable, or a plugin that needs its tools checked)."""
    key = listing_key()
    if key is None:
        return None
    try:
        with open(_listing_path(key), encoding="utf-8") as handle:
            listed = json.load(handle)
    except (OSError, ValueError):
        return None
    return listed if isinstance(listed, list) else None


def keep_listings(tools: dict[str, Tool]) -> None:
    """Keep every tool's listing for the next start (:func:`cached_listings`); a cache folder
    that cannot be written costs the next start its collection, nothing else."""
    key = listing_key()
    if key is None:
        return
    path = _listing_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob("*.json"):
            if old != path:
                old.unlink(missing_ok=True)
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps([listing(tool) for tool in tools.values()]), encoding="utf-8")
        os.replace(scratch, path)
    except OSError as exc:
        log.debug("the tool listing was not kept: %s", exc)


def _refusing(render, database: _Database):
    """``render`` whose refusal of an argument (a :class:`HermesError`) reaches the client as
    the protocol's invalid-params error with hermes's message; the SDK reports any other
    exception as "Internal server error". A ``user`` argument names a persona: an unknown one
    is refused here, as a tool refuses it, rather than in the middle of the session the
    prompt starts, and the prompt names the persona as it is stored ("bea" is "Bea")."""

    @functools.wraps(render)
    def refusing(*args, **kwargs):
        try:
            if isinstance(kwargs.get("user"), str):
                kwargs["user"] = _persona_name(database, kwargs["user"][:NAME_MAX])
            return render(*args, **kwargs)
        except HermesError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None

    return refusing


def _persona_name(database: _Database, name: str) -> str:
    db = database.open()
    try:
        return require_user(db, name)["name"]
    finally:
        db.conn.close()


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


def http_app(server: MCPServer, *, host: str = "127.0.0.1", port: int, token: str | None = None):
    """The streamable-HTTP ASGI app (endpoint ``/mcp``), behind a bearer token if given.

    Sessions are bounded: idle ones close after :data:`SESSION_IDLE`, and at most
    :data:`MAX_SESSIONS` are open (1,000 ``initialize`` calls kept 41 MB for good). On a
    loopback bind only this server's own ``Host`` and ``Origin`` are accepted, port included:
    a web page that points a DNS name at 127.0.0.1 (DNS rebinding), or one served by another
    local server on another port (any ``http://127.0.0.1:*`` was accepted), cannot reach the
    tools. Clients that are not browsers send no ``Origin``.
    """
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


def run_http(server: MCPServer, *, sock, host: str, token: str | None = None) -> None:
    """Serve streamable HTTP on ``sock`` (bound beforehand by :func:`hermes.net.bind`, so a
    busy port is reported before anything is announced). Ctrl-C stops uvicorn."""
    port = sock.getsockname()[1]
    net.serve_asgi(http_app(server, host=host, port=port, token=token), sock)


# --- stdio -----------------------------------------------------------------------------------


def run_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout until the client closes stdin or the person presses Ctrl-C.

    The stdio transport reads stdin on a worker thread that no signal interrupts, so after
    Ctrl-C a clean shutdown would wait for an input line that never comes. The first Ctrl-C
    therefore ends the process at once: every write is its own SQLite transaction, so an
    interrupted tool call leaves nothing half-written."""

    def stop(signum, frame):
        sys.stderr.write("\nhermes MCP server stopped\n")
        sys.stderr.flush()
        os._exit(128 + signum)

    previous = signal.signal(signal.SIGINT, stop)
    try:
        _run_stdio(server)
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout, answering a line that is not a JSON-RPC message.

    The SDK's stdio transport (``mcp.server.stdio.stdio_server``) hands such a line to the
    server as an exception item, which the dispatcher logs at debug level and drops: the
    client gets no answer and waits for its own timeout. Here the read stream is wrapped so
    that each one is answered at once (:class:`AnswerUnreadable`). The SDK exposes the
    stdio streams and the low-level server's ``run`` publicly, but reaches that server only
    through the private ``_lowlevel_server``; without it the SDK's own loop runs.
    """
    import anyio

    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None or not hasattr(lowlevel, "create_initialization_options"):
        log.warning("this mcp SDK has no _lowlevel_server: unparseable lines go unanswered")
        server.run()
        return
    anyio.run(_serve_stdio, lowlevel)


async def _serve_stdio(lowlevel) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        answers = Answers(write_stream)
        await lowlevel.run(AnswerUnreadable(read_stream, answers), answers, lowlevel.create_initialization_options())


class Answers:
    """The stdio write stream, counting the requests still to be answered.

    Closed stdin is the end of the input, not of the client: ``hermes serve < calls.jsonl``
    reads its answers from stdout. The SDK ends the session at end of input and cancels the
    handlers still running, so the last calls of a piped batch went unanswered (1 to 2 of 3,
    varying by run). :class:`AnswerUnreadable` holds the end of input back until
    :meth:`settled`. A request the client cancels is not waited for (it gets no answer)."""

    def __init__(self, write_stream):
        self._write = write_stream
        self._open: set = set()
        self._idle = None  # an anyio.Event while requests are open

    def read(self, item) -> None:
        """Note a message the client sent."""
        message = getattr(item, "message", None)
        method = getattr(message, "method", None)
        if method is None:
            return
        if getattr(message, "id", None) is not None:  # a request: an answer is owed
            self._open.add(message.id)
        elif method == "notifications/cancelled":
            self._close((getattr(message, "params", None) or {}).get("requestId"))

    async def send(self, item) -> None:
        try:
            await self._write.send(item)
        finally:  # an answer that cannot be written (the client is gone) is owed no more
            message = getattr(item, "message", None)
            if getattr(message, "method", None) is None:  # a response or an error
                self._close(getattr(message, "id", None))

    def _close(self, request_id) -> None:
        self._open.discard(request_id)
        if not self._open and self._idle is not None:
            self._idle.set()

    async def settled(self) -> None:
        """Return once every request read so far is answered."""
        import anyio

        while self._open:
            self._idle = anyio.Event()
            await self._idle.wait()

    def __getattr__(self, name):  # the rest of the stream's interface, unchanged
        return getattr(self._write, name)

    async def __aenter__(self):
        await self._write.__aenter__()
        return self

    async def __aexit__(self, *exc_info):
        return await self._write.__aexit__(*exc_info)


class AnswerUnreadable:
    """A read stream of the SDK's stdio transport that holds its end back until the calls read
    are answered (:class:`Answers`), and answers each line it could not read
    as a JSON-RPC message — invalid JSON, a lone surrogate escape, truncated input — with a
    JSON-RPC error (``-32700`` parse error, ``-32600`` for valid JSON that is not a message),
    carrying the request's id whenever it can be read, so the waiting call ends now
    (:mod:`hermes.mcp_unreadable`, which never raises: no line may end the session). Every
    other item passes through unchanged."""

    def __init__(self, read_stream, answers: Answers):
        self._read = read_stream
        self._write = answers

    @property
    def last_context(self):  # the SDK reads the sender's context from its stream
        return getattr(self._read, "last_context", None)

    async def receive(self):
        import anyio

        while True:
            try:
                item = await self._read.receive()
            except anyio.EndOfStream:
                await self._write.settled()  # the calls read so far are answered first
                raise
            if not isinstance(item, Exception):
                self._write.read(item)
                return item
            for answer in unreadable.answers(item):
                await self._write.send(answer)

    async def aclose(self) -> None:
        await self._read.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()
