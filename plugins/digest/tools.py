"""The digest tool group: ``kg_communities`` and ``digest`` (seed 001).

The digest composes what exists — the one ranking path (bar first, as every feed face), the
tag graph's communities, the one explanation read off that same ranking — and adds no
scoring, no storage of its own and no model call. Items whose match is weak or none sit
below the persona's bar: counted, and listed only when asked. The calling agent writes the
prose; the tool returns structure.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hermes.answers import ANSWER_BUDGET, budgeted, compact, size_of
from hermes.contract import MAX_DAYS, Answer, CandidateQuery, Result, nothing, ok, tool
from hermes.embed import get_embedder
from hermes.facekit.faces import RATE_HELD, SHOW_BELOW, SHOW_CLOSEST, Say, plural
from hermes.ingest.refresher import embedding, new_items
from hermes.ingest.store import not_embedded
from hermes.plugins import get_plugin_manager
from hermes.ranking.explain_words import held_by_clicks
from hermes.ranking.matrix import get_matrix
from hermes.ranking.page import ranked_page
from hermes.ranking.rank import Ranking
from hermes.storage.clicks import click_counts
from hermes.storage.records import item_rows, require_user
from hermes.text.clip import clip
from hermes.tools import User
from hermes.topics import tag_graph, window_topics

from .answers import Community, DigestItem, SavedItem, Topic

MAX_PER_TOPIC = 50
#: a topic's items when the digest overflows and no per_topic is asked for: one big topic
#: does not crowd out the rest
PER_TOPIC = 3
MAX_LIMIT = 200
MAX_COMMUNITIES = 500
SUMMARY_CHARS = 280
TOP_TAGS = 8

GROUP = "digest"


class Quality(Answer):
    clicks: int = 0
    likes: int = 0
    dislikes: int = 0
    classifier_active: bool = False
    behaviour_weight: float = 0.0
    caveat: str | None = None


class Saved(Answer):
    label: str = "saved, not read yet"
    items: list[SavedItem] = []
    n_total: int = 0


class BelowBar(Answer):
    label: str = "below your bar"
    items: list[DigestItem] = []
    n_total: int = 0


class Digest(Result):
    topics: list[Topic] = []
    #: items whose explanation was cut to match and reason, and items left out, to keep the
    #: answer within its budget (the lowest ranked first)
    shortened: int = 0
    left_out: int = 0
    unclustered: list[DigestItem] = []
    # an object a refused call carries empty ({}), as every tool's refusal does
    # (hermes.answers): a zeroed ranking_quality read as a persona with no clicks
    ranking_quality: Quality = {}
    window_days: int | None = None
    n_items: int = 0
    #: how many unread items of the window clear the bar: all of them, where ``n_items``
    #: counts the best ones grouped (at most ``limit``)
    n_cleared: int = 0
    n_in_window: int = 0
    saved: Saved = {}
    below_bar: BelowBar = {}
    #: true when the call was fine and there is nothing to show (ok stays false, seed 001)
    nothing_to_show: bool = False


class Communities(Result):
    communities: list[Community] = []
    n_communities: int = 0
    n_tags: int = 0
    n_nodes: int = 0
    singletons_left_out: int = 0
    n_items: int = 0
    #: true when the call was fine and there is no topic yet
    nothing_to_show: bool = False


# What a reader can do next, in the words of each face (hermes.facekit.faces).
WIDEN = Say(
    mcp="widen the window with a larger days value",
    cli="widen the window with --since-days N",
    web="choose a longer period",
)
N_TOTAL = Say(mcp="; n_total gives each topic's full count", cli="", web="")
SEE_SAVED = Say(mcp=" (see saved)", cli=" (listed below)", web=" (listed below)")
SEE_CAVEAT = Say(mcp="see ranking_quality.caveat", cli="see the caveat below", web="see the note below")
BAR_ADVICE = Say(
    mcp="widen the window, add feeds on the persona's topics (add_feed), or like items",
    cli="widen the window (--since-days N), add feeds on the persona's topics "
    "(`hermes feeds add URL`), or like items (`hermes like USER ITEM`)",
    web="choose a longer period, add feeds on your topics, or ✓ items you like",
)


# --- kg_communities -------------------------------------------------------------------------


def community_dict(c: tag_graph.Community, top: int = TOP_TAGS) -> dict:
    return {"label": c.label, "size": c.size, "n_items": c.n_items, "top_tags": list(c.names[:top])}


@tool(GROUP, result=Communities, read_only=True, idempotent=True, untrusted=True, title="Topics of the archive")
def kg_communities(
    db,
    limit: Annotated[int, Field(ge=1, le=MAX_COMMUNITIES)] = 20,
) -> dict:
    """The topics of the whole archive: tag communities, largest first. No persona needed."""
    graph = tag_graph.get_graph(db)
    stats = {
        "n_communities": len(graph.communities),
        "n_tags": graph.n_tags,
        "n_nodes": graph.n_nodes,
        "singletons_left_out": graph.left_out,
        "n_items": graph.n_items,
    }
    if not graph.communities:
        why = (
            f"no items yet; {new_items(db)}"
            if not graph.n_items
            else f"no tag occurs on two or more items yet, so there is no graph; {new_items(db)}"
        )
        return nothing(f"No topic communities: {why}.", **{**Communities.empty(), **stats})
    shown = graph.communities[:limit]
    return ok(
        f"{plural(len(graph.communities), 'topic community', 'topic communities')} over "
        f"{plural(graph.n_nodes, 'tag')} (showing {len(shown)}); {plural(graph.left_out, 'tag')} "
        "found on one item only left out.",
        communities=[community_dict(c) for c in shown],
        **stats,
        nothing_to_show=False,
    )


# --- digest ---------------------------------------------------------------------------------


def ranking_quality(db, user_id: int, ranking: Ranking | None = None) -> dict:
    """How far the persona's ranking can be trusted: clicks, whether the classifier runs.

    The classifier's state is read from the ranking when there is one (it is the truth);
    without one, the scorer's rule applies: it needs both a like and a dislike."""
    counted = click_counts(db, user_id)
    clicks, likes, dislikes = counted["clicks"], counted["likes"], counted["dislikes"]
    comp = ranking.components.get("classifier") if ranking is not None else None
    active = bool(comp.active) if comp is not None else (likes > 0 and dislikes > 0)
    if active:
        caveat = None
    elif clicks == 0:
        caveat = (
            "No feedback yet: this order comes only from similarity to the persona's "
            "interests text. Like or dislike a few items to start training the ranking."
        )
    elif not (likes and dislikes):
        only, missing = ("likes", "dislike") if likes else ("dislikes", "like")
        caveat = (
            f"{'The only click is a ' + only[:-1] if clicks == 1 else f'All {clicks} clicks are {only}'}"
            ", so the classifier has never been trained (it "
            f"needs at least one like and one dislike): the order rests on similarity to "
            f"the interests text and per-tag preferences. One {missing} would activate it."
        )
    else:
        reason = (comp.detail or {}).get("reason") if comp is not None else None
        caveat = (
            "The classifier is not active"
            + (f" ({reason})" if reason else "")
            + ": the order rests on similarity to the interests text and per-tag preferences."
        )
    weight = ranking.blend_weight if ranking is not None else clicks / (clicks + 5.0)
    return {
        "clicks": clicks,
        "likes": likes,
        "dislikes": dislikes,
        "classifier_active": active,
        "behaviour_weight": round(float(weight), 3),
        "caveat": caveat,
    }


