"""``hermes feed USER -i`` in tmux, as a person types: keys sent in one burst (``jjjl``,
arrows held down) are each one action, in order — the like lands on the fourth item."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time

import pytest
from hermes_feeds.keys import split_keys
from process_support import child_env, hermes_command

from hermes.storage.records import create_user, require_user

TITLES = [
    "Surface code decoding with neural networks",
    "Quantum error correction thresholds",
    "Sourdough starter troubleshooting",
    "Bread baking with wild yeast",
    "Tomato blight in wet summers",
    "Pruning apple trees in winter",
]
ROW = re.compile(r"^[▶ ][R ][★ ]\s*(\d+)\. \[(\d+)\]", re.M)


def test_a_burst_is_split_into_keys_in_order():
    assert split_keys("jjjl") == ["j", "j", "j", "l"]
    assert split_keys("\x1b[B\x1b[Bd") == ["\x1b[B", "\x1b[B", "d"]
    assert split_keys("\x1bOAq") == ["\x1bOA", "q"]
    assert split_keys("\x1b") == ["\x1b"]  # Esc alone still quits


class Tmux:
    def __init__(self, socket):
        self.socket = str(socket)

    def __call__(self, *args) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, "-f", "/dev/null", *args], check=True, capture_output=True, text=True
        ).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "t")

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"{text!r} never appeared; the pane shows:\n{screen}")
            time.sleep(0.1)


@pytest.fixture
def tmux(tmp_path):
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed (apt-get install tmux): the burst test needs a real terminal")
    session = Tmux(tmp_path / "tmux.sock")
    yield session
    subprocess.run(["tmux", "-S", session.socket, "kill-server"], capture_output=True)


def start(tmux, db_path, home):
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in child_env(home, TERM="xterm").items())
    cmd = shlex.join([*hermes_command(), "feed", "ada", "-i", "--all", "--db", str(db_path)])
    tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", f"env -i {env} {cmd}")
    tmux("set-option", "-t", "t", "remain-on-exit", "on")
    return tmux.wait_for("j/k or ↓/↑ move")


def shown_ids(screen: str) -> list[int]:
    return [int(item) for _, item in ROW.findall(screen)]


@pytest.fixture
def ada(db, db_path, add_items):
    add_items([{"title": t, "url": f"https://example.org/{k}", "days_ago": 1} for k, t in enumerate(TITLES)])
    create_user(db, "ada", "quantum error correction")
    return db


def liked(db):
    uid = require_user(db, "ada")["id"]
    return db.execute("SELECT item_id, label FROM clicks WHERE user_id = ? ORDER BY id", [uid]).fetchall()


def test_jjjl_in_one_burst_moves_three_and_likes_the_fourth(ada, db_path, tmux, tmp_path):
    order = shown_ids(start(tmux, db_path, tmp_path / "home"))
    assert len(order) == len(TITLES)
    tmux("send-keys", "-t", "t", "-l", "jjjl")  # one write to the terminal: four keys at once
    screen = tmux.wait_for("re-ranked")
    assert "unknown key" not in screen
    tmux("send-keys", "-t", "t", "-l", "q")
    tmux.wait_for("1 like, 0 dislikes")
    assert [tuple(row) for row in liked(ada)] == [(order[3], "like")]


def test_arrows_and_keys_in_one_burst_act_in_order(ada, db_path, tmux, tmp_path):
    order = shown_ids(start(tmux, db_path, tmp_path / "home"))
    # ↓ ↓ like (#3), then — the list re-ranked without it — d dislikes what is under the cursor
    tmux("send-keys", "-t", "t", "Down", "Down", "l", "k", "d")
    tmux.wait_for("disliked")
    tmux("send-keys", "-t", "t", "-l", "q")
    tmux.wait_for("1 like, 1 dislike")
    clicks = [tuple(row) for row in liked(ada)]
    assert clicks[0] == (order[2], "like")
    assert clicks[1][1] == "dislike" and clicks[1][0] != order[2]
