"""The distribution: its package list covers the source tree, the version lives in one place,
`python -m hermes` works, the README and plugin guide use the distribution's name, and the
set-up asks for torch's CPU build first. (`make wheel-check` builds and runs the real wheel.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import PurePosixPath

from packaging_support import (
    ROOT,
    expected_packages,
    expected_wheel_files,
    missing_from_wheel,
    pyproject,
    unexpected_in_wheel,
)

import hermes

DIST = "hermes-feed-engine"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_package_list_names_every_directory_that_holds_a_shipped_file():
    listed = set(pyproject()["tool"]["setuptools"]["packages"])
    assert expected_packages() - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - expected_packages() == set(), "these listed packages do not exist"


def test_package_data_globs_match_every_file_that_is_not_python():
    globs = pyproject()["tool"]["setuptools"]["package-data"]
    unshipped = []
    for inside in expected_wheel_files():
        path = PurePosixPath(inside)
        package = str(path.parent).replace("/", ".")
        if path.suffix != ".py" and not any(fnmatch(path.name, g) for g in globs.get(package, [])):
            unshipped.append(inside)
    assert unshipped == []
    assert "hermes/data/candidates.toml" in expected_wheel_files()
    # PEP 561: a plugin author's type checker reads hermes's annotations only with this marker
    assert "hermes/py.typed" in expected_wheel_files()


def test_building_the_package_prints_no_setuptools_warning(tmp_path):
    """What pip's quiet install shows of the build: setuptools' configuration warnings."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "always",
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "egg_info",
            "--egg-base",
            str(tmp_path),
            "build_py",
            "--build-lib",
            str(tmp_path / "lib"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "warning" not in (done.stdout + done.stderr).lower(), done.stderr
    assert (tmp_path / "lib" / "hermes" / "web" / "templates" / "feed.html").is_file()


def test_the_wheel_checker_names_a_missing_template_and_a_stray_package():
    names = set(expected_wheel_files()) - {"hermes/web/templates/feed.html", "hermes_corpus/cli.py"}
    names |= {"tests/conftest.py", f"{DIST.replace('-', '_')}-1.0.dist-info/METADATA"}
    assert missing_from_wheel(names) == ["hermes/web/templates/feed.html", "plugins/corpus/cli.py"]
    assert unexpected_in_wheel(names) == ["tests/conftest.py"]


def test_the_version_lives_in_hermes_init_only():
    project = pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hermes.__version__"}
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(hermes.__version__)}\]", changelog, re.M)


def test_python_dash_m_hermes_is_the_cli(tmp_path):
    command = [sys.executable, "-m", "hermes"]
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"hermes {hermes.__version__}"
    done = subprocess.run([*command, "feed", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "USER" in done.stdout.upper()


def test_the_distribution_and_its_command_alias_are_named_alike():
    project = pyproject()["project"]
    assert project["name"] == DIST
    assert project["scripts"] == {"hermes": "hermes.cli.app:main", DIST: "hermes.cli.app:main"}
    assert project["license"] == "MIT" and (ROOT / "LICENSE").is_file()


def test_the_readme_installs_by_the_distribution_name_and_warns_of_the_other_hermes():
    assert f"pip install {DIST}" in README and f"pipx install {DIST}" in README
    assert re.search(rf"uvx (--[\w-]+ \S+ )*{DIST} demo", README)
    # The bare name installs someone else's project: no command anyone copies uses it.
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        code = "\n".join(re.findall(r"```\w*\n(.*?)```", doc.read_text(encoding="utf-8"), re.S))
        assert not re.search(r"(pip|pipx|uv pip) install (-U )?hermes(?![-\w])", code), doc
        assert not re.search(r"uvx( --\S+ \S+)* hermes(?![-\w])", code), doc
    assert re.search(r"`hermes` on PyPI.*unrelated", README, re.S)


def test_the_readme_client_configurations_set_hermes_home():
    blocks = re.findall(r"```json\n(.*?)```", README, re.S)
    servers = [json.loads(b)["mcpServers"]["hermes"] for b in blocks if "mcpServers" in b]
    uvx = [s for s in servers if s["command"] == "uvx"]
    checkout = [s for s in servers if s["command"].endswith("/.venv/bin/hermes")]
    assert len(uvx) == 1 and len(checkout) == 1
    assert uvx[0]["args"][uvx[0]["args"].index(DIST) + 1] == "serve"
    assert checkout[0]["args"][0] == "serve"
    assert all("HERMES_HOME" in s.get("env", {}) for s in servers)


def test_the_plugin_guide_depends_on_hermes_by_its_distribution_name():
    tomls = re.findall(r"```toml\n(# its pyproject\.toml.*?)```", README, re.S)
    assert tomls, "README lost the plugin's pyproject.toml"
    import tomllib

    plugin = tomllib.loads(tomls[0])
    assert any(d.startswith(DIST) for d in plugin["project"]["dependencies"])
    assert plugin["project"]["entry-points"]["hermes"] == {"short": "hermes_short"}


def test_make_install_asks_the_cpu_index_for_the_pinned_torch_before_the_rest(tmp_path):
    pin = next(d for d in pyproject()["project"]["dependencies"] if d.startswith("torch"))
    plan = subprocess.run(
        ["make", "-n", "install", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    cpu = plan.index(f'--index-url "https://download.pytorch.org/whl/cpu" "{pin}"')
    assert cpu < plan.index("install -q -e")


def fake_torch_index(root, version: str):
    """A PEP 503 index on disk holding one tiny wheel named like torch's CPU build."""
    import zipfile

    wheel = root / f"torch-{version}-py3-none-any.whl"
    info = f"torch-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch/__init__.py", "")
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    page = root / "simple" / "torch" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<a href="../../{wheel.name.replace("+", "%2B")}">{wheel.name}</a>')
    return (root / "simple").as_uri()


def test_make_torch_installs_the_pinned_version_from_the_cpu_index(tmp_path):
    # No machine configuration (no local wheel folder): only the index given can answer.
    pin = next(d for d in pyproject()["project"]["dependencies"] if d.startswith("torch"))
    version = pin.split("==")[1]
    index = fake_torch_index(tmp_path, f"{version}+cpu")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    # A step that forgot TORCH_INDEX would reach this dead default index, not PyPI's CUDA torch.
    env.update(
        PIP_CONFIG_FILE=os.devnull, PIP_TARGET=str(tmp_path / "target"), PIP_INDEX_URL="http://127.0.0.1:9/simple"
    )
    done = subprocess.run(
        ["make", "-s", "torch", f"BIN={sys.prefix}/bin", f"TORCH_INDEX={index}", f"TORCH_LOG={tmp_path / 'torch.log'}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "gave no" not in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "target" / f"torch-{version}+cpu.dist-info").is_dir()


def test_make_torch_falls_back_with_a_note_when_the_index_does_not_answer(tmp_path):
    # A closed loopback port and a version no index has: pip fails; the step must not.
    done = subprocess.run(
        [
            "make",
            "-s",
            "torch",
            f"BIN={sys.prefix}/bin",
            "TORCH_INDEX=http://127.0.0.1:9/simple",
            "TORCH_PIN=torch==0.0.1",
            f"TORCH_LOG={tmp_path / 'torch.log'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "gave no torch==0.0.1" in done.stdout
    assert "default index" in done.stdout and (tmp_path / "torch.log").read_text()


def test_make_install_says_where_hermes_is_and_make_link_puts_it_on_a_path(tmp_path):
    plan = subprocess.run(
        ["make", "-n", "install", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert f"hermes is {tmp_path / 'venv' / 'bin' / 'hermes'}" in plan
    assert f". {tmp_path / 'venv'}/bin/activate" in plan and "make link" in plan
    venv = os.path.realpath(sys.prefix)  # the venv this test runs in, already installed
    done = subprocess.run(
        ["make", "-s", "-o", f"{venv}/bin/hermes", "link", f"VENV={venv}", f"LINK_DIR={tmp_path / 'bin'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    link = tmp_path / "bin" / "hermes"
    assert os.readlink(link) == f"{venv}/bin/hermes" and "not on PATH" in done.stdout
    version = subprocess.run([link, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"hermes {hermes.__version__}"


def test_the_install_section_says_no_release_yet_and_leads_with_the_checkout():
    """Until a release is on the package index, the first command a reader copies works."""
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "No release is on the package index yet" in install
    first_block = re.search(r"```\w*\n(.*?)```", install, re.S).group(1)
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "demo"], ["make", "test"]]
