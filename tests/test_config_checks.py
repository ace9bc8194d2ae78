"""config.toml mistakes are one clear line naming the setting, never a traceback, a silently
ignored typo, or (a trial's `[fetch] timeout = 0`) every feed failed and put in back-off."""

from __future__ import annotations

import subprocess

import pytest
from process_support import child_env, hermes_command

from hermes.config import config_toml, settings
from hermes.errors import HermesError


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('[fetch]\ntimeout = "five"\n', "[fetch] timeout in"),
        ("[fetch]\ntimeout = 0\n", "expected a number of seconds above 0, got 0"),
        ("[fetch]\ntimeout = -1\n", "got -1"),
        ("[fetch]\nmax_bytes = 1.5\n", "[fetch] max_bytes in"),
        ("[fetch]\nconcurrency = true\n", "[fetch] concurrency in"),
        ("fetch = 3\n", "fetch must be a table ([fetch]), got 3"),
        ("[fetch]\ntimeuot = 3\n", "[fetch] in"),
        ("[fetch]\ntimeuot = 3\n", "has unknown key(s) timeuot; known: allow_private, concurrency, max_bytes, timeout"),
        ('[ingest]\nevry = "1h"\n', "has unknown key(s) evry; known: every"),
        ('[fetch]\nallow_private = "yes"\n', "[fetch] allow_private in"),
        # every section names the file as [fetch] does, with the same helper
        ('[ingest]\nevery = "banana"\n', "[ingest] every in"),
        ('[embed]\ntorch_from = "300"\n', 'expected a whole number of texts above 0, got "300"'),
        ("[embed]\ntorch_from = 0\n", "[embed] torch_from in"),
        # a misspelled section is refused, the known ones listed
        ('[rankng]\nmatrix = "int8"\n', "[rankng] in"),
        ('[rankng]\nmatrix = "int8"\n', "did you mean [ranking]? known: [embed], [fetch], "),
    ],
)
def test_a_bad_setting_is_named(text, fragment):
    """Said at the first read of any core setting: the core's sections are checked together
    by their typed models (hermes.core_settings), loaded then, not by ``hermes --help``."""
    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text(text)
    with pytest.raises(HermesError) as caught:
        _ = settings().fetch_timeout
    assert fragment in str(caught.value) and str(config_toml()) in str(caught.value)


def test_good_settings_are_read():
    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text(
        '[fetch]\ntimeout = 3\nmax_bytes = 1000\n[ingest]\nevery = "2h"\n[corpus]\nanything = 1\n'
    )  # a plugin's section: its own to check
    got = settings()
    assert (got.fetch_timeout, got.max_feed_bytes, got.ingest_every) == (3.0, 1000, 7200.0)


def test_a_command_says_so_in_one_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('[fetch]\ntimeout = "five"\n')
    proc = subprocess.run(
        [*hermes_command(), "ingest", "--db", str(tmp_path / "x.db")],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: [fetch] timeout in")


def test_an_environment_switch_is_on_off_or_an_error(monkeypatch):
    for value, expected in (("1", True), ("yes", True), ("off", False), ("", False)):
        monkeypatch.setenv("HERMES_ALLOW_PRIVATE", value)
        assert settings().allow_private is expected
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "maybe")
    with pytest.raises(HermesError, match="HERMES_ALLOW_PRIVATE='maybe': expected 1, true"):
        settings()


def test_every_without_due_or_watch_is_refused(db_path):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    result = CliRunner().invoke(build_app(), ["ingest", "--every", "5m", "--db", str(db_path)])
    assert result.exit_code == 1 and "--every is the refresh interval of --due or --watch" in result.output


def test_the_ranking_matrix_setting_names_the_file():
    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text('[ranking]\nmatrix = "int4"\n')
    with pytest.raises(HermesError) as caught:
        _ = settings().matrix_storage
    assert str(caught.value).startswith(f"[ranking] matrix in {config_toml()}: expected")
    config_toml().write_text('[ranking]\nmatrix = "int8"\n')
    assert settings().matrix_storage == "int8"


