"""Lines on stdio that are no JSON-RPC 2.0 message (issue 33, case 2): every one is answered
with the right code and reason, with the id whenever it can be read, and none ends the
server (1,200 nested ``[`` raised RecursionError in the id lookup and ended the session)."""

from __future__ import annotations

import json
import subprocess

import mcp_types
import pytest
from process_support import child_env, hermes_command

from hermes.mcp_unreadable import answers, readable_ids

DEEP = "[" * 1200 + "]" * 1200
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def deep_call(request_id, levels: int) -> str:
    return '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"list_users","arguments":{"x":%s}}}' % (
        json.dumps(request_id),
        "[" * levels + "]" * levels,
    )


def answered(line: str) -> list[tuple]:
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # noqa: BLE001 - what the SDK's stdio transport hands to the server
        return [(a.message.id, a.message.error.code, a.message.error.message) for a in answers(exc)]
    raise AssertionError(f"the SDK read {line[:80]!r}")


@pytest.mark.parametrize(
    "line, expected",
    [
        (DEEP, [(None, -32700, "nested too deeply")]),
        ("{" * 3000, [(None, -32700, "")]),
        (deep_call(3, 300), [(3, -32700, "nested too deeply")]),
        (deep_call("abc", 900), [("abc", -32700, "nested too deeply")]),
        (deep_call(4, 5000), [(4, -32700, "nested too deeply")]),
        (
            '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"\\ud800"}}',
            [(7, -32700, "not valid Unicode")],
        ),
        ('{"jsonrpc":"2.0","id":9,"meth', [(9, -32700, "ends before")]),
        ("this is not json", [(None, -32700, "not valid JSON")]),
        ('{"id":5,"method":"tools/list"}', [(5, -32600, '"jsonrpc": "2.0"')]),
        ('{"jsonrpc":"1.0","id":"q","method":"tools/list"}', [("q", -32600, '"jsonrpc": "2.0"')]),
        ('{"jsonrpc":"2.0","id":8,"method":5}', [(8, -32600, "not a JSON-RPC 2.0 message")]),
        (
            '[{"jsonrpc":"2.0","id":6,"method":"tools/list"},{"jsonrpc":"2.0","id":"b","method":"ping"}]',
            [(6, -32600, "batches"), ("b", -32600, "batches")],
        ),
        ("[1, 2]", [(None, -32600, "batches")]),
        ('{"jsonrpc":"2.0","id":true,"method":5}', [(None, -32600, "")]),
    ],
)
def test_each_unreadable_line_gets_its_code_reason_and_id(line, expected):
    got = answered(line)
    assert [(i, c) for i, c, _ in got] == [(i, c) for i, c, _ in expected], got
    for (_, _, text), (_, _, want) in zip(got, expected):
        assert want in text and text.startswith(("Parse error", "Invalid request"))


def test_the_id_scan_is_flat_and_bounded():
    assert readable_ids('{"params":{"id":2,"x":[{"id":3}]},"id":1}') == [1]
    assert readable_ids('{"a":"\\"id\\": 4","id":"five"}') == ["five"]
    assert readable_ids("[" * 100_000) == []  # no recursion: no RecursionError
    assert readable_ids('{"id": 1.5}') == [] and readable_ids('{"id": null}') == []


def test_no_line_ends_the_stdio_server(tmp_path):
    lines = [
        DEEP,
        deep_call(3, 900),
        '{"id":5,"method":"tools/list"}',
        '[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]',
        json.dumps(INIT),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        deep_call(10, 150),  # within the reader's depth: an ordinary call
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    ]
    proc = subprocess.run(
        [*hermes_command(), "serve", "--db", str(tmp_path / "x.db")],
        input="\n".join(lines) + "\n",
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    answers_ = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    errors = [(a["id"], a["error"]["code"]) for a in answers_ if "error" in a]
    assert errors == [(None, -32700), (3, -32700), (5, -32600), (6, -32600)], proc.stdout[-2000:]
    assert sorted(a["id"] for a in answers_ if "result" in a) == [1, 2, 10]
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
