"""The MCP contract an agent relies on the first time: an unknown tool is a protocol error,
every answer validates against its tool's typed output schema, one isError rule and true
annotations, and the persona named ``user`` wherever a persona is meant."""

from __future__ import annotations

import mcp
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from hermes.mcp_server import build_server

pytestmark = pytest.mark.anyio


async def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(db_path):
    """2025-11-25: "Unknown tools" are protocol errors (-32602), not a tool result."""
    async with mcp.Client(build_server(str(db_path), {"feeds"})) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("list_fed", {"user": "ann"})
        # still serving after it
        assert (await client.call_tool("list_feeds", {})).is_error is False
    assert raised.value.code == INVALID_PARAMS
    assert "Unknown tool: 'list_fed'" in raised.value.message
    assert "list_feed" in raised.value.message and "digest" not in raised.value.message
