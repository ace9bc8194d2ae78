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

#: The core's settings, each read from a section of config.toml by its typed model
#: (:mod:`hermes.core_settings`) unless the environment or the caller gives it: the field,
#: its ``(section, key)`` and its default.
CORE_SETTINGS = {
    "allow_private": ("fetch", "allow_private", False),
    "fetch_timeout": ("fetch", "timeout", 20.0),
    "max_feed_bytes": ("fetch", "max_bytes", 20 * 1024 * 1024),
    "fetch_concurrency": ("fetch", "concurrency", 8),
    #: seconds between background refreshes (``[ingest] every``); 0 = no background refresh
    "ingest_every": ("ingest", "every", 3600.0),
    #: how the ranking holds the embedding matrix: ``HERMES_MATRIX``, else ``[ranking]
    #: matrix``, else ``"auto"`` (int8 from :data:`hermes.ranking.matrix_loader.INT8_FROM_ROWS`
    #: items up, float32 below)
    "matrix_storage": ("ranking", "matrix", "auto"),
    #: ``[embed] backend`` as written, else ``"auto"``, and ``[embed] torch_from`` (``None``:
    #: not set); the environment's ``HERMES_EMBED_*`` win, in :mod:`hermes.onnx_embed.choice`
    "embed_backend": ("embed", "backend", "auto"),
    "embed_torch_from": ("embed", "torch_from", None),
}


class Settings:
    """The settings in effect (:func:`settings`). ``plugins`` and ``tables`` (every section
    of config.toml) are read at once — ``hermes --help`` reads the plugin list — and each core
    setting (``fetch_timeout`` …, :data:`CORE_SETTINGS`) when first read, through the core
    sections' typed models (:meth:`section`, pydantic's load deferred to then): a mistake in
    any core section is one line naming the setting, the file and what is allowed. A value
    given here (``Settings(fetch_timeout=1.0)``, the environment's) wins over the file."""

    def __init__(self, *, plugins: tuple[str, ...] | None = None, tables: dict | None = None, **given):
        unknown = set(given) - set(CORE_SETTINGS)
        if unknown:
            raise TypeError(f"Settings has no setting {', '.join(sorted(unknown))}")
        self.plugins = plugins
        #: config.toml's tables (the core's and the plugins'), read through :meth:`section`
        self.tables = dict(tables or {})
        self._given = given
        self._core: dict | None = None
        self._checked: dict = {}

    def __getattr__(self, name: str):
        if name not in CORE_SETTINGS:
            raise AttributeError(name)
        if name in self._given:
            return self._given[name]
        if self._core is None:
            self._core = _core_settings(self)
        return self._core[name]

    def __repr__(self) -> str:
        return f"Settings(plugins={self.plugins!r}, given={self._given!r})"

    def section(self, name: str, model):
        """Section ``[name]`` checked by ``model`` (a pydantic model: strict, no unknown key),
        its defaults where the file says nothing; a mistake is a :class:`HermesError` naming
        the setting and the file, worded as the tools word a refused argument."""
        if name not in self._checked:
            self._checked[name] = _checked_section(name, model, self.tables.get(name, {}))
        return self._checked[name]


def _core_settings(found: Settings) -> dict:
    """Every core setting not given, read from its section by its model (all sections at
    once: a mistake in any is said at the first read of one)."""
    # Here, not at the top: pydantic loads when a command first reads a core setting, not
    # for `hermes --help` (which reads the plugin list only).
    from .core_settings import CORE_MODELS

    sections = {name: found.section(name, model) for name, model in CORE_MODELS.items()}
    out = {field: getattr(sections[section], key) for field, (section, key, _) in CORE_SETTINGS.items()}
    out["ingest_every"] = parse_duration(out["ingest_every"], in_config("ingest", "every"))
    return out


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


#: the core's sections: its models' (:mod:`hermes.core_settings`) and [plugins]. This file
#: is read before plugins load (it lists them), so a plugin's section is checked once they
#: are registered (:func:`check_sections`)
CORE_SECTIONS = frozenset({"fetch", "ingest", "embed", "ranking", "plugins"})
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


def _plugin_list(cfg: dict) -> tuple[str, ...] | None:
    """``[plugins] enabled``: checked here, by hand, not by a model — every command reads it
    to know its plugins, ``hermes --help`` too, which loads no pydantic."""
    table = cfg.get("plugins", {})
    if not isinstance(table, dict):
        raise HermesError(f"{in_config('plugins')}: plugins must be a table ([plugins]), got {table!r}")
    unknown = sorted(set(table) - {"enabled"})
    if unknown:
        raise HermesError(f"{in_config('plugins')} has unknown key(s) {', '.join(unknown)}; known: enabled")
    if "enabled" not in table:
        return None
    enabled = table["enabled"]
    if not isinstance(enabled, list) or not all(isinstance(name, str) for name in enabled):
        raise HermesError(f"{in_config('plugins', 'enabled')}: expected a list of plugin names, got {enabled!r}")
    return tuple(enabled)


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
    """The settings of ``cfg`` and the environment: the section names and the plugin list
    checked now, the environment's values too (each names its variable); the core sections
    when first read (:class:`Settings`)."""
    _sections(cfg, CORE_SECTIONS, warn=False)
    given: dict = {}
    if _truthy(os.environ.get("HERMES_ALLOW_PRIVATE"), "HERMES_ALLOW_PRIVATE"):
        given["allow_private"] = True  # else [fetch] allow_private says
    plugins_env = os.environ.get("HERMES_PLUGINS")
    if plugins_env is not None:
        plugins = tuple(p.strip() for p in plugins_env.split(",") if p.strip())
    else:
        plugins = _plugin_list(cfg)
    every = os.environ.get("HERMES_INGEST_EVERY")
    if every is not None:
        given["ingest_every"] = parse_duration(every, "HERMES_INGEST_EVERY")
    matrix = os.environ.get("HERMES_MATRIX")
    if matrix is not None:
        if matrix.strip().lower() not in MATRIX_STORAGES:
            raise HermesError(f'HERMES_MATRIX: expected "auto", "float32" or "int8", got {matrix!r}')
        given["matrix_storage"] = matrix.strip().lower()
    return Settings(plugins=plugins, tables={name: table for name, table in cfg.items() if name != "plugins"}, **given)
