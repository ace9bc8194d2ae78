"""What ``hermes serve`` does with stdio input the SDK's loop would drop or cut short: a line
that is no JSON-RPC 2.0 message hermes can read is answered, and the end of input waits for
the answers still owed (:class:`AnswerUnreadable`, :class:`AnswersOwed`, the streams
:func:`hermes.mcp_server.run_stdio` hands the SDK's low-level server).

The SDK's stdio transport hands an unreadable line over as pydantic's ``ValidationError``;
:func:`answers` turns it into JSON-RPC errors the client can match to its request. Two rules:

- Nothing here may raise, whatever the line: one line of 1,200 nested ``[`` made Python's
  ``json.loads`` (used to find the id) raise ``RecursionError`` and ended the session. The id
  is found by :func:`readable_ids`, a flat scan with no recursion and a bounded length.
- The id is echoed whenever it can be read — from an object without ``jsonrpc``, with
  ``"jsonrpc": "1.0"``, truncated, too deep, or from each member of a batch — since a
  client whose request gets ``id: null`` waits for its own timeout.
"""

from __future__ import annotations

import json
import logging
import re

log = logging.getLogger(__name__)

#: lines longer than this are not scanned for an id (a client's request puts it early)
MAX_SCAN = 4 * 1024 * 1024
# A string (with the colon that makes it a key), a bracket, or a colon-less run of anything
# else: the scan only needs to know where keys are and how deep it is.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOKEN = re.compile(_STRING + r"(\s*:)?|[\[\]{}]")
_VALUE = re.compile(r"\s*(-?\d{1,19}(?![.\deE])|" + _STRING + ")")

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def readable_ids(text: str) -> list:
    """The ids of the message in ``text`` (an object: its top-level ``id``; a batch: each
    member's), as far as they can be read: strings and integers only (MCP's id types), in
    order. Works on truncated and over-deep JSON alike; never recurses."""
    depth: list[str] = []
    found = []
    for token in _TOKEN.finditer(text, 0, min(len(text), MAX_SCAN)):
        first = token.group()[0]
        if first in "[{":
            depth.append(first)
        elif first in "]}":
            if depth:
                depth.pop()
            if not depth:
                break  # the end of the message: anything after it is not the message
        elif token.group(1) and _is_id_key(token.group(), depth):
            value = _VALUE.match(text, token.end())
            if value:
                found.append(_id(value.group(1)))
    return [i for i in found if i is not None]


def _is_id_key(token: str, depth: list[str]) -> bool:
    return (depth == ["{"] or depth == ["[", "{"]) and token.startswith('"id"')


def _id(literal: str):
    try:
        return _plain(json.loads(literal))
    except ValueError:
        return None


def _plain(value):
    """``value`` if it can be a request id (a string or an integer), else None."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def answers(error: BaseException) -> list:
    """The JSON-RPC errors (SessionMessages) answering the line behind ``error``: one per id
    read (one with ``id: null`` when none is), never raising."""
    try:
        code, text, detail, ids = _diagnose(error)
    except Exception:  # a last resort: the answer must exist even if the diagnosis fails
        log.exception("could not diagnose an unreadable line")
        code, text, detail, ids = PARSE_ERROR, "Parse error: the line could not be read", None, []
    return [_message(i, code, text, detail) for i in (ids or [None])]


def _diagnose(error: BaseException) -> tuple[int, str, str | None, list]:
    errors = error.errors() if hasattr(error, "errors") else []
    first = (errors or [{}])[0]
    detail = str(first.get("msg") or type(error).__name__)[:200]
    if first.get("type") == "json_invalid":
        line = first.get("input") if isinstance(first.get("input"), str) else ""
        return PARSE_ERROR, _parse_reason(detail), detail, readable_ids(line)
    if not errors:
        return PARSE_ERROR, "Parse error: the line could not be read", detail, []
    # Valid JSON that is no message. pydantic keeps no copy of the line, but one of its
    # errors (a required member missing from the object) holds the whole object or batch.
    top = next(
        (e["input"] for e in errors if len(e.get("loc") or ()) <= 2 and isinstance(e.get("input"), (dict, list))), None
    )
    if isinstance(top, list):
        ids = [_plain(m.get("id")) for m in top if isinstance(m, dict)]
        return (
            INVALID_REQUEST,
            "Invalid request: batches are not supported; send each JSON-RPC message on a line of its own",
            None,
            [i for i in ids if i is not None],
        )
    ids = [_plain(top.get("id"))] if isinstance(top, dict) else []
    ids = [i for i in ids if i is not None]
    if isinstance(top, dict) and top.get("jsonrpc") != "2.0":
        return (INVALID_REQUEST, 'Invalid request: not JSON-RPC 2.0 (the message needs "jsonrpc": "2.0")', detail, ids)
    return INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message", detail, ids


def _parse_reason(detail: str) -> str:
    if "recursion limit" in detail:
        return "Parse error: the message is nested too deeply for the server's JSON reader"
    if "hex escape" in detail or "surrogate" in detail:
        return "Parse error: the message holds a \\u escape that is not valid Unicode"
    if "EOF while parsing" in detail:
        return "Parse error: the line ends before its JSON does"
    return "Parse error: the line is not valid JSON"


def _message(request_id, code: int, text: str, detail: str | None):
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError

    return SessionMessage(
        JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=text, data=detail or None))
    )


# --- the stdio read and write streams, wrapped ----------------------------------------------


class AnswersOwed:
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
    are answered (:class:`AnswersOwed`), and answers each line it could not read
    as a JSON-RPC message — invalid JSON, a lone surrogate escape, truncated input — with a
    JSON-RPC error (``-32700`` parse error, ``-32600`` for valid JSON that is not a message),
    carrying the request's id whenever it can be read, so the waiting call ends now
    (:func:`answers`, which never raises: no line may end the session). Every
    other item passes through unchanged."""

    def __init__(self, read_stream, owed: AnswersOwed):
        self._read = read_stream
        self._write = owed

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
            for answer in answers(item):
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


__all__ = ["AnswerUnreadable", "AnswersOwed", "answers", "readable_ids"]
