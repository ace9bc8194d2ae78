"""Cross-site request forgery protection for the web UI.

Every state-changing request is a POST that carries a per-session token, and its Origin (or,
failing that, Referer) must be this server. The session id lives in a cookie; the token is
``HMAC(secret, session id)``, so a page on another site can neither read nor compute it. The
secret is generated once and kept in ``HERMES_HOME/web_secret`` (mode 0600), so tokens survive
a restart. GET requests never change state and need no token.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path
from urllib.parse import urlsplit

from .. import config
from ..errors import HermesError

SESSION_COOKIE = "hermes_session"
FIELD = "csrf_token"
HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def load_secret(path: Path | None = None) -> bytes:
    """The app's signing secret, created on first use (readable by its owner only).

    An existing secret that another user owns, or that others may read or change, is refused:
    whoever can read it can forge every form of the UI (a local user, or a file planted in a
    shared HERMES_HOME before hermes first ran).
    """
    path = path or config.home() / "web_secret"
    existing = _read_secret(path)
    if existing:
        return existing
    config.private_dir(path.parent)
    value = secrets.token_hex(32)
    # O_EXCL + 0600: never world-readable, and two processes starting at once agree on
    # the winner's secret.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(100):  # another process is writing it right now
            existing = _read_secret(path)
            if existing:
                return existing
            time.sleep(0.01)
        raise HermesError(f"{path} holds no usable secret; delete it and start again") from None
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(value + "\n")
    return value.encode()


def _read_secret(path: Path) -> bytes | None:
    """The secret in ``path`` (None when missing or too short to be one), once its owner and
    mode are safe."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return None
    with fh:
        st = os.fstat(fh.fileno())  # of the file read, not of whatever the name points to later
        if st.st_uid != os.geteuid():
            raise HermesError(
                f"{path} belongs to another user; hermes will not sign forms with "
                "a secret someone else holds. Delete it (hermes makes a new one)."
            )
        if st.st_mode & 0o077:
            raise HermesError(
                f"{path} can be read or changed by other users (mode {st.st_mode & 0o777:o}); "
                "whoever reads it can forge the web UI's forms. Delete it (hermes makes a new "
                f"one) or make it private: chmod 600 {path}"
            )
        text = fh.read().decode("ascii", errors="replace").strip()
    return text.encode() if len(text) >= 32 and text.isascii() else None


def new_session_id() -> str:
    return secrets.token_urlsafe(32)


def token_for(secret: bytes, session_id: str) -> str:
    return hmac.new(secret, b"csrf\0" + session_id.encode(), hashlib.sha256).hexdigest()


def valid_token(secret: bytes, session_id: str | None, token: str | None) -> bool:
    if not session_id or not token:
        return False
    return hmac.compare_digest(token_for(secret, session_id), token)


def sign(secret: bytes, value: str) -> str:
    """``value.signature``: for small cookies (the flash message) that must not be forged."""
    mac = hmac.new(secret, b"sign\0" + value.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{value}.{mac}"


def unsign(secret: bytes, signed: str | None) -> str | None:
    if not signed or "." not in signed:
        return None
    value, mac = signed.rsplit(".", 1)
    return value if hmac.compare_digest(sign(secret, value), signed) else None


def same_origin(headers, scheme: str) -> tuple[bool, str]:
    """Whether Origin (else Referer) names this server; both absent is allowed (a non-browser
    client), because the token is still required. ``Origin: null`` (sandboxed frames,
    cross-origin redirects) is refused."""
    host = headers.get("host", "")
    origin = headers.get("origin")
    if origin is not None:
        if origin == "null":
            return False, "the request came from an opaque origin"
        parts = urlsplit(origin)
        if parts.scheme != scheme or parts.netloc.lower() != host.lower():
            return False, f"the request came from another site ({origin})"
        return True, ""
    referer = headers.get("referer")
    if referer:
        parts = urlsplit(referer)
        if parts.scheme != scheme or parts.netloc.lower() != host.lower():
            return False, "the request was referred by another site"
    return True, ""


# --- the middleware --------------------------------------------------------------------------

MAX_FORM_BYTES = 1024 * 1024
SECURITY_HEADERS = [
    # Only this server's own CSS (and no script at all unless served from here); feed HTML
    # cannot load remote images, frames or fonts even if the sanitiser missed something.
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"object-src 'none'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


class CSRFMiddleware:
    """Issues the session cookie, checks every unsafe request, adds security headers.

    The token may come as the ``csrf_token`` form field (urlencoded forms) or the
    ``X-CSRF-Token`` header (scripts, multipart). A refused request reaches no route, so
    nothing is written. ``refuse(scope, receive, send, message)`` renders the 403 page.
    """

    def __init__(self, app, *, secret_fn, refuse, allowed_hosts=None):
        self.app = app
        self.secret_fn = secret_fn
        self.refuse = refuse
        self.allowed_hosts = {h.lower() for h in allowed_hosts} if allowed_hosts is not None else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if self.allowed_hosts is not None and host_name(headers.get("host", "")) not in self.allowed_hosts:
            # DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 would
            # be same-origin with this server; its requests carry its own Host name.
            await self.refuse(
                scope,
                receive,
                send,
                "Refused: unknown Host name. Open hermes at http://127.0.0.1:PORT/ or http://localhost:PORT/.",
                400,
            )
            return
        secret = self.secret_fn()
        session_id = _cookie(headers.get("cookie", ""), SESSION_COOKIE)
        fresh = not _well_formed(session_id)
        if fresh:
            session_id = new_session_id()
        scope.setdefault("state", {})
        scope["state"]["csrf_token"] = token_for(secret, session_id)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                extra = list(SECURITY_HEADERS)
                if fresh:
                    extra.append(
                        (b"set-cookie", (f"{SESSION_COOKIE}={session_id}; Path=/; HttpOnly; SameSite=Strict").encode())
                    )
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k, v) for k, v in extra if k not in present or k == b"set-cookie"
                ]
            await send(message)

        if scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send_with_headers)
            return

        allowed, why = same_origin(headers, scope.get("scheme", "http"))
        if not allowed:
            await self.refuse(scope, receive, send_with_headers, f"Refused: {why}. Use the forms of this page.")
            return
        body, receive = await _buffer(receive)
        if body is None:
            await self.refuse(scope, receive, send_with_headers, "Refused: the form is too large.")
            return
        token = headers.get(HEADER)
        if token is None and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            from urllib.parse import parse_qs

            token = (parse_qs(body.decode("utf-8", "replace")).get(FIELD) or [None])[0]
        if fresh or not valid_token(secret, session_id, token):
            await self.refuse(
                scope,
                receive,
                send_with_headers,
                "Refused: the form's security token is missing or stale. Reload the page and try again.",
            )
            return
        await self.app(scope, receive, send_with_headers)


def host_name(host: str) -> str:
    """The name part of a Host header: ``[::1]:8765`` -> ``::1``, ``a.b:80`` -> ``a.b``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _well_formed(session_id: str | None) -> bool:
    return bool(session_id) and 20 <= len(session_id) <= 100 and all(c.isalnum() or c in "-_" for c in session_id)


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _buffer(receive):
    """Read the whole request body (at most MAX_FORM_BYTES) and a receive that replays it."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            return None, receive
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay
