"""What the distribution must carry, read from pyproject.toml and the source tree: used by
tests/test_packaging.py (the configuration) and .ci/wheel_contents.py (the built wheel).

A package root is ``hermes/`` or a ``[tool.setuptools.package-dir]`` entry (``plugins/feeds``
→ ``hermes_feeds``). Every file under a package root is shipped: code, templates, static
files, sample feeds, ``candidates.toml``.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
IGNORED_PARTS = {"__pycache__"}
IGNORED_SUFFIXES = {".pyc", ".pyo"}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def package_roots() -> dict[str, str]:
    """Top-level import package → its directory, relative to the checkout."""
    setuptools = pyproject()["tool"]["setuptools"]
    roots = {"hermes": "hermes"}
    roots.update(setuptools.get("package-dir", {}))
    return roots


def tracked_files(directory: str) -> list[PurePosixPath]:
    """The files under ``directory`` that belong to the project: git's list in a checkout
    (editor backups and caches are not the project's), else every file but caches."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", directory], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
        files = [PurePosixPath(p) for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = [PurePosixPath(p.relative_to(ROOT).as_posix()) for p in (ROOT / directory).rglob("*") if p.is_file()]
    return [
        f
        for f in files
        if not IGNORED_PARTS & set(f.parts) and f.suffix not in IGNORED_SUFFIXES and (ROOT / f).is_file()
    ]


def expected_wheel_files() -> dict[str, str]:
    """Path inside the wheel → source path, for every file the wheel must contain."""
    expected = {}
    for package, directory in package_roots().items():
        for source in tracked_files(directory):
            inside = PurePosixPath(package, *source.relative_to(directory).parts)
            expected[str(inside)] = str(source)
    return expected


def expected_packages() -> set[str]:
    """Every directory holding a shipped file, as a dotted package name (data-only
    directories included: setuptools wants them listed to ship their files)."""
    return {str(PurePosixPath(path).parent).replace("/", ".") for path in expected_wheel_files()}


def missing_from_wheel(names: set[str]) -> list[str]:
    """Source files (``hermes/web/templates/feed.html``) whose wheel path is not in ``names``."""
    return sorted(source for inside, source in expected_wheel_files().items() if inside not in names)


def unexpected_in_wheel(names: set[str]) -> list[str]:
    """Wheel entries outside the package roots and the ``.dist-info`` directory (a stray
    ``tests`` or ``benchmarks`` package would land in site-packages)."""
    tops = set(package_roots())
    return sorted(n for n in names if n.split("/", 1)[0] not in tops and ".dist-info/" not in n)