def group_window(db, graph: tag_graph.TagGraph, items: list[dict]) -> window_topics.Grouping:
    """The topics of the digest's items (dicts of ``item_rows``), found among them
    (:mod:`hermes.topics.window_topics`) rather than read off the archive's fixed communities: a
    digest of one field splits into its sub-fields."""
    vectors = in_archive(db, window_topics.vectors_of(db, [i["id"] for i in items]))
    return window_topics.group(
        graph, [window_topics.WindowItem(i["id"], i["tags"], i.get("feed_id"), vectors.get(i["id"])) for i in items]
    )


def in_archive(db, vectors: dict) -> dict:
    """The window's vectors read in the context of the archive (``window_topics.in_archive``):
    their nearest items among every item the ranking's model embedded (its matrix, in memory
    already for the ranking); as they are when the matrix is of another dimension."""
    if not vectors:
        return vectors
    embedder = get_embedder()
    matrix = get_matrix(db, embedder.name, embedder.dimension)
    if len(matrix) == 0 or any(len(v) != matrix.dimension for v in vectors.values()):
        return vectors
    return window_topics.in_archive(vectors, matrix.ids, lambda w: matrix.product(w), matrix.approx_rows)


def _community_label(graph: tag_graph.TagGraph, topic: window_topics.Topic) -> str:
    """The archive community the topic's tags say the most about (what the web UI's topic
    link filters the feed by); the topic's own label when none of its tags is a node."""
    community, _ = graph.assign(list(topic.tags))
    return community.label if community is not None else topic.label


