"""CI, before anything is installed: the built wheel and sdist in DIST carry every file of the
package roots (no module outside the package list, no template or sample feed left out), nothing
else, and the metadata people install by (name, version, commands, licence).

Usage: python .ci/wheel_contents.py DIST
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from packaging_support import (
    ROOT,
    missing_from_wheel,
    pyproject,
    unexpected_in_wheel,
)

SDIST_MUST_HAVE = ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md")


def version() -> str:
    namespace: dict = {}
    exec((ROOT / "hermes" / "__init__.py").read_text(encoding="utf-8"), namespace)
    return namespace["__version__"]


def one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        sys.exit(f"wheel check: expected one {pattern} in {dist}, found {[p.name for p in found]}")
    return found[0]


def check_wheel(wheel: Path, problems: list[str]) -> None:
    project = pyproject()["project"]
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        problems += [f"wheel lacks {path}" for path in missing_from_wheel(names)]
        problems += [f"wheel carries {path}, outside the package roots" for path in unexpected_in_wheel(names)]
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(f"{info}/METADATA").decode())
        scripts = zf.read(f"{info}/entry_points.txt").decode()
        has_license = f"{info}/licenses/LICENSE" in names
    if meta["Name"] != project["name"]:
        problems.append(f"wheel metadata names {meta['Name']!r}, pyproject {project['name']!r}")
    if meta["Version"] != version():
        problems.append(f"wheel version {meta['Version']} != hermes.__version__ {version()}")
    if meta["License-Expression"] != project["license"] or not has_license:
        problems.append("wheel lacks the licence expression or the LICENSE file")
    for command, target in project["scripts"].items():
        if f"{command} = {target}" not in scripts:
            problems.append(f"wheel does not install the {command!r} command")


def check_sdist(sdist: Path, problems: list[str]) -> None:
    with tarfile.open(sdist) as tf:
        names = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
    problems += [f"sdist lacks {name}" for name in SDIST_MUST_HAVE if name not in names]


def main(dist: Path) -> int:
    problems: list[str] = []
    wheel, sdist = one(dist, "*.whl"), one(dist, "*.tar.gz")
    check_wheel(wheel, problems)
    check_sdist(sdist, problems)
    for problem in problems:
        print(f"wheel check: {problem}", file=sys.stderr)
    if not problems:
        print(f"wheel check: {wheel.name} and {sdist.name} carry every package file")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "dist")))
