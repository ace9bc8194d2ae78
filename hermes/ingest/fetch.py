"""Fetching a feed body: HTTP(S) with conditional GET, a whole-response deadline, a size
cap enforced while decoding (:mod:`.decode`), and an optional guard against private
addresses enforced where connections open (:mod:`.guard`). Local paths and ``file://`` URLs
are read from disk (offline demo, tests).

:func:`afetch` is the implementation (the pipeline shares one ``httpx.AsyncClient``
across feeds); :func:`fetch` is its synchronous face for tools and scripts.
"""

from __future__ import annotations

import asyncio
import re
import urllib.parse
import urllib.request
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path

import httpx

from .. import __version__
from .decode import ACCEPT_ENCODING, decoder_for
from .errors import FetchError
from .guard import GuardedTransport
from .locations import is_local, local_path

DEFAULT_TIMEOUT = 20.0
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_REDIRECTS = 5
USER_AGENT = f"hermes/{__version__} (self-hosted feed reader)"
ACCEPT = (
    "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"
)
REDIRECTS = {301, 302, 303, 307, 308}


@dataclass
class FetchResult:
    url: str
    final_url: str
    status: int
    body: bytes | None  # None when not_modified
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False
    headers: dict = field(default_factory=dict)
    retry_after: str | None = None


def _read_local(url: str, etag, last_modified, max_bytes: int) -> FetchResult:
    path = local_path(url)
    try:
        st = path.stat()
        if not path.is_file():
            raise FetchError(f"not a file: {path}")
        # The file's mtime and size play the role of Last-Modified / ETag, so re-ingesting an
        # unchanged local feed costs a stat, like a 304.
        stamp = formatdate(st.st_mtime, usegmt=True)
        tag = f'"{st.st_mtime_ns:x}-{st.st_size:x}"'
        if etag == tag:
            return FetchResult(url, url, 304, None, tag, stamp, True)
        if st.st_size > max_bytes:
            raise FetchError(f"body over the size cap ({st.st_size} > {max_bytes} bytes)")
        body = path.read_bytes()
    except FileNotFoundError:
        web = web_address_hint(path)
        hint = (
            f" (did you mean the web feed {web}? a web address needs its http:// or https://)"
            if web
            else ""
            if path.is_absolute()
            else " (for a web feed give the full http(s):// URL)"
        )
        raise FetchError(f"file not found: {path}{hint}") from None
    except PermissionError:
        raise FetchError(f"permission denied: {path}") from None
    except IsADirectoryError:
        raise FetchError(f"not a file: {path}") from None
    except OSError as exc:
        raise FetchError(f"cannot read {path}: {exc.strerror or exc}") from None
    return FetchResult(url, url, 200, body, tag, stamp, False)


# A host as a person types it before a path: localhost, an IPv4 address or a dotted name,
# with an optional port ("127.0.0.1:8911/blog.xml", "example.org/feed").
_HOST = re.compile(
    r"(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+([a-z]{2,24}))(:\d{1,5})?",
    re.I,
)
# a dotted name ending like these is a file name ("blog.xml"), not a domain
_FILE_ENDINGS = {"xml", "rss", "atom", "rdf", "json", "txt", "html", "htm", "opml", "bib", "ris", "gz", "zip"}


def web_address_hint(path: Path) -> str | None:
    """``http://127.0.0.1:8911/blog.xml`` when a path that does not exist reads as a web
    address typed without its scheme (``127.0.0.1:8911/blog.xml``, resolved against the
    working directory to ``/home/me/127.0.0.1:8911/blog.xml``); None otherwise."""
    typed = path
    if path.is_absolute():
        try:
            typed = path.relative_to(Path.cwd())
        except ValueError:
            return None
    parts = typed.parts
    if not parts or parts[0] in (".", ".."):
        return None
    m = _HOST.fullmatch(parts[0])
    if not m or (m.group(1) and not m.group(2) and m.group(1).lower() in _FILE_ENDINGS):
        return None
    if (Path.cwd() / parts[0]).exists():
        return None  # a real folder of that name: a missing file in it, not a web address
    return "http://" + "/".join(parts)


async def _request(client, url: str, headers: dict):
    """Open a streaming GET for one hop (no redirect following)."""
    request = client.build_request("GET", url, headers=headers)
    return await client.send(request, stream=True, follow_redirects=False)


async def _read_capped(response: httpx.Response, max_bytes: int) -> bytes:
    declared = response.headers.get("content-length")
    codings = response.headers.get_list("content-encoding")
    if declared and declared.isdigit() and not codings and int(declared) > max_bytes:
        raise FetchError(f"body over the size cap ({declared} > {max_bytes} bytes)", kind="body over the size cap")
    decoder = decoder_for(codings)
    body = bytearray()

    def add(pieces) -> None:
        # Each decoded piece is counted before the next one is inflated, so a bomb stops
        # at the cap plus one piece, whatever its ratio.
        for piece in pieces:
            if len(body) + len(piece) > max_bytes:
                raise FetchError(f"body over the size cap (more than {max_bytes} bytes)", kind="body over the size cap")
            body.extend(piece)

    async for raw in response.aiter_raw():
        add(decoder.decode(raw))
    add(decoder.finish())
    return bytes(body)


