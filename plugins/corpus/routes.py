"""The corpus over HTTP: read-only JSON views in the tools' envelope.

``GET /api/corpus?user=``, ``/api/corpus/items?user=&facet=&limit=``,
``/api/corpus/changes?user=&since=&limit=``, ``/api/corpus/ranked?user=&limit=``,
``/api/corpus/entities?user=&limit=``. An unknown persona is a 404, a bad parameter a 400,
both with ``ok: false`` and a message. ``/api/corpus/export?user=&format=&facet=&since=``
answers with the export itself as a file download (the corpus page's download buttons). Everything here only reads, so GET is right and no
CSRF token is involved; writes go through the tools or the web UI's POST forms.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hermes.contract import fail
from hermes.errors import HermesError, InvalidInput, NotFound
from hermes.facekit.web import request_db
from hermes.storage.records import require_user
from hermes.tools import call_tool_status, collect_tools

from . import tools
from .export import check_format, export


def _int_param(request: Request, name: str, default: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        if default is None:
            raise InvalidInput(f"missing query parameter {name!r}")
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidInput(f"query parameter {name}={raw!r} is not a whole number") from None


def _user(request: Request) -> str:
    user = request.query_params.get("user", "").strip()
    if not user:
        raise InvalidInput("missing query parameter 'user' (a persona name)")
    return user


def _endpoint(tool, parse):
    """A GET endpoint: parse the query into ``tool``'s arguments and run it through the one
    call path (:func:`hermes.tools.call_tool_status`, worded for the web, source ui), on a
    per-request connection."""

    def run(request: Request) -> tuple[int, dict]:
        try:
            arguments = parse(request)
        except HermesError as exc:
            return 400, fail(str(exc), **tool.empty)
        db = request_db(request)
        # the collected tool, as every face calls it (it knows its plugin, for the messages)
        called = collect_tools().get(tool.name, tool)
        try:
            return call_tool_status(db, called, arguments, face="web")
        finally:
            db.conn.close()

    async def endpoint(request: Request) -> JSONResponse:
        status, body = await run_in_threadpool(run, request)
        return JSONResponse(body, status_code=status)

    endpoint.__name__ = f"api_{tool.name}"
    return endpoint


def _export(request: Request) -> tuple[int, dict | Response]:
    try:
        user = _user(request)
        fmt = check_format(request.query_params.get("format", "bibtex"))
        facet = request.query_params.get("facet", "all")
        since = _int_param(request, "since", 0)
    except HermesError as exc:
        return 400, fail(str(exc))
    db = request_db(request)
    try:
        u = require_user(db, user)
        r = export(db, u["id"], fmt.name, facet, since)
    except NotFound as exc:
        return 404, fail(str(exc))
    except HermesError as exc:
        return 400, fail(str(exc))
    finally:
        db.conn.close()
    # The persona name is the user's own text: keep only safe characters in the file name.
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in u["name"])[:60] or "corpus"
    suffix = f"-since-{since}" if since else ""
    name = f"hermes-{stem}-{facet}{suffix}.{fmt.extension}"
    return 200, Response(r.text.encode("utf-8"), media_type=f"{fmt.media_type}; charset=utf-8",
                         headers={"Content-Disposition": f'attachment; filename="{name}"',
                                  "X-Hermes-Revision": str(r.revision)})


async def api_corpus_export(request: Request):
    status, body = await run_in_threadpool(_export, request)
    return body if isinstance(body, Response) else JSONResponse(body, status_code=status)


ROUTES = [
    Route("/api/corpus/export", api_corpus_export, methods=["GET"], name="api_corpus_export"),
    Route("/api/corpus", _endpoint(tools.corpus, lambda r: {"user": _user(r)}),
          methods=["GET"], name="api_corpus"),
    Route("/api/corpus/items", _endpoint(tools.corpus_items, lambda r: {
        "user": _user(r), "facet": r.query_params.get("facet", "experienced"),
        "limit": _int_param(r, "limit", 50)}), methods=["GET"], name="api_corpus_items"),
    Route("/api/corpus/changes", _endpoint(tools.corpus_changes, lambda r: {
        "user": _user(r), "since": _int_param(r, "since", 0), "limit": _int_param(r, "limit", 200)}),
        methods=["GET"], name="api_corpus_changes"),
    Route("/api/corpus/ranked", _endpoint(tools.corpus_ranked, lambda r: {
        "user": _user(r), "limit": _int_param(r, "limit", 10)}),
        methods=["GET"], name="api_corpus_ranked"),
    Route("/api/corpus/entities", _endpoint(tools.corpus_entities, lambda r: {
        "user": _user(r), "limit": _int_param(r, "limit", 20)}),
        methods=["GET"], name="api_corpus_entities"),
]


def register(app) -> None:
    app.router.routes.extend(ROUTES)
