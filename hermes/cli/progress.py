"""One progress display for a long command (``hermes ingest``, ``hermes tags rebuild``).

It is both the ``progress(stage, done, total)`` callback of the ingest stages and, on a
terminal, the listener of :func:`hermes.facekit.status.step`: one bar, whose label names the stage
and the slow step inside it ("Embedding new items · loading the embedding model …"). Two
live displays on one terminal (a bar and a spinner) overwrite each other's lines.

Off a terminal (a log, a cron mail) nothing redraws: a ``hermes:`` line when a stage starts,
its count every :attr:`EVERY` seconds and when it ends — the status line
(:class:`~hermes.facekit.terminal.StatusLine`) keeps writing the slow steps' lines in between.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from hermes.facekit.faces import plural

LABELS = {
    "fetch": ("Fetching feeds", "fetched", "feed"),
    "embed": ("Embedding new items", "embedded", "item"),
    "tag": ("Tagging items", "tagged", "item"),
}


class StageProgress:
    EVERY = 10.0  # seconds between two count lines off a terminal

    def __init__(self, stream, *, live: bool, clock=time.monotonic):
        self.stream, self.live, self.clock = stream, live, clock
        self.stage: str | None = None
        self.steps: list[str] = []
        self.bar = None
        self.task = None
        self.started = self.last_line = 0.0

    def __enter__(self) -> StageProgress:
        if self.live:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(file=self.stream), transient=True)
            self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, stage: str, done: int, total: int) -> None:
        first = stage != self.stage
        if first:
            self.stage, self.started = stage, self.clock()
        if self.live:
            self._draw(done, total, new=first)
            return
        label, did, unit = LABELS.get(stage, (stage, f"{stage}:", "item"))
        now = self.clock()
        if first:
            self._line(f"{label.lower()}: {plural(total, unit)} …")
            self.last_line = now
        if done >= total or now - self.last_line >= self.EVERY:
            took = f" ({now - self.started:.0f} s)" if done >= total else ""
            self._line(f"{did} {done} of {plural(total, unit)}{took}")
            self.last_line = now

    @contextmanager
    def step(self, message: str):
        """The listener of :func:`hermes.facekit.status.step` while the bar is live."""
        self.steps.append(message)
        self._draw()
        try:
            yield
        finally:
            self.steps.remove(message)
            self._draw()

    @property
    def description(self) -> str:
        label = LABELS.get(self.stage, (self.stage or "Working",))[0]
        return f"{label} · {self.steps[-1]}" if self.steps else label

    def _draw(self, done: int | None = None, total: int | None = None, *, new: bool = False) -> None:
        if self.bar is None:
            return
        if self.task is None or new:
            if self.task is not None:  # one bar: the finished stage gives way to the next
                self.bar.remove_task(self.task)
            self.task = self.bar.add_task(self.description, total=total)
        self.bar.update(self.task, description=self.description, completed=done, total=total)

    def _line(self, text: str) -> None:
        self.stream.write(f"hermes: {text}\n")
        self.stream.flush()
