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
"""

from __future__ import annotations

import math
import urllib.parse
from dataclasses import dataclass

from hermes.config import in_config, settings
from hermes.errors import HermesError


@dataclass(frozen=True)
class CorpusSettings:
    heard_threshold: float = 0.3
    log_retention: int = 1000
    w_heard: float = 0.4
    w_captures: float = 0.3
    w_favorite: float = 0.1
    w_reopens: float = 0.2
    capture_cap: int = 5
    reopen_cap: int = 3
    arxiv_api: str = "https://export.arxiv.org/api/query"
    doi_resolver: str = "https://doi.org/"


_FLOATS = ("heard_threshold", "w_heard", "w_captures", "w_favorite", "w_reopens")
_INTS = ("log_retention", "capture_cap", "reopen_cap")
_URLS = ("arxiv_api", "doi_resolver")


def _bad(key: str, value, want: str) -> HermesError:
    return HermesError(f"{in_config('corpus', key)}: {value!r} is invalid; {want}")


def from_mapping(raw: dict) -> CorpusSettings:
    """Validate a ``[corpus]`` table (unknown keys are refused so a typo is not silent)."""
    known = _FLOATS + _INTS + _URLS
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise HermesError(
            f"{in_config('corpus')} has unknown key(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    values = {}
    for key in _FLOATS:
        if key not in raw:
            continue
        v = raw[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise _bad(key, v, "use a number >= 0")
        values[key] = float(v)
    for key in _INTS:
        if key not in raw:
            continue
        v = raw[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise _bad(key, v, "use a whole number >= 1")
        values[key] = v
    for key in _URLS:
        if key not in raw:
            continue
        v = raw[key]
        if not isinstance(v, str) or urllib.parse.urlsplit(v).scheme not in ("http", "https") \
                or not urllib.parse.urlsplit(v).netloc:
            raise _bad(key, v, "use an http:// or https:// URL")
        values[key] = v
    if "heard_threshold" in values and not 0 < values["heard_threshold"] <= 1:
        raise _bad("heard_threshold", values["heard_threshold"], "use a fraction in (0, 1]")
    return CorpusSettings(**values)


def corpus_settings() -> CorpusSettings:
    """The settings in effect now (``config.toml`` is re-read: cheap, and edits apply live)."""
    raw = settings().extra.get("corpus", {})
    if not isinstance(raw, dict):
        raise HermesError(f"{in_config('corpus')}: must be a table")
    return from_mapping(raw)