def test_a_section_no_plugin_declares_is_a_warning_not_a_refusal(capsys):
    """config.toml is read before the plugins load (it lists them): a plugin's section is
    checked once they are registered, against the sections they declare
    (``hermes_config_sections``); one nobody declared gets one warning line."""
    from hermes.config import check_sections

    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text("[weatherplugin]\ncity = 3\n")
    settings()
    assert capsys.readouterr().err == ""  # not before the plugins are known
    check_sections(["corpus"])
    check_sections(["corpus"])
    warned = capsys.readouterr().err.splitlines()
    assert warned == [
        f"hermes: warning: [weatherplugin] in {config_toml()}: no loaded part "
        "of hermes reads this section (a plugin not installed or not enabled?); known: "
        "[corpus], [embed], [fetch], [ingest], [plugins], [ranking]"
    ]
    check_sections(["weatherplugin"])  # declared: nothing to say
    config_toml().write_text("[corpsu]\nlog_retention = 3\n")
    with pytest.raises(HermesError, match=r"^\[corpsu\] in .*did you mean \[corpus\]"):
        check_sections(["corpus"])


def test_config_toml_is_read_once_until_it_changes(monkeypatch):
    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text("[fetch]\ntimeout = 3\n")
    first = settings()
    assert settings() is first
    config_toml().write_text("[fetch]\ntimeout = 4\n")  # same size, same second
    assert settings().fetch_timeout == 4.0
    monkeypatch.setenv("HERMES_ALLOW_PRIVATE", "1")
    assert settings().allow_private is True


@pytest.mark.parametrize(
    "text, said",
    [
        ("[corpus]\nw_heard = -1\n", "[corpus] w_heard in {}: expected a number of at least 0, got -1"),
        (
            "[corpus]\nlog_retention = true\n",
            "[corpus] log_retention in {}: expected a whole number of at least 1, got true",
        ),
        (
            "[corpus]\nheard_threshold = 1.5\n",
            "[corpus] heard_threshold in {}: expected a fraction above 0, at most 1, got 1.5",
        ),
        (
            '[corpus]\narxiv_api = "ftp://x"\n',
            '[corpus] arxiv_api in {}: expected an http:// or https:// URL, got "ftp://x"',
        ),
        ("corpus = 3\n", "[corpus] in {}: corpus must be a table ([corpus]), got 3"),
    ],
)
def test_a_plugin_section_is_checked_by_its_model_in_the_core_words(text, said):
    from hermes_corpus.settings import corpus_settings

    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text(text)
    with pytest.raises(HermesError) as caught:
        corpus_settings()
    assert str(caught.value) == said.format(config_toml())


def test_the_environment_interval_is_named_as_such(monkeypatch):
    monkeypatch.setenv("HERMES_INGEST_EVERY", "banana")
    with pytest.raises(HermesError, match="^HERMES_INGEST_EVERY: 'banana' is not a duration"):
        settings()


def test_a_corpus_setting_mistake_names_the_file_like_the_core_settings(tmp_path, monkeypatch):
    from hermes_corpus.settings import corpus_settings

    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    (tmp_path / "config.toml").write_text("[corpus]\nheard_thresold = 0.5\n")
    with pytest.raises(HermesError, match=rf"\[corpus\] in {tmp_path / 'config.toml'} has unknown key"):
        corpus_settings()


@pytest.mark.parametrize(
    "text, said",
    [
        ("[fetch]\ntimeout = 0\n", "[fetch] timeout in {}: expected a number of seconds above 0, got 0"),
        ('[ranking]\nmatrix = "int4"\n', '[ranking] matrix in {}: expected "auto", "float32" or "int8", got "int4"'),
        ("[plugins]\nenabled = 3\n", "[plugins] enabled in {}: expected a list of plugin names, got 3"),
    ],
)
def test_a_core_setting_mistake_says_the_file_the_key_and_what_is_allowed(text, said):
    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text(text)
    with pytest.raises(HermesError) as caught:
        _ = settings().fetch_timeout
    assert str(caught.value) == said.format(config_toml())


def test_the_core_sections_are_typed_models_read_as_a_plugins_are():
    """One way to check a section: the core's through ``Settings.section`` and its model,
    as a plugin's; the values are the models' (a case-insensitive matrix storage too)."""
    from hermes.core_settings import CORE_MODELS, FetchSettings

    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text('[fetch]\ntimeout = 3\n[ranking]\nmatrix = " INT8 "\n[embed]\ntorch_from = 40\n')
    got = settings()
    assert got.section("fetch", FetchSettings).timeout == 3.0 == got.fetch_timeout
    assert (got.matrix_storage, got.embed_torch_from, got.fetch_concurrency) == ("int8", 40, 8)
    for model in CORE_MODELS.values():
        assert model.model_config["strict"]


def test_a_setting_given_wins_and_an_unknown_one_is_refused():
    from hermes.config import Settings

    assert Settings(fetch_timeout=1.5).fetch_timeout == 1.5
    with pytest.raises(TypeError):
        Settings(fetch_timeuot=1.5)
