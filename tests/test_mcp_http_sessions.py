"""MCP over HTTP (issue 33, case 7): sessions are bounded in number and close when idle
(1,000 ``initialize`` calls kept 41 MB for good), and only this server's own Origin and Host,
port included, are accepted (any ``http://127.0.0.1:*`` was)."""

from __future__ import annotations

import time

import pytest
from starlette.testclient import TestClient

from hermes import mcp_server
from hermes.mcp_server import build_server, http_app

PORT = 8765
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def served(db_path):
    def serve():
        app = http_app(build_server(str(db_path), groups={"persona"}), host="127.0.0.1", port=PORT)
        return TestClient(app, base_url=f"http://127.0.0.1:{PORT}")

    return serve


def initialize(http, **headers):
    return http.post("/mcp", json=INIT, headers={**ACCEPT, **headers})


def test_only_this_servers_own_origin_and_host_are_accepted(served):
    with served() as http:
        assert initialize(http).status_code == 200  # no Origin: not a browser
        for origin in (f"http://127.0.0.1:{PORT}", f"http://localhost:{PORT}"):
            assert initialize(http, Origin=origin).status_code == 200, origin
        for origin in (
            f"http://127.0.0.1:{PORT + 1}",
            "http://127.0.0.1:3000",
            f"http://localhost:{PORT}0",
            f"http://127.0.0.1:{PORT}.evil.example",
            "http://[::1]:1",
            "http://evil.example",
        ):
            assert initialize(http, Origin=origin).status_code == 403, origin
        assert initialize(http, Host=f"127.0.0.1:{PORT + 1}").status_code == 421
        assert initialize(http, Host="localhost").status_code == 421


def test_sessions_are_bounded(served, monkeypatch):
    monkeypatch.setattr(mcp_server, "MAX_SESSIONS", 3)
    with served() as http:
        ids = [initialize(http).headers["mcp-session-id"] for _ in range(3)]
        refused = initialize(http)
        assert refused.status_code == 503 and "Too many open sessions" in refused.text
        assert http.delete("/mcp", headers={**ACCEPT, "mcp-session-id": ids[0]}).status_code == 200
        assert initialize(http).status_code == 200  # a closed session makes room


def test_an_idle_session_closes(served, monkeypatch):
    monkeypatch.setattr(mcp_server, "SESSION_IDLE", 0.3)
    with served() as http:
        sid = initialize(http).headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        deadline = time.monotonic() + 30  # a bound on the wait, not a measured duration
        while True:
            answer = http.post("/mcp", json=ping, headers={**ACCEPT, "mcp-session-id": sid})
            if answer.status_code == 404:
                break
            assert time.monotonic() < deadline, "the idle session never closed"
            time.sleep(0.5)  # idle for longer than SESSION_IDLE
        assert "Session not found" in answer.text
