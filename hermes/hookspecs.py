"""The contract between the hermes core and its plugins.

Every hook is called with keyword arguments only, so a spec can grow new arguments without
breaking older implementations. Built-in plugins (``hermes_feeds``, ``hermes_persona``,
``hermes_digest``, ``hermes_corpus`` and the core's :mod:`hermes.builtins`) implement
these exactly as a third-party package registered under the ``hermes`` entry-point group.
The value types hooks take and return live in :mod:`hermes.contract`, and nowhere else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

from .contract import (
    CandidateQuery,
    Component,
    Embedder,
    Migration,
    Prompt,
    ScoringContext,
    Signal,
    TokenVectors,
    Tool,
)

if TYPE_CHECKING:  # only for annotations: the hook contract imports nothing heavy
    import numpy as np
    import sqlite_utils
    import typer
    from starlette.applications import Starlette

    from .contract import MatrixView

hookspec = pluggy.HookspecMarker("hermes")
hookimpl = pluggy.HookimplMarker("hermes")


@hookspec
def hermes_register_tools() -> list[Tool]:
    """Return the tools this plugin provides.

    Each is a :class:`hermes.contract.Tool` made by the :func:`hermes.contract.tool`
    decorator: a function whose first parameter is ``db`` (passed by the caller) and whose
    other parameters are ``Annotated[type, Field(...)]`` hints, checked strictly at every call
    and served as the JSON schema; its docstring is the description and its
    :class:`~hermes.contract.Result` subclass the output schema. It returns the envelope and
    raises only :class:`~hermes.errors.HermesError` for a user mistake. The MCP server serves
    every tool collected here and ``hermes plugins`` lists them; the CLI and the web UI call
    the built-in tools they have commands and pages for (a plugin adds its own commands with
    :func:`hermes_register_commands`). A string parameter needs a ``max_length`` (or a fixed
    set of values): collecting a tool without one fails, naming it.
    """


@hookspec
def hermes_register_prompts() -> list[Prompt]:
    """Return the MCP prompts this plugin offers (:class:`hermes.contract.Prompt`): commands a
    host shows a person, each starting a conversation that uses the plugin's tools. The MCP
    server serves a prompt only when every tool it ``uses`` is served.
    """


@hookspec
def hermes_register_signals() -> list[str]:
    """Return the signal kinds this plugin writes (``"click"``, ``"progress"`` …).

    :func:`hermes.storage.signals.record_signal` refuses a kind that no plugin declared.
    """


@hookspec
def hermes_signal_written(db: sqlite_utils.Database, signal: Signal) -> list[dict] | None:
    """Observe a signal write from inside its transaction; return what you changed.

    Return a list of change records (e.g. the corpus plugin's membership changes: ``kind``,
    ``facet``, ``revision`` …) or ``None``; pluggy collects every observer's answer and
    :func:`hermes.storage.signals.record_signal` hands them, flattened, back to the writer
    (``Recorded.observed``), so a tool can report them without any shared state.

    Called after the signal's rows are written and before the ``BEGIN IMMEDIATE``
    transaction commits, so an observer's own writes (the corpus revision counter and change
    log) commit or roll back with the signal. Raise to abort the whole write. Do not open or
    commit transactions here and do not use sqlite-utils helpers that commit
    (``table.insert`` and friends): use ``db.execute``.
    """


@hookspec
def hermes_candidates(db: sqlite_utils.Database, user: dict, query: CandidateQuery, matrix: MatrixView) -> Any:
    """Restrict the items a ranking may return.

    :param user: the persona row (``id``, ``name``, ``interests``).
    :param query: what the caller asked for (recency window, exclude-clicked, keywords,
        tag, content type, explicit item ids, ``exclude_read``: the plugin that keeps read
        state leaves out what the persona has read).
    :param matrix: the in-memory embedding matrix; ``matrix.ids`` are the rankable items.
    :returns: ``None`` for no opinion, a boolean mask aligned with ``matrix.ids``, or an
        iterable of item ids to keep. The core keeps the intersection of all answers.
    """


@hookspec
def hermes_score(
    db: sqlite_utils.Database,
    user: dict,
    item_ids: np.ndarray,
    vectors: np.ndarray,
    context: ScoringContext,
) -> list[Component] | Component | None:
    """Score candidate items for a persona.

    :param item_ids: candidate ids (int64), in the order scores must follow.
    :param vectors: their embeddings, row-aligned with ``item_ids`` (float32, unit norm):
        the matrix itself when every item is a candidate, otherwise a no-copy view
        (:class:`hermes.ranking.matrix_rows.CandidateVectors`) — ``vectors @ w`` is computed
        without copying 100k rows, and ``np.asarray(vectors)`` gives a plain ``(n, d)`` array.
    :param context: shared per-ranking facts computed once by the core
        (:class:`hermes.contract.ScoringContext`): ``clicks`` (the persona's clicks as
        ``(item_id, liked)`` pairs, oldest first), ``n_clicks``, ``blend_weight``,
        ``embedder``, ``matrix``, ``rows`` (the candidates' row indices in ``matrix``),
        ``query`` (the :class:`hermes.contract.CandidateQuery`), and in int8 storage's
        second pass ``exact`` (the short list's positions and exact rows) with ``scratch``
        (a dict shared by both passes, for what the first computed over every candidate).
    :returns: one or more :class:`hermes.contract.Component` (a name, a role — ``profile``,
        ``behaviour`` or ``boost`` —, raw scores, whether it is active, and a detail dict for
        explanations), or ``None`` when the plugin has nothing to say. The core calibrates
        components to a common scale before blending them. A component's ``evidence``
        (absolute figures such as ``{"interest": cosines}``) feeds the item's ``match``
        (:mod:`hermes.ranking.match`); a ``boost`` moves items in the order but not their
        match.
    """


@hookspec
def hermes_migrations() -> list[Migration]:
    """Return this plugin's schema migrations, in order.

    Each :class:`hermes.contract.Migration` has a globally unique name (prefix it with the
    plugin's name) and a function of ``db``. Applied once, recorded in the ledger; a released
    migration is never edited, a new one is appended.
    """


@hookspec
def hermes_item_tags(
    item: dict, vector: np.ndarray | None, tokens: TokenVectors | None
) -> list[str] | dict[str, float] | None:
    """Propose tags for an item (keyphrases, a taxonomy, a classifier).

    Called during ingest once per new or changed item, right after the model embedded it
    (and once for every item of an existing archive, by ``hermes tags rebuild`` or the first
    ``hermes ingest`` after the tag migration); outside any transaction; keep it fast.

    :param item: ``id``, ``title``, ``summary`` (plain text), ``url``, ``tags`` (the feed's
        own categories), ``authors``, ``content_type``, ``feed_id``; do not modify it.
    :param vector: the item's embedding (unit norm), or ``None``.
    :param tokens: the model's per-token vectors of the same pass with their character
        spans in ``embedding_text(title, summary)`` (:class:`hermes.contract.TokenVectors`),
        or ``None`` when the embedder does not provide them.
    :returns: tags, or ``{tag: score}`` (higher is better), or ``None``. The core keeps a
        proposed tag only once at least two items carry it — a tag on one item links
        nothing in the topic graph and teaches the ranking nothing — and at most the six
        best per item; a tag equal to one of the feed's categories stays a category (the
        categories win). What is kept is stored in ``items.tags`` and marked in
        ``items.keyphrases``: it names the digest's topics, search finds it and explanations
        list it as a topic; the ranking's preference scorer does not count it (measured:
        tags read from an item's own text only added noise to what the embedding knows).
    """


@hookspec(firstresult=True)
def hermes_embedder() -> Embedder | None:
    """Provide the embedding model (first non-``None`` answer wins).

    The built-in default (``hermes.builtins.default_embedder``, registered ``trylast``) is
    all-MiniLM-L6-v2 loaded offline. Construction must be cheap: load weights lazily in
    ``embed``.
    """


@hookspec
def hermes_config_sections() -> list[str]:
    """Name the top-level sections of ``config.toml`` this plugin reads (``["corpus"]``).

    Once the plugins are registered, a section that is a near-miss of a declared one (or of
    the core's) is refused as a typo, and one nobody declared gets a warning line. The plugin
    reads its section through the one typed read of the file,
    ``hermes.config.settings().section(name, Model)``, checked by its own pydantic model.
    """


@hookspec
def hermes_register_commands(app: typer.Typer) -> None:
    """Add commands or sub-command groups to the ``hermes`` CLI."""


@hookspec
def hermes_register_routes(app: Starlette) -> None:
    """Add routes to the web app (``hermes web``).

    Every POST / PUT / PATCH / DELETE is checked by the app's CSRF middleware (a per-session
    token plus an Origin / Referer check) before it reaches a route: a form sends the page's
    ``csrf_token`` field, a script the ``X-CSRF-Token`` header (the token is in the page's
    ``<meta name="csrf-token">``). State changes must never happen on GET.
    """
