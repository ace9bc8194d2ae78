"""Settings and paths: where the data lives and what the user allowed.

Resolution order for every setting: explicit argument, environment, ``config.toml`` in the
data directory, default.

``config.toml`` is read in one place, :func:`settings`, once per process and again only when
the file or the environment changes (so an edit applies to a running server). The core's
sections become typed fields of :class:`Settings`; a plugin's section is declared by the
plugin (the ``hermes_config_sections`` hook, checked once its plugins are registered:
:func:`check_sections`) and read, checked by the plugin's own pydantic model, through
:meth:`Settings.section`.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from .errors import HermesError

PACKAGE_DATA = Path(__file__).parent / "data"


def home() -> Path:
    """The data directory: ``HERMES_HOME`` or the platform's user data directory."""
    env = os.environ.get("HERMES_HOME")
    return Path(env).expanduser() if env else Path(platformdirs.user_data_dir("hermes"))


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) if needed; a directory hermes creates is readable
    by its owner only (0700). An existing directory keeps its mode."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """The database file: ``--db``, then ``HERMES_DB``, then ``<home>/hermes.db``."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("HERMES_DB")
    return Path(env).expanduser() if env else home() / "hermes.db"


def config_toml() -> Path:
    """Where ``config.toml`` is read from (it may not exist: every setting has a default)."""
    return home() / "config.toml"


def feeds_toml() -> Path:
    """The user's ``feeds.toml`` if present, else the one shipped in the package."""
    user = home() / "feeds.toml"
    return user if user.exists() else PACKAGE_DATA / "feeds.toml"


def _truthy(value: str | None, name: str) -> bool:
    """An environment switch: 1/true/yes/on or 0/false/no/off (or unset); anything else is
    an error naming it (a trial's "maybe" was quietly false)."""
    text = (value or "").strip().lower()
    if text in {"", "0", "false", "no", "off"}:
        return False
    if text in {"1", "true", "yes", "on"}:
        return True
    raise HermesError(f"{name}={value!r}: expected 1, true, yes or on (or 0, false, no, off)")


MATRIX_STORAGES = ("auto", "float32", "int8")


@dataclass(frozen=True)
class Settings:
    allow_private: bool = False
    fetch_timeout: float = 20.0
    max_feed_bytes: int = 20 * 1024 * 1024
    fetch_concurrency: int = 8
    plugins: tuple[str, ...] | None = None
    #: seconds between background refreshes (``[ingest] every``); 0 = no background refresh
    ingest_every: float = 3600.0
    #: how the ranking holds the embedding matrix: ``HERMES_MATRIX``, else ``[ranking]
    #: matrix``, else ``"auto"`` (int8 from :data:`hermes.ranking.matrix.INT8_FROM_ROWS`
    #: items up, float32 below)
    matrix_storage: str = "auto"
    #: ``[embed] backend`` as written, else ``"auto"``, and ``[embed] torch_from`` (``None``:
    #: not set); the environment's ``HERMES_EMBED_*`` win, in :mod:`hermes.onnx_embed.choice`
    embed_backend: str = "auto"
    embed_torch_from: int | None = None
    #: the tables of config.toml no core field holds: the plugins' sections, read through
    #: :meth:`section`
    tables: dict = field(default_factory=dict, compare=False, repr=False)
    _checked: dict = field(default_factory=dict, compare=False, repr=False)

    def section(self, name: str, model):
        """Section ``[name]`` checked by ``model`` (a pydantic model: strict, no unknown key),
        its defaults where the file says nothing; a mistake is a :class:`HermesError` naming
        the setting and the file, worded as the tools word a refused argument."""
        if name not in self._checked:
            self._checked[name] = _checked_section(name, model, self.tables.get(name, {}))
        return self._checked[name]


DEFAULT_INGEST_EVERY = "1h"
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|min|m|s)?", re.IGNORECASE)
_UNIT = {"d": 86400, "h": 3600, "min": 60, "m": 60, "s": 1, None: 1}


