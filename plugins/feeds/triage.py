"""``hermes feed USER -i``: triage the ranked feed at the terminal with single keys.

Every action is a tool call through :func:`hermes.facekit.terminal.run_tool` — the same
functions MCP calls, clicks and reads recorded with source ``ui`` — and after each like or
dislike the list is ranked again, so the next item up is already what the new click taught.
Keys are acted on one at a time and in order, however fast they are typed
(:mod:`.keys`); the screen is redrawn once the keys that arrived together are done.
"""

from __future__ import annotations

import shutil
import webbrowser

import typer

from hermes.errors import HermesError
from hermes.facekit.faces import plural
from hermes.facekit.terminal import clean, run_tool

from .keys import TerminalKeys

UP = ("k", "\x1b[A", "\x1bOA")
DOWN = ("j", "\x1b[B", "\x1bOB")
QUIT = ("q", "\x1b")
HELP = (
    "j/k or ↓/↑ move · l ✓ like · d ✗ dislike · r read · s save · o open in the browser · e explain · u undo · q quit"
)
MARKS = {"like": "✓", "dislike": "✗"}


class Triage:
    def __init__(self, db, user: str, *, limit: int, since_days: float | None, echo=typer.echo):
        self.db, self.user, self.limit, self.since_days = db, user, limit, since_days
        self.echo = echo
        from rich.console import Console

        self.console = Console()
        self.items: list[dict] = []
        self.header = ""
        self.cursor = 0
        self.notice = HELP
        self.read: set[int] = set()
        self.saved: set[int] = set()
        self.done = {"like": 0, "dislike": 0, "read": 0, "save": 0}
        #: what ``u`` takes back, last first: (action, item, the rating before a click)
        self.history: list[tuple[str, dict, str | None]] = []

    def run(self) -> None:
        self.rank()
        try:
            with TerminalKeys() as keys:
                while True:
                    if not keys.pending:  # a burst is acted on key by key, drawn once
                        self.draw()
                    if not self.handle(keys.next()):
                        break
        except (KeyboardInterrupt, EOFError):
            pass
        self.echo(self.summary())

    # --- state -------------------------------------------------------------------------

    def rank(self) -> None:
        """(Re-)rank: the persona's unread items, best first, from the one ranking path —
        those below its bar too, after the others (triage is where they get rated)."""
        result = run_tool(
            self.db, "list_feed", user=self.user, limit=self.limit, since_days=self.since_days, below_bar=True
        )
        if not result["ok"]:  # an unknown persona: one error line, before the screen is cleared
            raise HermesError(result["message"])
        self.items = result["items"]
        above, total = result["above_bar"], result["above_bar"] + result["below_bar"]
        self.header = (
            f"{plural(total, 'item')} for {self.user}, best first: "
            f"{above} {'clears' if above == 1 else 'clear'} the bar, the rest follow"
            if total
            else result["message"]
        )
        self.cursor = min(self.cursor, max(len(self.items) - 1, 0))

    def current(self) -> dict | None:
        return self.items[self.cursor] if self.items else None

    def handle(self, key: str) -> bool:
        """Act on one key; ``False`` ends the session."""
        item = self.current()
        if key in QUIT:
            return False
        if key in UP:
            self.cursor = max(self.cursor - 1, 0)
        elif key in DOWN:
            self.cursor = min(self.cursor + 1, max(len(self.items) - 1, 0))
        elif key == "?":
            self.notice = HELP
        elif key == "u":
            self.undo()
        elif item is None:
            self.notice = "nothing to act on here; q quits"
        elif key in ("l", "+", "d", "-"):
            self.click(item, liked=key in ("l", "+"))
        elif key == "r":
            self.mark_read(item)
        elif key == "s":
            self.toggle_saved(item)
        elif key in ("o", "\r", "\n"):
            self.open(item)
        elif key == "e":
            self.explain(item)
        else:
            self.notice = f"unknown key {key!r}; {HELP}"
        return True

    def click(self, item: dict, *, liked: bool) -> None:
        label = "like" if liked else "dislike"
        result = run_tool(self.db, "record_feedback", user=self.user, item_id=item["id"], liked=liked)
        if not result["ok"]:
            self.notice = f"error: {result['message']}"
            return
        self.done[label] += 1
        self.history.append((label, item, result["click"]["previous"]))  # what undo puts back
        self.rank()  # the clicked item leaves the unread list; the rest re-rank with it
        self.notice = f"{MARKS[label]} {label}d [{item['id']}] {clean(item['title'], 60)} — re-ranked"

    def mark_read(self, item: dict) -> None:
        result = run_tool(self.db, "record_progress", user=self.user, item_id=item["id"], fraction=1.0)
        self._report(result, item, "marked read")
        if result.get("ok"):
            self.read.add(item["id"])
            self.done["read"] += 1
            self.history.append(("read", item, None))
            self.cursor = min(self.cursor + 1, max(len(self.items) - 1, 0))

    def toggle_saved(self, item: dict) -> None:
        on = item["id"] not in self.saved
        result = run_tool(self.db, "favorite", user=self.user, item_id=item["id"], on=on)
        self._report(result, item, "saved for later" if on else "no longer saved")
        if result.get("ok"):
            (self.saved.add if on else self.saved.discard)(item["id"])
            self.done["save"] += 1 if on else 0
            self.history.append(("save" if on else "unsave", item, None))

    def undo(self) -> None:
        """Take back the last like, dislike, read or save, through the same tools (a rating
        taken back as the web's undo does it: ``remove_feedback``)."""
        if not self.history:
            self.notice = "nothing to undo"
            return
        action, item, before = self.history.pop()
        if action in ("like", "dislike"):
            if before is None:
                run_tool(self.db, "remove_feedback", user=self.user, item_id=item["id"])
            else:
                run_tool(self.db, "record_feedback", user=self.user, item_id=item["id"], liked=before == "like")
            self.done[action] -= 1
            self.rank()  # the item is back among the unread (or keeps its old rating)
        elif action == "read":
            run_tool(self.db, "mark_unread", user=self.user, item_id=item["id"])
            self.read.discard(item["id"])
            self.done["read"] -= 1
        else:
            on = action == "unsave"
            run_tool(self.db, "favorite", user=self.user, item_id=item["id"], on=on)
            (self.saved.add if on else self.saved.discard)(item["id"])
            self.done["save"] -= 0 if on else 1
        self.notice = f"undone: {action} [{item['id']}] {clean(item['title'], 60)}"

    def open(self, item: dict) -> None:
        if not item.get("url"):
            self.notice = f"[{item['id']}] has no link to open"
            return
        opened = webbrowser.open(item["url"])
        self.notice = (
            f"opened [{item['id']}] in the browser" if opened else f"no browser found; the link is {clean(item['url'])}"
        )

    def explain(self, item: dict) -> None:
        result = run_tool(self.db, "explain_item", user=self.user, item_id=item["id"], since_days=self.since_days)
        self.notice = clean(result["reason"], 300) if result["ok"] else f"error: {result['message']}"

    def _report(self, result: dict, item: dict, done: str) -> None:
        self.notice = f"[{item['id']}] {done}" if result.get("ok") else f"error: {result.get('message')}"

    def summary(self) -> str:
        parts = [
            f"{plural(self.done['like'], 'like')}",
            f"{plural(self.done['dislike'], 'dislike')}",
            f"{self.done['read']} read",
            f"{self.done['save']} saved",
        ]
        return f"{self.user}: {', '.join(parts)} (source ui); `hermes feed {self.user}` shows the new order"

    # --- screen ------------------------------------------------------------------------

    def draw(self) -> None:
        width, height = shutil.get_terminal_size((100, 30))
        rows = max((height - 5) // 2, 1)
        start = min(max(self.cursor - rows // 2, 0), max(len(self.items) - rows, 0))
        self.console.clear()
        self.echo(typer.style(clean(self.header, width - 1), dim=True))
        if not self.items:
            self.echo("Nothing unread here. q quits.")
        for pos in range(start, min(start + rows, len(self.items))):
            item = self.items[pos]
            flags = ("R" if item["id"] in self.read else " ") + ("★" if item["id"] in self.saved else " ")
            pointer = "▶" if pos == self.cursor else " "
            head = f"{pointer}{flags}{item['rank']:>3}. [{item['id']}] "
            line = head + clean(item["title"], max(width - len(head) - 1, 10))
            self.echo(typer.style(line, bold=True) if pos == self.cursor else line)
            why = f"       {clean(item['source'], 30)} · {clean(item['reason'], width)}"
            self.echo(typer.style(why[: width - 1], dim=True))
        self.echo(clean(self.notice, width * 2))
