"""Writing a file in one step: a reader never sees half of it, and nobody else's file is
ever written through it.

Defence in depth for folders others can write to (a shared export folder, a synced vault):
the temporary file beside the target has an unpredictable name and is created with
``O_EXCL | O_NOFOLLOW`` (:func:`tempfile.mkstemp`), so a symbolic link planted under the
name hermes would use cannot redirect the write (it did: ``.<name>.<pid>.tmp`` made an
export overwrite another file). The rename replaces the target's name, never what a link
there points to.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` in one step.

    :param mode: the new file's permissions; by default an existing regular file's own, else
        what the umask gives a new file (as ``open()`` would)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), _mode_for(path) if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _mode_for(path: Path) -> int:
    try:
        st = os.lstat(path)  # a link there is replaced, not followed: its target's mode is no guide
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode)
    return 0o666 & ~_umask()


def _umask() -> int:
    """This process's umask, read without changing it where Linux shows it."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)  # elsewhere: set and put back at once
    os.umask(mask)
    return mask


__all__ = ["write_atomic"]