def parse_duration(value, what: str = "duration") -> float:
    """Seconds in ``"1h"``, ``"30m"``, ``"1h30m"``, ``"90s"``, ``"2d"`` or a plain number of
    seconds; ``"off"`` / ``0`` is 0 (nothing scheduled)."""
    if isinstance(value, bool):
        raise HermesError(f'{what}: expected a duration such as "1h" or "30m", got {value!r}')
    if isinstance(value, (int, float)):
        if value < 0:
            raise HermesError(f"{what}: a duration cannot be negative, got {value!r}")
        return float(value)
    text = str(value).strip().lower().replace(" ", "")
    if text in {"off", "never", "no", "false", "0"}:
        return 0.0
    pos, total = 0, 0.0
    while pos < len(text):
        found = _DURATION.match(text, pos)
        if not found or found.end() == pos:
            raise HermesError(f'{what}: {value!r} is not a duration; write it like "1h", "30m", "1h30m" or "off"')
        total += float(found.group(1)) * _UNIT[found.group(2)]
        pos = found.end()
    if not text:
        raise HermesError(f'{what}: empty duration; write it like "1h" or "off"')
    return total


def load_toml(path: Path) -> dict:
    """A TOML file hermes reads (config.toml, feeds.toml, the feed candidates): ``{}`` when
    it does not exist, an error naming it when it is no TOML."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise HermesError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    return _parsed(path, content)


def _parsed(path: Path, content: bytes) -> dict:
    try:
        return tomllib.loads(content.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise HermesError(f"{path}: not valid TOML ({exc})") from exc


def _matrix_storage(cfg: dict) -> str:
    value = os.environ.get("HERMES_MATRIX")
    where = "HERMES_MATRIX"
    if value is None:
        value = _table(cfg, "ranking").get("matrix", "auto")
        where = in_config("ranking", "matrix")
    if not isinstance(value, str) or value.strip().lower() not in MATRIX_STORAGES:
        raise HermesError(f'{where}: expected "auto", "float32" or "int8", got {value!r}')
    return value.strip().lower()


#: the keys of the sections the core reads whole (a typo there is refused, not ignored);
#: [embed] and [ranking] are the core's too, their other keys left alone
KNOWN_KEYS = {
    "fetch": {"timeout", "max_bytes", "concurrency", "allow_private"},
    "ingest": {"every"},
    "plugins": {"enabled"},
}
#: the core's sections. This file is read before plugins load (it lists them), so a plugin's
#: section is checked once they are registered (:func:`check_sections`)
CORE_SECTIONS = frozenset(KNOWN_KEYS) | {"embed", "ranking"}
_warned: set[tuple[Path, str]] = set()


def in_config(section: str, key: str | None = None) -> str:
    """``[fetch] timeout in /full/path/config.toml``: how every config.toml error starts."""
    return f"[{section}]{f' {key}' if key else ''} in {config_toml()}"


def _sections(cfg: dict, known: frozenset[str], *, warn: bool) -> None:
    """Refuse a misspelled top-level section (a near-miss of a ``known`` one, such as
    [rankng]); with ``warn``, say once (a line on stderr) that no loaded part reads another."""
    for name in sorted(set(cfg) - known):
        listed = ", ".join(f"[{s}]" for s in sorted(known))
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if near:
            raise HermesError(f"{in_config(name)}: unknown section; did you mean [{near[0]}]? known: {listed}")
        if warn and (config_toml(), name) not in _warned:
            _warned.add((config_toml(), name))
            sys.stderr.write(
                f"hermes: warning: {in_config(name)}: no loaded part of hermes "
                f"reads this section (a plugin not installed or not enabled?); known: "
                f"{listed}\n"
            )


def check_sections(declared) -> None:
    """After the plugins are registered: config.toml's sections against the core's and the
    ones the plugins declared (``declared``, the names of the ``hermes_config_sections``
    hook): a near-miss of one is refused, any other section gets a warning line."""
    _sections(settings().tables, CORE_SECTIONS | frozenset(declared), warn=True)


def _checked_section(name: str, model, table):
    """``table`` checked by ``model``, a mistake worded as :mod:`hermes.arguments` words a
    refused argument, but naming the setting and the file."""
    # Here, not at the top: pydantic loads only when a plugin reads its section.
    from pydantic import ValidationError

    # with the tools' wording of what a value must be (hermes.arguments, which needs pydantic)
    from .arguments import excerpt, expects, json_schema

    if not isinstance(table, dict):
        raise HermesError(f"{in_config(name)}: {name} must be a table ([{name}]), got {table!r}")
    try:
        return model.model_validate(table, strict=True)
    except ValidationError as exc:
        errors = exc.errors()
        properties = json_schema(model).get("properties", {})
        unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
        if unknown:
            raise HermesError(
                f"{in_config(name)} has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(properties))}"
            ) from None
        key = str(errors[0]["loc"][0]) if errors[0]["loc"] else ""
        prop = properties.get(key, {})
        what = prop.get("description") or expects(prop)
        raise HermesError(f"{in_config(name, key)}: expected {what}, got {excerpt(errors[0]['input'])}") from None


def _table(cfg: dict, name: str) -> dict:
    """Section ``[name]`` of config.toml, checked: a table, with only keys the core reads."""
    table = cfg.get(name, {})
    if not isinstance(table, dict):
        raise HermesError(f"{in_config(name)}: {name} must be a table ([{name}]), got {table!r}")
    unknown = sorted(set(table) - KNOWN_KEYS.get(name, set(table)))
    if unknown:
        raise HermesError(
            f"{in_config(name)}: unknown key(s) in [{name}]: {', '.join(unknown)}; "
            f"known: {', '.join(sorted(KNOWN_KEYS[name]))}"
        )
    return table


def _number(table: dict, section: str, key: str, default, kind: type, what: str):
    """``table[key]`` as a positive ``kind`` (a whole number for ``int``), else an error
    naming the setting: a timeout of 0 failed every feed and put them all in back-off."""
    value = table.get(key, default)
    whole = kind is int
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (whole and not float(value).is_integer())
        or not value > 0
    ):
        raise HermesError(f"{in_config(section, key)}: expected {what} above 0, got {value!r}")
    return kind(value)


#: the environment variables :func:`settings` reads
ENVIRONMENT = ("HERMES_HOME", "HERMES_ALLOW_PRIVATE", "HERMES_PLUGINS", "HERMES_INGEST_EVERY", "HERMES_MATRIX")
_read: dict[tuple, Settings] = {}


def settings() -> Settings:
    """The settings in effect: ``config.toml`` and the environment, read and checked once,
    and again when either changed (the file's modification time and size, the variables);
    every part of hermes reads them here."""
    path = config_toml()
    try:
        content: bytes | None = path.read_bytes()
    except FileNotFoundError:
        content = None
    except OSError as exc:
        raise HermesError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    key = (str(path), content, tuple(os.environ.get(name) for name in ENVIRONMENT))
    found = _read.get(key)
    if found is None:
        found = _settings_from({} if content is None else _parsed(path, content))
        _read.clear()  # only the settings in effect are kept
        _read[key] = found
    return found


def _settings_from(cfg: dict) -> Settings:
    _sections(cfg, CORE_SECTIONS, warn=False)
    fetch = _table(cfg, "fetch")
    allowed_here = fetch.get("allow_private", False)
    if not isinstance(allowed_here, bool):
        raise HermesError(f"{in_config('fetch', 'allow_private')}: expected true or false, got {allowed_here!r}")
    embed = cfg.get("embed", {})
    if not isinstance(embed, dict):
        raise HermesError(f"{in_config('embed')}: embed must be a table ([embed]), got {embed!r}")
    torch_from = (
        _number(embed, "embed", "torch_from", None, int, "a whole number of texts") if "torch_from" in embed else None
    )  # the backend is checked where it is read
    allow = _truthy(os.environ.get("HERMES_ALLOW_PRIVATE"), "HERMES_ALLOW_PRIVATE") or allowed_here
    plugins_env = os.environ.get("HERMES_PLUGINS")
    if plugins_env is not None:
        plugins = tuple(p.strip() for p in plugins_env.split(",") if p.strip())
    elif "enabled" in _table(cfg, "plugins"):
        plugins = tuple(cfg["plugins"]["enabled"])
    else:
        plugins = None
    every, every_where = os.environ.get("HERMES_INGEST_EVERY"), "HERMES_INGEST_EVERY"
    if every is None:
        every = _table(cfg, "ingest").get("every", DEFAULT_INGEST_EVERY)
        every_where = in_config("ingest", "every")
    return Settings(
        allow_private=allow,
        fetch_timeout=_number(fetch, "fetch", "timeout", 20.0, float, "a number of seconds"),
        max_feed_bytes=_number(fetch, "fetch", "max_bytes", 20 * 1024 * 1024, int, "a whole number of bytes"),
        fetch_concurrency=_number(fetch, "fetch", "concurrency", 8, int, "a whole number of feeds"),
        plugins=plugins,
        ingest_every=parse_duration(every, every_where),
        matrix_storage=_matrix_storage(cfg),
        embed_backend=embed.get("backend", "auto"),
        embed_torch_from=torch_from,
        tables={name: table for name, table in cfg.items() if name not in CORE_SECTIONS},
    )
