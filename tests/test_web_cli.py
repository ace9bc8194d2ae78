"""``hermes web``: loopback by default, a non-loopback bind only with --allow-remote (and a
warning), a busy port refused before anything is announced. The bind and uvicorn are
replaced by recorders: no server is started here."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner


@pytest.fixture
def served(monkeypatch):
    calls = []

    def fake_bind(host, port):
        return {"host": host, "port": port}

    def fake_serve(app, sock, **kwargs):
        calls.append({"app": app, **sock, **kwargs})

    from hermes import net as sockets

    monkeypatch.setattr(sockets, "bind", fake_bind)
    monkeypatch.setattr(sockets, "serve_asgi", fake_serve)
    return calls


def invoke(args):
    from hermes.cli.app import build_app

    return CliRunner().invoke(build_app(), args)


def test_web_binds_loopback_by_default(served, db_path):
    result = invoke(["web", "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    assert served[0]["host"] == "127.0.0.1" and served[0]["port"] == 8765
    assert served[0]["app"].state.db_path == str(db_path)
    assert "http://127.0.0.1:8765/" in result.output
    assert "warning" not in result.output


def test_web_port_option(served, db_path):
    result = invoke(["web", "--db", str(db_path), "--port", "9123", "--host", "localhost"])
    assert result.exit_code == 0, result.output
    assert served[0]["port"] == 9123 and served[0]["host"] == "localhost"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "myhost.example"])
def test_non_loopback_needs_allow_remote(served, db_path, host):
    result = invoke(["web", "--db", str(db_path), "--host", host])
    assert result.exit_code == 1
    assert "--allow-remote" in result.output and "refusing" in result.output
    assert served == []


def test_allow_remote_warns_and_serves(served, db_path):
    result = invoke(["web", "--db", str(db_path), "--host", "0.0.0.0", "--allow-remote"])
    assert result.exit_code == 0, result.output
    assert "warning" in result.output and "no login" in result.output
    assert served[0]["host"] == "0.0.0.0"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.5.5", "::1", "[::1]", "localhost"])
def test_loopback_names(host):
    from hermes.net import is_loopback
    from hermes.web.server import check_bind

    assert is_loopback(host)
    assert check_bind(host, allow_remote=False) is None


def test_bad_port_is_one_clear_line(served, db_path):
    result = invoke(["web", "--db", str(db_path), "--port", "99999"])
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert served == []


def test_a_busy_port_is_one_error_line_before_any_announcement(db_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke(["web", "--db", str(db_path), "--port", str(port)])
    assert result.exit_code == 1
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr and "--port" in result.stderr
    assert "http://" not in result.output  # no URL announced for a server that never ran


def test_help_mentions_the_flag():
    result = invoke(["web", "--help"])
    assert result.exit_code == 0
    assert "--allow-remote" in result.output and "--port" in result.output
