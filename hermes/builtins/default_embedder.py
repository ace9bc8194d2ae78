"""The built-in embedder plugin: all-MiniLM-L6-v2 (through ONNX Runtime or
sentence-transformers, see :mod:`hermes.onnx_embed.choice`), or the hash embedder when
``HERMES_EMBEDDER=hash``; and the ``hermes model`` commands.

``HERMES_EMBEDDER=hash`` exists for the test suite and model-free smoke runs; everything a
user runs defaults to the real model.
"""

import os

from ..embed import HashEmbedder
from ..hookspecs import hookimpl
from ..onnx_embed.choice import DefaultEmbedder

#: The command group :func:`hermes_register_commands` adds, with the first paragraph of its
#: help, read from this file by ``hermes --help`` (:func:`hermes.plugins.declared_commands`).
COMMAND_GROUPS = {"model": "The embedding model: prepare its ONNX copy, show which path runs."}


@hookimpl(trylast=True)
def hermes_embedder():
    if os.environ.get("HERMES_EMBEDDER", "").lower() == "hash":
        return HashEmbedder()
    return DefaultEmbedder()


@hookimpl
def hermes_register_commands(app):
    # Here, not at the top: the commands (typer) load only when a command is added, not
    # when the plugins are registered (`hermes serve`, issue 36).
    from ..onnx_embed.cli import register

    register(app)
