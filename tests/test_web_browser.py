"""End to end in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

A uvicorn server on 127.0.0.1 (random port, in a thread) serves the app; the browser opens
the feed, presses ✓ on the first item — the click must be stored with source ``ui`` — and
opens the digest. With ``HERMES_SCREENSHOT_DIR`` set, the feed is saved there as
``screenshot-feed.png`` (that is how ``docs/screenshot-feed.png`` is made); with
``HERMES_SCREENSHOT_ALL=1`` too, a phone-sized feed and the other pages are saved beside it.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from web_support import clicks, seed

pytestmark = pytest.mark.browser

CHROMIUM = next((p for p in (os.environ.get("HERMES_CHROMIUM"), shutil.which("chromium"),
                             "/usr/bin/chromium") if p and Path(p).exists()), None)
# Headless as root in a sandbox-less container, and nothing that phones home: this machine's
# network is closed, and the test must not depend on it.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-quic", "--disable-extensions", "--disable-default-apps",
]


@pytest.fixture
def browser():
    if CHROMIUM is None:
        pytest.skip("no chromium binary: install Debian's package (apt-get install chromium); "
                    "`make browser` does it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is "
                                   "not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def server(db_path, db, add_items):
    """The app on a random loopback port, served by uvicorn in a thread."""
    import uvicorn

    from hermes.web.app import create_app
    from hermes.web.server import allowed_hosts

    seed(db, add_items)
    app = create_app(str(db_path), allowed_hosts=allowed_hosts("127.0.0.1", False))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):  # bounded wait for start-up (at most ~10 s)
        if uv.started:
            break
        time.sleep(0.05)
    assert uv.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()


def test_like_in_the_browser_is_stored_with_source_ui(browser, server, db):
    page = browser.new_page(viewport={"width": 1100, "height": 1300})
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    page.goto(server + "/")
    page.get_by_role("link", name="ada", exact=True).click()
    page.wait_for_url("**/feed?user=ada")
    first = page.locator("article.item").first
    item_id = int(first.get_attribute("data-item-id"))
    title = first.locator(".item-title").inner_text()
    assert first.locator(".reason").inner_text().lower().startswith("why")

    first.locator("button.btn-like").click()
    page.wait_for_load_state()
    assert page.locator(".flash").inner_text().startswith("✓")
    assert title[:30] in page.locator(".flash").inner_text()
    assert clicks(db) == [(1, item_id, "like", "ui")]
    # the liked item left the unread feed
    assert page.locator(f'article[data-item-id="{item_id}"]').count() == 0

    page.get_by_role("link", name="Digest").click()
    page.wait_for_url("**/digest?user=ada")
    assert page.locator("h1").inner_text().startswith("Digest")
    assert page.locator("section.topic").count() >= 1
    assert page.locator("section.topic article.item").count() >= 1
    assert errors == []  # no CSP violations, no script errors


def test_read_save_highlight_and_the_corpus_in_the_browser(browser, server, db):
    page = browser.new_page(viewport={"width": 1100, "height": 1300})
    page.goto(server + "/feed?user=ada")
    second = page.locator("article.item").nth(1)
    second_id = int(second.get_attribute("data-item-id"))
    second.get_by_role("button", name="Mark read").click()
    page.wait_for_load_state()
    assert page.locator(f'article[data-item-id="{second_id}"] .badge-read').count() == 1

    third = page.locator("article.item").nth(2)
    third_id = int(third.get_attribute("data-item-id"))
    third.get_by_role("button", name="☆ Save").click()
    page.wait_for_load_state()
    assert page.locator(f'article[data-item-id="{third_id}"] .badge-saved').count() == 1

    card = page.locator("article.item").first
    card.locator("details.highlight > summary").click()
    card.locator("textarea[name=text]").fill("a passage worth keeping")
    card.locator("textarea[name=note]").fill("my note")
    card.get_by_role("button", name="Save highlight").click()
    page.wait_for_load_state()
    assert "Highlight saved with a note" in page.locator(".flash").inner_text()
    assert db.execute("SELECT text, note FROM corpus_highlights").fetchall() == [
        ("a passage worth keeping", "my note")]

    # Reload (the flash is shown once) and keep a picture of the feed for the README.
    page.goto(server + "/feed?user=ada")
    shots = os.environ.get("HERMES_SCREENSHOT_DIR")
    target = Path(shots) / "screenshot-feed.png" if shots else None
    png = page.screenshot(path=str(target) if target else None, full_page=False)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    every_page = bool(shots) and os.environ.get("HERMES_SCREENSHOT_ALL") == "1"
    if every_page:
        phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
        phone.goto(server + "/feed?user=ada")
        phone.screenshot(path=str(Path(shots) / "screenshot-feed-phone.png"))

    page.get_by_role("link", name="Corpus").click()
    page.wait_for_url("**/corpus?user=ada")
    assert page.locator(".ranked li").count() == 2  # read + highlighted
    assert page.locator(".changes li").count() >= 3
    if every_page:  # the other pages too, for whoever reviews the look
        page.screenshot(path=str(Path(shots) / "screenshot-corpus.png"), full_page=True)
        for name, path in (("digest", "/digest?user=ada"), ("feeds", "/feeds"), ("home", "/")):
            page.goto(server + path)
            page.screenshot(path=str(Path(shots) / f"screenshot-{name}.png"), full_page=True)


def test_a_forged_cross_site_form_is_refused_in_the_browser(browser, server, db):
    """A page on another origin auto-posting to the UI: refused, nothing stored."""
    page = browser.new_page()
    page.goto(server + "/feed?user=ada")  # the victim has a session
    evil = (
        "<form id=f method=post action='" + server + "/click'>"
        "<input name=user value=ada><input name=item_id value=1><input name=liked value=1>"
        "<input name=csrf_token value=guess></form><script>document.getElementById('f').submit()</script>"
    )
    page.goto("data:text/html," + evil)
    page.wait_for_load_state()
    page.wait_for_timeout(300)
    assert clicks(db) == []
