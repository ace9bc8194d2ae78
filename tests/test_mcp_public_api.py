"""hermes uses only the MCP SDK's public API (issue 35): no name starting with ``_`` from
``mcp``, nothing of ``mcp.server.mcpserver`` (the high-level server's internals —
``utilities.func_metadata``, ``tools.Tool``, ``prompts.base`` — changed under hermes between
SDK releases), and none of the SDK objects' private attributes. The server is the public
low-level ``mcp.server.lowlevel.Server`` with hermes's own handlers.

Walks the source with :mod:`ast` (nothing is imported), every module of hermes and of the
shipped plugins."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "hermes").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")])
#: the high-level server, whose records hermes used to build by hand
HIGH_LEVEL = ("mcp.server.mcpserver", "mcp.server.fastmcp")
#: private attributes of the SDK's objects that hermes once reached for
PRIVATE_ATTRIBUTES = {"_lowlevel_server", "_tool_manager", "_prompt_manager", "_request_handlers", "_session_manager"}


def _private(dotted: str) -> bool:
    return any(
        part.startswith("_") and not (part.startswith("__") and part.endswith("__")) for part in dotted.split(".")
    )


def _sdk(module: str) -> bool:
    return module == "mcp" or module.startswith("mcp.")


def violations(source: str) -> list[str]:
    """What in ``source`` reaches past the MCP SDK's public API, one line each."""
    found = []
    for node in ast.walk(ast.parse(source)):
        imported: list[tuple[str, str | None]] = []
        if isinstance(node, ast.Import):
            imported = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported = [(node.module, alias.name) for alias in node.names]
        for module, name in imported:
            if not _sdk(module):
                continue
            where = f"line {node.lineno}: {module}" + (f" import {name}" if name else "")
            if _private(module) or (name is not None and _private(name)):
                found.append(f"{where} (a private name)")
            elif any(module == m or module.startswith(m + ".") for m in HIGH_LEVEL):
                found.append(f"{where} (the high-level server's internals)")
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.append(f"line {node.lineno}: .{node.attr} (a private attribute of the SDK)")
        if isinstance(node, ast.Constant) and node.value in PRIVATE_ATTRIBUTES:
            found.append(f"line {node.lineno}: {node.value!r} (a private attribute of the SDK, by name)")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata",
        "from mcp.server.mcpserver.tools import Tool as MCPServerTool",
        "from mcp.server.mcpserver.prompts.base import Prompt",
        "from mcp.server.mcpserver import MCPServer",
        "from mcp.shared._stream_protocols import ReadStream",
        "from mcp.server import _otel",
        "import mcp.server._streamable_http_modern",
        "from mcp.server.runner import _dump_result",
        "def f(server):\n    return server._lowlevel_server",
        "def f(server):\n    return getattr(server, '_lowlevel_server', None)",
    ],
)
def test_the_check_sees_a_reach_past_the_public_api(source):
    assert violations(source)


def test_the_check_lets_the_public_api_and_other_libraries_through():
    source = (
        "from mcp.server.lowlevel import Server\n"
        "from mcp.server.stdio import stdio_server\n"
        "from mcp.types import INVALID_PARAMS, CallToolResult\n"
        "from mcp.shared.exceptions import MCPError\n"
        "import mcp\n"
        "from pydantic._internal import _fields\n"  # not the SDK: not this test's business
        "from . import _private_helper\n"
        "def f(x):\n    return x.__class__\n"
    )
    assert violations(source) == []


def test_hermes_uses_only_the_mcp_sdk_s_public_api():
    found = {str(path.relative_to(ROOT)): v for path in SOURCES if (v := violations(path.read_text(encoding="utf-8")))}
    assert found == {}, found
