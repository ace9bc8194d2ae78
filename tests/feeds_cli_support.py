"""Running ``hermes`` commands in the feeds CLI tests (typer's CliRunner)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from hermes.cli.app import build_app


def run(*args):
    """``hermes ARGS…``, every argument as a string; the CliRunner result."""
    return CliRunner().invoke(build_app(), [str(a) for a in args])


def ok_json(*args) -> dict:
    """``hermes ARGS… --json``, asserted to succeed; the document it printed."""
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