def _item_entry(item: dict, ranking: Ranking, position: int, matched, why: dict) -> dict:
    summary = " ".join((item.get("summary") or "").split())
    summary = clip(summary, SUMMARY_CHARS)
    return {
        "id": item["id"],
        "rank": position + 1,
        "title": item["title"],
        "url": item["url"],
        "enclosure": item.get("enclosure"),
        "published": item["published"],
        "date_source": item.get("date_source"),
        "source": item["source"],
        "content_type": item["content_type"],
        "tags": item["tags"],
        "matched_tags": list(matched),
        "summary": summary,
        "score": round(float(ranking.scores[position]), 4),
        "match": why["match"],
        "reason": why["reason"],
        # each top part's evidence is the explanation's own (said once, not twice)
        "explanation": {
            **{k: why[k] for k in ("match", "evidence", "phrases", "reason")},
            "top": [{k: v for k, v in t.items() if k != "evidence"} for t in why["top"]],
        },
    }


#: room kept for the message beside the items when the digest is fitted to its budget
MESSAGE_ROOM = 800


def _short(explanation: dict | None) -> dict | None:
    """An explanation cut to match and reason (an item of the compact answer has none)."""
    return None if explanation is None else {k: explanation[k] for k in ("match", "reason")}


def within_budget(payload: dict, budget: int = ANSWER_BUDGET) -> tuple[int, int]:
    """Fit the digest in ``budget`` characters and return (explanations shortened, items
    left out); (0, 0) where answers are not budgeted (a person's CLI or web digest is whole).

    The items are those of the answer's topics, ``unclustered`` and ``below_bar`` sections,
    taken in the window's rank order (``saved`` is at most ``per_topic`` short items, never
    cut). As many items are kept as fit with the best one whole and the rest shortened to
    match and reason; of those, the best ranked are given back whole while they fit. So the
    items split by rank: the best whole, then the shortened, then the left out — and
    ``shortened`` counts only items still in the answer: whole + shortened + left out is
    every item the answer would otherwise hold."""
    if not budgeted():
        return 0, 0
    lists = [t["items"] for t in payload["topics"]] + [payload["unclustered"], payload["below_bar"]["items"]]
    entries = sorted(((e["rank"], rows, e) for rows in lists for e in rows), key=lambda entry: entry[0])
    if not entries:
        return 0, 0
    whole = [size_of(e) + 1 for _, _, e in entries]  # with its comma
    short = [
        w - size_of(e.get("explanation")) + size_of(_short(e.get("explanation")))
        for w, (_, _, e) in zip(whole, entries, strict=True)
    ]
    rest = size_of(payload) - sum(whole) + MESSAGE_ROOM
    if rest + sum(whole) <= budget:
        return 0, 0
    # the most items kept: the best whole (when it fits at all), the others shortened
    kept, used = 0, rest
    for n in range(len(entries)):
        size = whole[0] if n == 0 and rest + whole[0] <= budget else short[n]
        if used + size > budget:
            break
        used, kept = used + size, n + 1
    kept = max(kept, 1)  # one item even past the budget: an answer that shows none helps nobody
    # then the best ranked of them whole while that fits
    used = rest + sum(short[:kept])
    n_whole = 0
    while n_whole < kept and used - short[n_whole] + whole[n_whole] <= budget:
        used += whole[n_whole] - short[n_whole]
        n_whole += 1
    shortened = 0
    for _, _, entry in entries[n_whole:kept]:
        if (short_form := _short(entry.get("explanation"))) and short_form != entry["explanation"]:
            entry["explanation"] = short_form
            shortened += 1
    gone = {id(entry) for _, _, entry in entries[kept:]}
    for rows in lists:
        rows[:] = [entry for entry in rows if id(entry) not in gone]
    return shortened, len(entries) - kept


def budget_words(whole: int, shortened: int, left_out: int, below_bar: bool) -> str:
    """What the message says of a digest fitted to its budget (``whole`` items in it whole,
    ``shortened`` cut to match and reason, ``left_out`` not in it), and what the reader can
    do about it."""
    if not (shortened or left_out):
        return ""
    cut = []
    if shortened:
        if whole:
            cut.append("the best item is whole" if whole == 1 else f"the best {whole} items are whole")
        cut.append(
            (f"the next {shortened} give" if shortened > 1 else "the next gives") + " only match and reason"
            if whole
            else f"all {shortened} give only match and reason"
        )
    if left_out:
        cut.append(f"the {plural(left_out, 'lowest-ranked item')} {'was' if left_out == 1 else 'were'} left out")
    smaller = "a smaller limit or per_topic" + (", or below_bar=false," if below_bar else "")
    fix = f"{smaller} shows them all whole" if shortened else f"{smaller} fits them all"
    if shortened:
        fix += "; without detail=true the items are compact and more fit"
    listed = ", ".join(cut[:-1]) + (" and " if len(cut) > 1 else "") + cut[-1]
    return f" To keep this answer under {ANSWER_BUDGET:,} characters, {listed}: {fix}."


