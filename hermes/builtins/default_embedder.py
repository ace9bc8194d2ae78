"""The built-in embedder plugin: MiniLM, or the hash embedder when ``HERMES_EMBEDDER=hash``.

``HERMES_EMBEDDER=hash`` exists for the test suite and model-free smoke runs; everything a
user runs defaults to the real model.
"""

import os

from ..embed import HashEmbedder, MiniLMEmbedder
from ..hookspecs import hookimpl


@hookimpl(trylast=True)
def hermes_embedder():
    if os.environ.get("HERMES_EMBEDDER", "").lower() == "hash":
        return HashEmbedder()
    return MiniLMEmbedder()
