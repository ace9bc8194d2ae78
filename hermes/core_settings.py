"""The core's sections of ``config.toml`` as typed models — ``[fetch]``, ``[ingest]``,
``[embed]``, ``[ranking]`` — read through :meth:`hermes.config.Settings.section`, as a
plugin's section is: strict, no unknown key (``[embed]`` keeps the keys others read), a
mistake one line naming the setting, the file and what is allowed (each field's
``description``). Imported when a command first reads a core setting, never by ``hermes
--help`` or ``--version`` (pydantic loads with it)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

_STRICT = ConfigDict(strict=True, extra="forbid")


def _lower(value):
    return value.strip().lower() if isinstance(value, str) else value


class FetchSettings(BaseModel):
    """``[fetch]``: how feeds are fetched. A timeout of 0 failed every feed and put them all
    in back-off, so each figure is above 0."""

    model_config = _STRICT

    timeout: Annotated[float, Field(gt=0, description="a number of seconds above 0")] = 20.0
    max_bytes: Annotated[int, Field(gt=0, description="a whole number of bytes above 0")] = 20 * 1024 * 1024
    concurrency: Annotated[int, Field(gt=0, description="a whole number of feeds above 0")] = 8
    allow_private: Annotated[bool, Field(description="true or false")] = False


class IngestSettings(BaseModel):
    """``[ingest]``: the background refresh's interval (:func:`hermes.config.parse_duration`
    reads it: ``"1h"``, ``"30m"``, ``"off"`` or a number of seconds)."""

    model_config = _STRICT

    every: Annotated[str | int | float, Field(description='a duration such as "1h", "30m" or "off"')] = "1h"


class EmbedSettings(BaseModel):
    """``[embed]``: the embedding path (``backend``, checked where it is read:
    :mod:`hermes.onnx_embed.choice`) and from how many texts torch is taken."""

    model_config = ConfigDict(strict=True, extra="allow")

    backend: Annotated[str, Field(description="a backend name as a string")] = "auto"
    torch_from: Annotated[Annotated[int, Field(gt=0)] | None, Field(description="a whole number of texts above 0")] = (
        None
    )


MatrixStorage = Annotated[
    Literal["auto", "float32", "int8"],
    BeforeValidator(_lower),
    Field(description='"auto", "float32" or "int8"'),
]


class RankingSettings(BaseModel):
    """``[ranking]``: how the ranking holds the embedding matrix (int8 from
    :data:`hermes.ranking.matrix_loader.INT8_FROM_ROWS` items up under ``auto``)."""

    model_config = ConfigDict(strict=True, extra="allow")

    matrix: MatrixStorage = "auto"


#: the core's sections a model reads, by name
CORE_MODELS = {"fetch": FetchSettings, "ingest": IngestSettings, "embed": EmbedSettings, "ranking": RankingSettings}
