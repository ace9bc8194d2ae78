"""The web app (starlette, server-rendered). Plugins add routes through
``hermes_register_routes``; :func:`hermes.facekit.web.request_db` opens the app's database
for one request.

The pages (persona picker, feed, digest, corpus, feeds) live in :mod:`hermes.web.pages`.
Every unsafe request passes :class:`hermes.web.csrf.CSRFMiddleware`; its allow-list of Host
names (given by ``hermes web``) stops DNS-rebinding pages from talking to a loopback server.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from hermes import config
from hermes.facekit import faces

from ..contract import NAME_MAX, fail
from ..plugins import get_plugin_manager
from ..ranking.match import UNCOUNTED
from . import csrf, pages
from .render import FILTERS

HERE = Path(__file__).parent


def templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: feed text is never trusted
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    env.globals["NAME_MAX"] = NAME_MAX  # the persona form's maxlength
    env.globals["UNCOUNTED"] = UNCOUNTED  # an evidence figure that does not count for the match
    return Jinja2Templates(env=env)


def create_app(
    db_path: str | None = None,
    *,
    secret: bytes | None = None,
    allowed_hosts: list[str] | None = None,
) -> Starlette:
    """Build the app for one database; ``request.app.state.db_path`` tells routes which.

    :param secret: the CSRF signing secret (default: kept in ``HERMES_HOME/web_secret``).
    :param allowed_hosts: Host header values to accept (``hermes web`` passes the loopback
        names); ``None`` accepts any.
    """
    state: dict = {"secret": secret}

    def secret_fn() -> bytes:
        if state["secret"] is None:
            state["secret"] = csrf.load_secret()
        return state["secret"]

    tmpl = templates()

    async def refuse(scope, receive, send, message, status=403):
        request = Request(scope, receive)
        response = error_response(request, tmpl, status, message)
        await response(scope, receive, send)

    middleware = [
        Middleware(WebFace),
        Middleware(csrf.CSRFMiddleware, secret_fn=secret_fn, refuse=refuse, allowed_hosts=allowed_hosts),
    ]

    async def http_error(request: Request, exc: HTTPException):
        return error_response(request, tmpl, exc.status_code, exc.detail, back=getattr(exc, "back", None))

    async def server_error(request: Request, exc: Exception):
        return error_response(request, tmpl, 500, f"Something went wrong: {type(exc).__name__}: {exc}")

    app = Starlette(
        routes=[*pages.routes(), Mount("/static", StaticFiles(directory=HERE / "static"), name="static")],
        middleware=middleware,
        exception_handlers={HTTPException: http_error, 500: server_error},
    )
    app.state.db_path = str(config.db_path(db_path))
    app.state.templates = tmpl
    app.state.secret_fn = secret_fn
    get_plugin_manager().hook.hermes_register_routes(app=app)
    return app


class WebFace:
    """Every request is answered in the web face (:mod:`hermes.facekit.faces`): a message formed
    anywhere while answering it — a tool's, or the core's "unknown item" — names buttons and
    pages, whichever face started the server (``hermes web`` runs in the CLI's)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        with faces.speaking("web"):
            await self.app(scope, receive, send)


def error_response(request: Request, tmpl: Jinja2Templates, status: int, message: str, back: str | None = None):
    """The error page (or a JSON envelope for ``/api/`` paths and for hermes.js, which asks
    for JSON), with the security headers of every page: a 500 is answered outside the
    middleware that adds them to the others, and a refused Host before it. ``back``: the
    page the person came from, linked first."""
    if request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", ""):
        response = JSONResponse(fail(message), status_code=status)
    else:
        titles = {
            400: "Bad request",
            403: "Forbidden",
            404: "Not found",
            405: "Method not allowed",
            500: "Server error",
            503: "Not available",
        }
        response = tmpl.TemplateResponse(
            request,
            "error.html",
            {
                "status": status,
                "title": titles.get(status, "Error"),
                "message": message,
                "back": back,
                "csrf_token": request.scope.get("state", {}).get("csrf_token", ""),
            },
            status_code=status,
        )
    for name, value in csrf.SECURITY_HEADERS:
        response.headers[name.decode()] = value.decode()
    return response