async def _fetch_http(client, url, etag, last_modified, max_bytes, accept: str = ACCEPT) -> FetchResult:
    headers = {"User-Agent": USER_AGENT, "Accept": accept, "Accept-Encoding": ACCEPT_ENCODING}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    current = url
    for hop in range(MAX_REDIRECTS + 1):
        scheme = urllib.parse.urlsplit(current).scheme.lower()
        if scheme not in ("http", "https"):
            # Also stops a redirect from a web feed to file:// (reading the user's disk).
            what = "redirect to" if hop else "fetch"
            raise FetchError(
                f"refused {what} {scheme} URL {current!r}: only http(s) is fetched",
                kind=f"refused {what} a non-http(s) URL",
            )
        response = await _request(client, current, headers)
        try:
            if response.status_code in REDIRECTS and "location" in response.headers:
                current = urllib.parse.urljoin(current, response.headers["location"])
                continue
            hdrs = {k.lower(): v for k, v in response.headers.items()}
            common = dict(
                etag=hdrs.get("etag"),
                last_modified=hdrs.get("last-modified"),
                headers=hdrs,
                retry_after=hdrs.get("retry-after"),
            )
            if response.status_code == 304:
                common["etag"] = common["etag"] or etag
                common["last_modified"] = common["last_modified"] or last_modified
                return FetchResult(url, current, 304, None, not_modified=True, **common)
            if response.status_code >= 400 or response.status_code < 200:
                reason = response.reason_phrase or ""
                raise FetchError(
                    f"HTTP {response.status_code} {reason}".strip(),
                    kind=f"HTTP {response.status_code}",
                    status=response.status_code,
                    retry_after=hdrs.get("retry-after"),
                )
            body = await _read_capped(response, max_bytes)
            return FetchResult(url, current, response.status_code, body, **common)
        finally:
            await response.aclose()
    raise FetchError(f"too many redirects (more than {MAX_REDIRECTS})")


_GUARDED: weakref.WeakSet = weakref.WeakSet()


def new_client(timeout: float = DEFAULT_TIMEOUT, *, allow_private: bool = True) -> httpx.AsyncClient:
    """An ``AsyncClient`` suited to :func:`afetch` (share one across many fetches with the
    same ``allow_private``); ``allow_private=False`` opens every connection through the
    private-address guard.

    ``trust_env=False``: no proxy from the environment (a proxy resolves names itself, which
    would void the private-address guard) and no ``.netrc`` credentials sent to feed hosts.
    """
    limits = httpx.Limits(max_connections=32)
    transport = None if allow_private else GuardedTransport(limits=limits)
    client = httpx.AsyncClient(
        timeout=timeout, follow_redirects=False, trust_env=False, limits=limits, transport=transport
    )
    if not allow_private:
        _GUARDED.add(client)
    return client


async def afetch(
    url: str,
    *,
    client: httpx.AsyncClient | None = None,
    etag: str | None = None,
    last_modified: str | None = None,
    timeout: float | None = None,
    max_bytes: int | None = None,
    allow_private: bool = True,
    accept: str = ACCEPT,
) -> FetchResult:
    """Fetch ``url`` (http(s), ``file://`` or a local path); raise :class:`FetchError`.

    ``timeout`` bounds the whole fetch — DNS, connect, every redirect and the full body —
    so a server dripping one byte a second cannot hold a feed (httpx's own timeouts are per
    read). ``allow_private=False`` is the guarded fetch of a URL an agent chose: local files
    and every connection to a non-public address are refused (a ``client`` must then come
    from ``new_client(allow_private=False)``), and a failure is reported by its class only
    (:meth:`FetchError.generic`), never with what a server said. ``accept`` is the
    ``Accept`` header (feed types by default; metadata lookups ask for CSL-JSON or HTML).
    """
    try:
        return await _afetch(url, client, etag, last_modified, timeout, max_bytes, allow_private, accept)
    except FetchError as exc:
        if allow_private:
            raise
        raise exc.generic() from None


async def _afetch(url, client, etag, last_modified, timeout, max_bytes, allow_private, accept):
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    url = url.strip()
    if is_local(url):
        if not allow_private:
            raise FetchError(
                f"refused local file {url!r}: only http(s) URLs are allowed here", kind="refused: a local file"
            )
        return await asyncio.to_thread(_read_local, url, etag, last_modified, max_bytes)
    if client is not None and not allow_private and client not in _GUARDED:
        raise ValueError("a guarded fetch needs a client from new_client(allow_private=False)")
    own = client is None
    client = client or new_client(timeout, allow_private=allow_private)
    try:
        async with asyncio.timeout(timeout):
            return await _fetch_http(client, url, etag, last_modified, max_bytes, accept)
    except TimeoutError:
        raise FetchError(f"timeout after {timeout:g} s") from None
    except httpx.TimeoutException:
        raise FetchError(f"timeout after {timeout:g} s") from None
    except httpx.InvalidURL as exc:
        raise FetchError(f"invalid URL {url!r}: {exc}", kind="invalid URL") from None
    except httpx.HTTPError as exc:
        raise FetchError(_describe(exc), kind=_kind(exc)) from None
    finally:
        if own:
            await client.aclose()


def _kind(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "connection failed"
    return type(exc).__name__


def _describe(exc: httpx.HTTPError) -> str:
    name = type(exc).__name__
    text = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, httpx.ConnectError):
        return f"connection failed: {text or name}"
    return f"{name}: {text}" if text else name


def fetch(
    url: str,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    timeout: float | None = None,
    max_bytes: int | None = None,
    allow_private: bool = True,
    accept: str = ACCEPT,
) -> FetchResult:
    """Synchronous :func:`afetch` (same arguments and errors, its own client)."""
    kwargs = dict(
        etag=etag,
        last_modified=last_modified,
        timeout=timeout,
        max_bytes=max_bytes,
        allow_private=allow_private,
        accept=accept,
    )
    return run_sync(lambda: afetch(url, **kwargs))


def run_sync(make_coro):
    """Run a coroutine to completion from sync code, even when the calling thread already
    runs an event loop (an async tool or web handler): then it runs on a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make_coro())).result()


__all__ = ["FetchError", "FetchResult", "afetch", "fetch", "is_local", "local_path", "new_client", "run_sync"]
