"""Keys read from the terminal one at a time, however fast they arrive.

A read of a terminal returns whatever is waiting: ``jjjl`` typed in a burst, or a key held
down, comes back as one string. So the input is split here into keys, an escape sequence
(↓, ↑) being one key. The terminal stays in cbreak mode for the whole session: switching
it into raw mode for each read, as ``click.getchar`` does, flushes (``TCSAFLUSH``) what was
typed while the previous key was acted on.
"""

from __future__ import annotations

import codecs
import os
import re
import sys
from collections import deque

#: one CSI sequence (``ESC [`` … final byte), one SS3 sequence (``ESC O`` x), or one character
KEY = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1bO.|.", re.S)


def split_keys(text: str) -> list[str]:
    """The keys in what one read returned, in the order they were typed."""
    return KEY.findall(text)


class TerminalKeys:
    """``with TerminalKeys() as keys: keys.next()`` — the next key; Ctrl-D is ``EOFError``,
    Ctrl-C ``KeyboardInterrupt`` (the terminal still sends the signal in cbreak mode)."""

    def __init__(self) -> None:
        self.pending: deque[str] = deque()
        self.decoder = codecs.getincrementaldecoder(sys.stdin.encoding or "utf-8")("replace")
        self._file = None
        self._saved = None

    def __enter__(self) -> TerminalKeys:
        try:
            import termios
            import tty
        except ImportError:  # Windows: typer's getchar reads one key per call there
            return self
        if sys.stdin.isatty():
            self.fd = sys.stdin.fileno()
        else:
            self._file = open("/dev/tty", "rb", buffering=0)  # closed in __exit__
            self.fd = self._file.fileno()
        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc) -> None:
        if self._saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
        if self._file is not None:
            self._file.close()

    def next(self) -> str:
        while not self.pending:
            self.pending.extend(split_keys(self._read()))
        key = self.pending.popleft()
        if key == "\x04":
            raise EOFError
        if key == "\x03":
            raise KeyboardInterrupt
        return key

    def _read(self) -> str:
        if self._saved is None:
            import typer

            return typer.getchar()
        data = os.read(self.fd, 1024)
        if not data:
            raise EOFError
        return self.decoder.decode(data)