def saved_not_read(db, user_id: int, cap: int) -> dict:
    """The persona's saved-for-later items it has not read, newest saved first.

    Read through the corpus plugin's published API (``membership.facet_entries``, facet
    ``saved`` = favorited minus experienced) when that plugin is loaded; empty otherwise.
    Not limited to the window: a saved item waits until it is read."""
    section = {"label": "saved, not read yet", "items": [], "n_total": 0}
    corpus = get_plugin_manager().get_plugin("corpus")
    if corpus is None:  # no corpus plugin: no saved items to show
        return section
    rows = corpus.membership.facet_entries(db, user_id, "saved")
    section["n_total"] = len(rows)
    shown = rows[:cap]
    found = item_rows(db, [r[0] for r in shown])
    for item_id, added in shown:
        item = found.get(item_id)
        if item is not None:
            section["items"].append(
                {
                    "id": item_id,
                    "title": item["title"],
                    "url": item["url"],
                    "published": item["published"],
                    "source": item["source"],
                    "tags": item["tags"],
                    "saved_at": added,
                }
            )
    return section


@tool(GROUP, result=Digest, read_only=True, idempotent=True, untrusted=True, title="What is worth reading")
def digest(
    db,
    user: User,
    days: Annotated[int, Field(ge=1, le=MAX_DAYS, description="The last N days.")] = 7,
    per_topic: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_PER_TOPIC,
            description=f"Most items per topic; omitted: {PER_TOPIC}, only if more clear the bar than `limit`.",
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Best items grouped.")] = 30,
    below_bar: Annotated[bool, Field(description="Also list the weak and none matches.")] = False,
    detail: Annotated[bool, Field(description="Add summary, tags, explanation.")] = False,
) -> dict:
    """A persona's best unread items of the last `days` days by topic, each with match and
    why; also unclustered, below-bar, saved items, ranking_quality. Write the summary yourself."""
    persona = require_user(db, user)
    ranking, page = ranked_page(
        db, persona, CandidateQuery(since_days=days, exclude_read=True), limit=limit, below_bar=below_bar
    )
    n_in_window = ranking.n_candidates
    quality = ranking_quality(db, persona["id"], ranking if n_in_window else None)
    saved = saved_not_read(db, persona["id"], per_topic or PER_TOPIC)
    if not n_in_window:
        pending = not_embedded(db)
        advice = (
            f"{plural(pending, 'item')} {'is' if pending == 1 else 'are'} stored but not "
            f"embedded yet, so nothing ranks them; {embedding(db)}"
            if pending
            else f"{new_items(db).sentence()}, or {WIDEN}"
        )
        return nothing(
            f"No unread items published in the last {plural(days, 'day')} for {persona['name']!r}. {advice}.",
            **{
                **Digest.empty(),
                "ranking_quality": quality,
                "window_days": days,
                "saved": saved,
                "below_bar": BelowBar().model_dump(),  # an answer's section, empty
            },
        )

    below = {"label": "below your bar", "items": [], "n_total": ranking.n_below_bar}
    n_above = sum(1 for p in range(len(ranking.item_ids)) if ranking.above_bar(p))
    # PER_TOPIC keeps one big topic from crowding out the rest when the digest cannot show
    # every item that clears the bar (more cleared than the best ``limit`` it groups); when
    # it shows them all, no topic hides an item it has room for (trial finding). A per_topic
    # asked for is kept either way.
    cut = per_topic or (PER_TOPIC if ranking.n_above_bar > n_above else None)
    # an empty page groups nothing: the tag graph is neither built nor cached for it (a
    # digest with nothing to show writes nothing)
    graph = tag_graph.get_graph(db) if page else None
    grouping = group_window(db, graph, [s.row for s in page if ranking.above_bar(s.position)]) if page else None
    topic_of = {i: t for t in grouping.topics for i in t.members} if grouping else {}
    topics: dict[int, dict] = {}  # by id(Topic), in the order of each topic's best item
    unclustered: list[dict] = []
    for position, item, why in ((s.position, s.row, s.why) for s in page):
        found = topic_of.get(item["id"])
        if not ranking.above_bar(position):
            # below the bar: not grouped; the tags that would tie it to a topic of the archive
            _, matched = graph.assign(item["tags"], item.get("feed_id"))
            below["items"].append(_item_entry(item, ranking, position, matched, why))
            continue
        entry = _item_entry(item, ranking, position, found.matched[item["id"]] if found else [], why)
        if found is None:
            unclustered.append(entry)
            continue
        topic = topics.setdefault(
            id(found),
            {
                "label": found.label,
                "community": _community_label(graph, found),
                "tags": list(found.tags),
                "items": [],
                "n_total": len(found.members),
            },
        )
        if cut is None or len(topic["items"]) < cut:
            topic["items"].append(entry)
    ordered = list(topics.values())

    clustered = sum(t["n_total"] for t in ordered)
    n_unclustered, n_topics = len(unclustered), len(ordered)  # before the budget may leave some out
    payload = {
        "topics": ordered,
        "unclustered": unclustered,
        "ranking_quality": quality,
        "window_days": days,
        "n_items": n_above,
        "n_cleared": ranking.n_above_bar,
        "n_in_window": n_in_window,
        "saved": saved,
        "below_bar": below,
    }
    if not detail and budgeted():
        # an agent's answer is compact by default, as list_feed's page: what choosing needs
        # (the explanation alone was about 2,000 characters an item); the CLI and the web
        # page show the whole digest
        for rows in [t["items"] for t in ordered] + [unclustered, below["items"]]:
            for entry in rows:
                compact(entry)
    # the budget protects an agent's context; the CLI and the web page show the whole digest
    shortened, left_out = within_budget(payload, ANSWER_BUDGET)  # read here: a test may lower it
    shown = sum(len(t["items"]) for t in ordered)  # what the answer holds
    held = sum(len(rows) for rows in [t["items"] for t in ordered] + [unclustered, below["items"]])
    held_down = held_by_clicks(ranking.n_vetoed, ranking.n_clicks)
    empty_bar = (
        f"Nothing unread from the last {plural(days, 'day')} clears {persona['name']}'s "
        f"bar: none of the {plural(n_in_window, 'item')} is a strong or good match"
    )
    if not n_above and held_down:
        # the classifier is why the bar is empty: rating is the next step, not a wider window
        message = (
            f"{empty_bar}. {held_down}"
            + ("The closest are listed below the bar; " if below_bar else f"{SHOW_CLOSEST.sentence()}; ")
            + f"{RATE_HELD.naming(persona['name'])}."
        )
    elif not n_above:
        message = (
            empty_bar
            + (" (the closest are listed below the bar)." if below_bar else f"; {SHOW_CLOSEST}.")
            + f" {BAR_ADVICE.sentence(persona['name'])}."
        )
    else:
        cleared = ranking.n_above_bar  # all of them, not only the best ``limit`` grouped
        message = (
            f"{plural(cleared, 'unread item')} from the last {plural(days, 'day')} "
            f"{'clears' if cleared == 1 else 'clear'} the bar"
            + (f"; the best {n_above} are grouped" if cleared > n_above else "")
            + f": {clustered} in {plural(n_topics, 'topic')} "
            + (
                f"({shown} shown, at most {cut} per topic{N_TOTAL})"
                if cut
                else "(all shown)"
                if shown == clustered
                else f"({shown} shown)"
            )
            + f", {n_unclustered} unclustered; "
            f"{plural(below['n_total'], 'more item')} below the bar"
            + ("" if below_bar or not below["n_total"] else f" ({SHOW_BELOW})")
            + "."
        )
    if saved["n_total"]:
        message += f" Also {plural(saved['n_total'], 'saved item')} not read yet{SEE_SAVED}."
    if quality["caveat"]:
        message += f" Ranking is not fully trained: {SEE_CAVEAT}."
    message += budget_words(held - shortened, shortened, left_out, below_bar and bool(below["items"]))
    payload.update(shortened=shortened, left_out=left_out)
    if not (ordered or unclustered or below["items"] or saved["items"]):
        # Nothing cleared the bar and nothing below it was asked for: the digest shows no
        # item, which is its "nothing to show" (seed 001: ok false, the keys present), as
        # for an empty window; the counts and the caveat still say why.
        return nothing(message, **payload)
    return ok(message, **payload, nothing_to_show=False)
