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

from hermes import arguments
from hermes.contract import fail
from hermes.errors import HermesError, NotFound
from hermes.facekit.web import request_db
from hermes.storage.records import require_user
from hermes.tools import call_tool_status, collect_tools

from . import tools
from .exchange import export_corpus
from .export import check_format, export


def _query(request: Request, tool) -> dict:
    """The query string's values of ``tool``'s parameters, as typed: the tool's own model reads
    them (``limit=5`` is 5) and refuses what it cannot read, in its words — the routes have no
    checks of their own. Other query parameters (a cache buster) are not the tool's."""
    names = {p.name for p in tool.arguments()}
    return {k: v for k, v in request.query_params.items() if k in names}


def _endpoint(tool):
    """A GET endpoint: the query as ``tool``'s arguments, run through the one call path
    (:func:`hermes.tools.call_tool_status`, worded for the web, source ui), on a per-request
    connection."""

    def run(request: Request) -> tuple[int, dict]:
        db = request_db(request)
        # the collected tool, as every face calls it (it knows its plugin, for the messages)
        called = collect_tools().get(tool.name, tool)
        try:
            with arguments.typed_as_text():
                return call_tool_status(db, called, _query(request, tool), face="web")
        finally:
            db.conn.close()

    async def endpoint(request: Request) -> JSONResponse:
        status, body = await run_in_threadpool(run, request)
        return JSONResponse(body, status_code=status)

    endpoint.__name__ = f"api_{tool.name}"
    return endpoint


def _export(request: Request) -> tuple[int, dict | Response]:
    """The whole export as a file: the query read by the export_corpus tool's model (the one
    check of a format, facet and revision), the text from the exporter itself (no budget)."""
    try:
        with arguments.typed_as_text():
            asked = arguments.validate("export_corpus", export_corpus.argument_model, _query(request, export_corpus))
        fmt, facet, since = check_format(asked["format"]), asked["facet"], asked["since"]
    except HermesError as exc:
        return 400, fail(str(exc))
    db = request_db(request)
    try:
        u = require_user(db, asked["user"])
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
    return 200, Response(
        r.text.encode("utf-8"),
        media_type=f"{fmt.media_type}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"', "X-Hermes-Revision": str(r.revision)},
    )


async def api_corpus_export(request: Request):
    status, body = await run_in_threadpool(_export, request)
    return body if isinstance(body, Response) else JSONResponse(body, status_code=status)


ROUTES = [
    Route("/api/corpus/export", api_corpus_export, methods=["GET"], name="api_corpus_export"),
    Route("/api/corpus", _endpoint(tools.corpus), methods=["GET"], name="api_corpus"),
    Route("/api/corpus/items", _endpoint(tools.corpus_items), methods=["GET"], name="api_corpus_items"),
    Route("/api/corpus/changes", _endpoint(tools.corpus_changes), methods=["GET"], name="api_corpus_changes"),
    Route("/api/corpus/ranked", _endpoint(tools.corpus_ranked), methods=["GET"], name="api_corpus_ranked"),
    Route("/api/corpus/entities", _endpoint(tools.corpus_entities), methods=["GET"], name="api_corpus_entities"),
]


def register(app) -> None:
    app.router.routes.extend(ROUTES)
