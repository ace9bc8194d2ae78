"""The corpus's tunables, read from ``[corpus]`` in ``config.toml``.

```toml
[corpus]
heard_threshold = 0.3   # reading/playback fraction that makes an item "heard"
log_retention = 1000    # change-log rows kept per persona (older ones are trimmed)
w_heard = 0.4           # strength weights (clamped to [0, 1] after summing)
w_captures = 0.3
w_favorite = 0.1
w_reopens = 0.2
capture_cap = 5         # captures (highlights + notes) beyond this add nothing
reopen_cap = 3          # re-reads beyond this add nothing
# Where `hermes save` / save_item look up metadata (a mirror, or a test fixture):
arxiv_api = "https://export.arxiv.org/api/query"   # arXiv's Atom API
doi_resolver = "https://doi.org/"                  # DOI content negotiation (CSL-JSON)
```

The section is the plugin's own: declared through ``hermes_config_sections`` (so a typo of
its name is refused like a core section's) and checked by :class:`CorpusSettings`, read
through the one typed read of config.toml (:meth:`hermes.config.Settings.section`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from hermes.config import settings

Weight = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=1)]
Url = Annotated[str, Field(pattern=r"^https?://[^/?#\s]+", description="an http:// or https:// URL")]


class CorpusSettings(BaseModel):
    """``[corpus]``: every key optional, none unknown (a typo is refused, not ignored)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    heard_threshold: Annotated[float, Field(gt=0, le=1, description="a fraction above 0, at most 1")] = 0.3
    log_retention: Count = 1000
    w_heard: Weight = 0.4
    w_captures: Weight = 0.3
    w_favorite: Weight = 0.1
    w_reopens: Weight = 0.2
    capture_cap: Count = 5
    reopen_cap: Count = 3
    arxiv_api: Url = "https://export.arxiv.org/api/query"
    doi_resolver: Url = "https://doi.org/"


def corpus_settings() -> CorpusSettings:
    """The settings in effect now (an edit of config.toml applies to a running server)."""
    return settings().section("corpus", CorpusSettings)
