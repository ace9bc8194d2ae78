"""Why an item ranks where it does for a persona: the one explanation every face renders.

An explanation is read off a ranking — the feed's own (:func:`explain_ranked`, no
re-ranking), or one :func:`explain` makes over the same window and in the same order as
the feed (bar first), with the item added if the window does not hold it. It holds:

- ``match`` (:mod:`hermes.ranking.match`), ``rank`` of ``out_of`` in ``pool`` (which
  window: ``window_days``);
- ``evidence``, the figures behind the judgement: ``interest`` (the interests clause it
  matches best and the cosine), ``liked`` (the nearest liked item and the cosine),
  ``classifier`` (the probability of a like), the ``tags``, ``authors`` and ``sources`` the
  persona has rated, its rated keyphrase ``topics`` (listed, never a reason), and
  ``english``: False for a text in another language when the model reads English only
  (the reason then says a low match shows little), None when not judged;
- ``top``: the components that pushed it up most, each with the evidence behind it;
- ``phrases``, strongest evidence first, worded by how strong it is, and ``reason``: the
  match and the first phrases, the one line every face shows (the words are
  :mod:`hermes.ranking.explain_words`', this module builds the figures they are read from);
- every component's share, raw value and contribution, the blend weight, the classifier's
  state, the nearest liked items.

A phrase never claims what the figures do not show: "close to X, which you liked" needs a
cosine that reaches ``good`` for the model in use; a lower one reads "nothing you liked is
similar". :func:`explain` also stores the explanation in ``explanations`` (one row per
persona and item, replaced on every call).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import numpy as np
import sqlite_utils

from hermes.facekit.faces import n_days
from hermes.storage.records import import_only_items, item_rows, now_iso
from hermes.text.authors import author_key, surname
from hermes.text.language import english

from ..contract import CandidateQuery
from ..embed import english_only, get_embedder
from ..errors import InvalidInput
from ..storage.clicks import click_on, clicked_by_anyone, liked_by
from ..storage.transactions import write_transaction
from . import categories, match
from .explain_words import EVIDENCE_OF, note_of, phrases_of, reason_line
from .interests import interest_clauses, wanted_text
from .match import BAR, COUNTS_FROM, LEVELS, level_of
from .matrix import get_matrix
from .preferences import item_keys, key_stats, keys_of_items, split_key
from .rank import Ranking, blend_weight, candidate_rows, rank

#: the window an explanation ranks in unless told otherwise: list_feed's default
WINDOW_DAYS = 7
NEAREST_LIKED = 3
#: a feed category (or an author, a source) carried by more than this share of the archive
#: is not named as a reason: in one field's listing nearly every paper carries it ("has tags
#: you liked: hep-th" on every line of a trial's feed; "by A. Author (6 likes, 4 dislikes)"
#: where one name signs everything), so it tells no item from another; the evidence still
#: lists it, marked ``common``
COMMON_SHARE = 0.75
#: components shown in ``top``
TOP = 3


def pool_of(window_days: float | None) -> str:
    """What a feed with this window ranks, in words."""
    return (
        f"unread items of the last {n_days(window_days)}"
        if window_days is not None
        else "unread items in the whole archive"
    )


def explain(
    db: sqlite_utils.Database,
    user: dict,
    item_id: int,
    *,
    since_days: float | None = WINDOW_DAYS,
    query: CandidateQuery | None = None,
    pool: str | None = None,
    store: bool = True,
) -> dict:
    """Explain ``item_id`` for ``user`` (a persona row) as it ranks in the feed of the last
    ``since_days`` days (``None``: the whole archive) — or among the candidates of ``query``
    when a face ranked with its own (the web's views; ``pool`` then says what they are) —
    and store the explanation (``store=False``: only compute it, as the web UI's read-only
    details page does)."""
    item_id = int(item_id)
    feed = query or CandidateQuery(since_days=since_days, exclude_read=True)
    query = replace(feed, include_ids=(item_id,))
    ranking = rank(db, user, query, bar_first=True)
    where = np.flatnonzero(ranking.item_ids == item_id)
    if not len(where):
        raise InvalidInput(
            f"item {item_id} has no embedding yet, so it cannot be ranked; the next `hermes ingest` embeds it"
        )
    payload = explain_ranked(db, user, ranking, [int(where[0])], query.since_days, pool=pool)[0]
    absent = why_not_in(db, user, feed, item_id)
    if absent:
        payload["in_pool"], payload["not_in_pool"] = False, absent
    if not store:
        return payload
    with write_transaction(db):
        db.execute(
            """INSERT INTO explanations (user_id, item_id, payload, created) VALUES (?, ?, ?, ?)
               ON CONFLICT (user_id, item_id) DO UPDATE
               SET payload = excluded.payload, created = excluded.created""",
            [user["id"], item_id, json.dumps(payload), payload["created"]],
        )
    return payload


def why_not_in(db: sqlite_utils.Database, user: dict, feed: CandidateQuery, item_id: int) -> str | None:
    """``None`` when ``item_id`` is one of ``feed``'s own candidates; otherwise why the feed
    leaves it out, in words ("you liked it", "you have read it or written on it", "its date
    is unknown, so it is in no recency window"): an explanation then says so instead of a rank the feed
    never shows. Each rule is tried alone, so every reason that applies is named."""
    embedder = get_embedder()
    matrix = get_matrix(db, embedder.name, embedder.dimension)
    if feed.item_ids is not None and item_id not in feed.item_ids:
        return "it is not one of this view's items"

    def kept(q: CandidateQuery) -> bool:
        return bool(len(candidate_rows(db, user, replace(q, item_ids=(item_id,), include_ids=None), matrix)))

    # asked for by id the candidates keep a removed feed's items, so that rule is read here
    removed = not feed.removed_feeds and feed_removed(db, item_id)
    # and an unread list's rule on the entries a library import stored (another persona's:
    # the persona's own import liked it, which the clicked rule below says)
    library = (
        feed.exclude_clicked
        and not feed.removed_feeds
        and click_on(db, user["id"], item_id) is None
        and item_id in import_only_items(db)
    )
    if kept(feed) and not removed and not library:
        return None
    nothing = CandidateQuery(since_days=None, exclude_clicked=False, exclude_read=False, removed_feeds=True)
    reasons = []
    if removed:
        reasons.append(
            "its feed was removed (`removed_feeds=true` in list_feed, `hermes feed --removed-feeds`, ranks it)"
        )
    if library:
        reasons.append(
            "a library import stored it and only its likes hold it: an unread list leaves it out"
            if clicked_by_anyone(db, item_id)
            # its like taken back (storage.clicks.feedless_unclicked): nothing holds it
            else "a library import stored it and its like was taken back: an unread list leaves it "
            "out, and the next reset of bootstrap clicks deletes it"
        )
    if feed.exclude_clicked and not kept(replace(nothing, exclude_clicked=True)):
        click = click_on(db, user["id"], item_id)
        who = (
            "bootstrap (from your interests or an imported library)"
            if click and click["source"] == "bootstrap"
            else "you"
        )
        reasons.append("you rated it already" if click is None else f"{who} {click['label']}d it already")
    if feed.exclude_read and not kept(replace(nothing, exclude_read=True)):
        # the experienced facet: read past the threshold, or highlighted or noted — a note
        # alone is not reading it ("you have read it" after only a note, a trial)
        reasons.append("you have read it or written on it (a note or highlight)")
    if feed.since_days is not None and not kept(replace(nothing, since_days=feed.since_days)):
        (published,) = db.execute("SELECT published FROM items WHERE id = ?", [item_id]).fetchone()
        reasons.append(
            "its date is unknown, so it is in no recency window"
            if not published
            else f"it was published {published[:10]}, before the last {n_days(feed.since_days)}"
        )
    return "; ".join(reasons) or "it does not match this view's filters"


def feed_removed(db: sqlite_utils.Database, item_id: int) -> bool:
    """Whether the item's feed was removed (and not subscribed again)."""
    return (
        db.execute(
            """SELECT 1 FROM items WHERE id = ? AND feed_id IN
           (SELECT id FROM removed_feeds WHERE id NOT IN (SELECT id FROM feeds))""",
            [item_id],
        ).fetchone()
        is not None
    )


def explain_ranked(
    db: sqlite_utils.Database,
    user: dict,
    ranking: Ranking,
    positions,
    window_days: float | None,
    *,
    pool: str | None = None,
    rows: dict | None = None,
) -> list[dict]:
    """The explanations of the items at ``positions`` of a ranking the caller already holds
    (the feed's own, over the window of ``window_days`` days, ``None`` = the whole archive;
    ``pool`` names what was ranked when it is more than a window): no re-ranking and
    nothing stored. What they share is looked up once. ``rows``: the items'
    :func:`~hermes.storage.records.item_rows`, when the caller read them already (read only)."""
    positions = [int(pos) for pos in positions]
    ids = [int(ranking.item_ids[pos]) for pos in positions]
    shared = _Shared(db, user, ranking, window_days, pool, ids)
    if rows is None:
        rows = item_rows(db, ids)
    return [shared.payload(pos, rows.get(item_id)) for pos, item_id in zip(positions, ids, strict=True)]


class _Shared:
    """What every explanation of one ranking reads: the persona's rated keys, its clauses,
    its liked items and their vectors, the model's thresholds."""

    def __init__(self, db, user: dict, ranking: Ranking, window_days, pool: str | None, item_ids: list[int]):
        self.db, self.user, self.ranking, self.window_days = db, user, ranking, window_days
        self.pool = pool or pool_of(window_days)
        embedder = get_embedder()
        self.model = embedder.name
        self.english_only = english_only(embedder)
        matrix = self.matrix = get_matrix(db, embedder.name, embedder.dimension)
        preference = ranking.components.get("preference")
        # the statistics the preference scorer ranked with (else read them: no scorer)
        self.stats = (
            preference.detail.get("stats")
            if preference is not None
            else key_stats(db, user["id"])
            if ranking.n_clicks
            else {}
        ) or {}
        # rated keys whose clicks count on another key of theirs (scorers._count_once)
        self.counted_on = (preference.detail.get("counted_on") if preference is not None else None) or {}
        text = (user.get("interests") or "").strip()
        self.clauses = (interest_clauses(text) or [wanted_text(text)]) if text else []
        affinity = ranking.components.get("affinity")
        self.liked = list(affinity.detail.get("liked_items", [])) if affinity and affinity.active else []
        self.disliked = list(affinity.detail.get("disliked_items", [])) if affinity and affinity.active else []
        # the liked and disliked items' titles in one read
        titles = {i: r["title"] for i, r in item_rows(db, self.liked + self.disliked).items()}
        self.liked_titles = {i: titles[i] for i in self.liked if i in titles}
        self.disliked_titles = {i: titles[i] for i in self.disliked if i in titles}
        # who liked each: the person, an agent, or bootstrap (worded apart: not "you liked")
        self.liked_by = liked_by(db, user["id"]) if self.liked or self.stats else {}
        self._bootstrap_likes: Counter | None = None  # (read at the first author named)
        # each explained item's cosine to each liked and disliked item, in one product
        self.liked_sims, self.disliked_sims = {}, {}
        rated = self.liked + self.disliked
        if rated and len(item_ids):
            rows = matrix.lookup(np.array(item_ids, dtype=np.int64))
            rated_vectors = matrix.exact_rows(matrix.lookup(np.array(rated, dtype=np.int64)))
            sims = matrix.exact_rows(np.maximum(rows, 0)) @ rated_vectors.T
            n = len(self.liked)
            self.liked_sims = {i: sims[k, :n] for k, i in enumerate(item_ids) if rows[k] >= 0}
            self.disliked_sims = {i: sims[k, n:] for k, i in enumerate(item_ids) if rows[k] >= 0}
        # the ranked columns as Python floats, once per page (the same values float() reads
        # per item; indexing numpy scalars item by item cost more than the rest of a line)
        self.raw = {name: values.tolist() for name, values in ranking.raw.items()}
        self.contributions = {name: values.tolist() for name, values in ranking.contributions.items()}

    def _seeded(self, key: str) -> int:
        """How many of ``key``'s likes bootstrap made (a library import's: the reasons say
        them apart), counted once a page, when an author is first named."""
        if self._bootstrap_likes is None:
            seeded = [i for i, source in self.liked_by.items() if source == "bootstrap"]
            self._bootstrap_likes = Counter(k for keys in keys_of_items(self.db, seeded).values() for k in keys)
        return self._bootstrap_likes[key]

    def _share(self, key: str) -> float:
        """The share of the archive's items that carry ``key`` (the matrix keeps the counts)."""
        return self.matrix.key_count(key) / len(self.matrix) if len(self.matrix) else 0.0

    def _everywhere(self, key: str) -> bool:
        """Whether every item of the archive carries ``key`` (the one feed, the one type)."""
        return len(self.matrix) > 1 and self._share(key) >= 1.0

    def _common(self, key: str) -> bool:
        """Whether more than :data:`COMMON_SHARE` of the archive carries ``key``."""
        return self._share(key) > COMMON_SHARE

    def payload(self, pos: int, item: dict | None) -> dict:
        r = self.ranking
        item_id = int(r.item_ids[pos])
        item = item or {"title": "", "tags": []}  # deleted since it was ranked
        cand = int(r.order[pos])  # the item's index among the candidates
        components = {name: self._component(name, comp, pos, cand) for name, comp in r.components.items()}
        classifier = r.components.get("classifier")
        clf_detail = classifier.detail if classifier else {}
        matched = self._matched_keys(item) + self._inferred_category(item_id, item)
        nearest = self._nearest_liked(item_id)
        evidence = self._evidence(pos, cand, matched, nearest)
        # None: not judged (the model reads other languages too)
        evidence["english"] = english(f"{item['title']}. {item.get('summary') or ''}") if self.english_only else None
        payload = {
            "user": self.user["name"],
            "item_id": item_id,
            "title": item["title"],
            "match": r.match(pos),
            "above_bar": r.above_bar(pos),
            "rank": pos + 1,
            "out_of": int(r.n_candidates),
            "pool": self.pool,
            "window_days": self.window_days,
            # False (with ``not_in_pool`` saying why) when :func:`explain` added an item the
            # feed itself leaves out
            "in_pool": True,
            "score": round(float(r.scores[pos]), 4),
            "n_clicks": r.n_clicks,
            "blend_weight": round(float(r.blend_weight), 4),
            "nominal_blend_weight": round(blend_weight(r.n_clicks), 4),
            "evidence": evidence,
            "components": components,
            "classifier_active": bool(clf_detail.get("active", False)),
            "classifier_reason": clf_detail.get("reason", "no classifier registered"),
            "matched_tags": matched,
            "nearest_liked": nearest,
            "created": now_iso(),
        }
        payload["phrases"] = phrases_of(payload)
        payload["top"] = _top(payload)
        payload["reason"] = reason_line(payload)
        return payload

    def _component(self, name: str, comp, pos: int, cand: int) -> dict:
        out = {
            "role": comp.role,
            "active": bool(comp.active),
            "share": round(float(self.ranking.shares.get(name, 0.0)), 4),
            "raw": round(self.raw[name][pos], 4),
            "contribution": round(self.contributions[name][pos], 4),
        }
        detail = comp.detail
        if name == "profile":
            if "reason" in detail:
                out["reason"] = detail["reason"]
            if "semantic" in detail:
                # what the profile scored (grouped interests, the whole text mixed in by
                # WHOLE_SHARE), and the cosine to the closest interest (what match judges)
                out["interest_score"] = round(float(detail["semantic"][cand]), 4)
                out["closest_interest"] = self._clause(detail, cand)
                if "interest" in comp.evidence:
                    out["similarity"] = round(float(comp.evidence["interest"][cand]), 4)
            if "lexical" in detail:
                out["word_match_bm25"] = round(float(detail["lexical"][cand]), 4)
                out["word_match_share"] = detail.get("lexical_share")
        elif name != "preference":
            for key, value in detail.items():
                if isinstance(value, (str, bool, int, float)) or value is None:
                    out[key] = value
        return out

    def _clause(self, detail: dict, cand: int) -> str:
        """The clause of the interest the item matched best that is nearest the item."""
        index = int(detail["clause"][cand]) if "clause" in detail else 0
        return self.clauses[index] if 0 <= index < len(self.clauses) else ""

    def _evidence(self, pos: int, cand: int, matched: list[dict], nearest: list[dict]) -> dict:
        comps = self.ranking.components
        out: dict = {"interest": None, "liked": None, "classifier": None}
        profile = comps.get("profile")
        if profile is not None and profile.active and "interest" in profile.evidence:
            value = float(profile.evidence["interest"][cand])
            related = profile.detail.get("related")
            n_related = int(related[cand]) if related is not None else 0
            out["interest"] = {
                "clause": self._clause(profile.detail, cand),
                # the similarity is to the clause with the others about the same thing
                "related": n_related,
                # ... which is every clause of the text: in one field's interests all of them
                # read as one, and "and the 4 related to it" on every line told nothing
                "whole": len(self.clauses) > 2 and n_related + 1 >= len(self.clauses),
                "similarity": round(value, 4),
                **self._judged("interest", value, pos),
                # strong alone, and the clicks did not confirm it
                "unconfirmed": self._flag("unconfirmed", pos),
            }
        affinity = comps.get("affinity")
        if affinity is not None and affinity.active and "liked" in affinity.evidence:
            # the figure the match was judged on; the item it belongs to is the first of
            # ``nearest`` (the same likes), or the item itself when the persona liked it
            value = float(affinity.evidence["liked"][cand])
            item_id = int(self.ranking.item_ids[pos])
            if item_id in self.liked:
                liked_id, title = item_id, self.liked_titles.get(item_id, "")
            else:
                liked_id, title = (nearest[0]["id"], nearest[0]["title"]) if nearest else (None, "")
            out["liked"] = {
                "id": liked_id,
                "title": title,
                "similarity": round(value, 4),
                **self._judged("liked", value, pos),
                "itself": liked_id == item_id,
                "source": self.liked_by.get(liked_id),
                # the figure compares with the latest likes only (scorers.AFFINITY_LIKES):
                # where there are more, every face says so, not "nearest" of all
                **({"among_latest": len(self.liked)} if len(self.liked_by) > len(self.liked) else {}),
            }
            if "disliked" in affinity.evidence:
                out["liked"]["disliked"] = self._nearest_disliked(
                    item_id, float(affinity.evidence["disliked"][cand]), pos, value
                )
        classifier = comps.get("classifier")
        if classifier is not None and classifier.active and "classifier" in classifier.evidence:
            value = float(classifier.evidence["classifier"][cand])
            # "counts": false in the band below match.COUNTS_FROM, where the figure reads weak
            # ("do not tell either way") but lifts no item's match, as it counted (a figure
            # over the fixed threshold that is common here is in that band too)
            judged = self._judged("classifier", value, pos)
            level = judged["level"]
            vetoed = self._flag("vetoed", pos)
            out["classifier"] = {
                "probability": round(value, 4),
                **judged,
                # a veto counts, whatever band the figure is in
                "counts": vetoed or not 0 < LEVELS.index(level) < COUNTS_FROM["classifier"],
                "keeps_below_bar": vetoed,
                # the words say "what you disliked" only where a disliked item is as near as
                # the nearest liked one (the judge's own test, match.CLOSER, whether or not the
                # liked figure would have counted)
                "disliked_near": self._flag("nearer_disliked", pos),
            }
            if "classifier" in getattr(self.ranking.judgement, "rare", ()) and level in ("good", "strong"):
                # the figure is in this archive's top share, as good and strong need (match.RARE)
                out["classifier"]["above_share"] = match.RARE["classifier"][LEVELS.index(level) - 1]
            typical = self.ranking.judgement.typical if self.ranking.judgement is not None else {}
            if "classifier" in typical:
                # where the figure stands here: under 0.5 is not "less like what you liked
                # than the rest" when the rest is lower still (a few clicks' classifier)
                out["classifier"]["typical_here"] = round(typical["classifier"], 4)
        for kind in ("interest", "liked", "classifier"):
            if out[kind] is not None:
                out[kind]["note"] = note_of(out[kind])
        out["tags"] = [t for t in matched if t["kind"] == "tag"]
        out["authors"] = [t for t in matched if t["kind"] == "author"]
        out["sources"] = [t for t in matched if t["kind"] in ("type", "source")]
        # keyphrases are listed but never phrased as a reason: the ranking does not count them
        out["topics"] = [t for t in matched if t["kind"] == "topic"]
        return out

    def _judged(self, kind: str, value: float, pos: int) -> dict:
        """``level``: the level the figure counted for in the match (past its threshold and
        rare in this archive, :func:`hermes.ranking.match.judge`); ``usual_here``: true when
        the figure alone would reach more but is common in this archive."""
        judgement = self.ranking.judgement
        counted = judgement.by_kind.get(kind) if judgement is not None else None
        if counted is None:
            return {"level": LEVELS[level_of(kind, value, self.model)], "usual_here": False}
        level = int(counted[pos])
        # the figure alone (the fixed thresholds) would reach more: usual in this archive
        usual = level_of(kind, value, self.model) > level
        out = {"level": LEVELS[level], "usual_here": usual}
        if usual and kind in judgement.typical:
            out["typical_here"] = round(judgement.typical[kind], 4)
        if usual and kind in judgement.limits:
            # what the figure needed here for the level it missed (the decision's own
            # threshold): the bar's, or strong's for a figure the archive kept at good (a
            # trial read "good; … a match needs 0.59 here" beside a probability of 0.64)
            missed = max(level + 1, BAR)
            out["needed_here"] = round(judgement.limits[kind][missed - 1], 4)
            out["needed_for"] = LEVELS[missed]
        return out

    def _flag(self, name: str, pos: int) -> bool:
        judgement = self.ranking.judgement
        flags = getattr(judgement, name, None) if judgement is not None else None
        return bool(flags[pos]) if flags is not None else False

    def _nearest_disliked(self, item_id: int, value: float, pos: int, liked: float) -> dict:
        """The disliked item closest to this one (the ``disliked`` figure) and ``closer``:
        whether it is as near as the nearest liked one (give or take match.CLOSER) where that
        cancelled the liked figure, one that would have cleared the bar here. Under that the
        liked figure is weak anyway, and "near X, which you liked, but almost as near to Y"
        claimed a closeness the figure did not have (a trial: 0.47 where 0.64 counts)."""
        sims = self.disliked_sims.get(item_id)
        best = int(np.argmax(sims)) if sims is not None and len(sims) else None
        disliked_id = self.disliked[best] if best is not None else None
        limits = self.ranking.judgement.limits.get("liked") if self.ranking.judgement is not None else None
        counted = limits is None or liked >= limits[BAR - 1]
        return {
            "id": disliked_id,
            "title": self.disliked_titles.get(disliked_id, ""),
            "similarity": round(value, 4),
            "closer": self._flag("nearer_disliked", pos) and counted,
        }

    def _matched_keys(self, item: dict) -> list[dict]:
        """The item's keys the persona has rated, strongest first. ``kind`` is ``tag`` (a
        feed category), ``topic`` (a keyphrase), ``author``, ``type`` or ``source``."""
        people = {f"author:{author_key(n)}": n for n in item.get("authors") or []}
        out = []
        for key in item_keys(
            item.get("tags") or [],
            item.get("content_type"),
            item.get("feed_id"),
            item.get("authors") or [],
            item.get("keyphrases") or [],
        ):
            if key in self.stats:
                kind, value = split_key(key)
                if kind in ("type", "source") and self._everywhere(key):
                    continue  # the only feed, the only type: it tells no item from another
                label = value
                if kind == "source":
                    label = item.get("source") or value
                elif kind == "author":
                    label = surname(people.get(key, value))
                s = self.stats[key]
                out.append(
                    {
                        "key": key,
                        "kind": kind,
                        "label": label,
                        "score": round(s["score"], 3),
                        "likes": s["likes"],
                        "dislikes": s["dislikes"],
                        **({"bootstrap_likes": n} if kind == "author" and (n := self._seeded(key)) else {}),
                        **({"common": True} if self._common(key) else {}),
                        # its clicks count on another key (the same clicks rated both): no reason
                        **({"counted_on": self.counted_on[key]} if key in self.counted_on else {}),
                    }
                )
        # two rated authors with one surname read as one person named twice ("by Author, …,
        # and Author, …"): those are named in full, as the item lists them
        surnames = Counter(t["label"] for t in out if t["kind"] == "author")
        for t in out:
            if t["kind"] == "author" and surnames[t["label"]] > 1:
                t["label"] = people.get(t["key"], t["label"])
        return sorted(out, key=lambda t: (-abs(t["score"]), t["key"]))

    def _inferred_category(self, item_id: int, item: dict) -> list[dict]:
        """The rated category the ranking gave an item that has none of its own (the one
        whose items it is closest to: :mod:`hermes.ranking.categories`), marked
        ``inferred``, with the cosine to that category's centre."""
        # the keyphrases a tagger added are topics, not categories (as the matrix reads them)
        own = item_keys(item.get("tags") or [], None, None, keyphrases=item.get("keyphrases") or [])
        if not self.stats or any(k.startswith("tag:") for k in own):
            return []
        row = int(self.matrix.lookup(np.array([item_id]))[0])
        inferred = categories.inferred(self.matrix)
        found = inferred.of_row(row) if row >= 0 else None
        if found is None:
            return []
        key = inferred.keys.get(found[0])
        s = self.stats.get(key)
        if s is None or not s["score"] or key in self.counted_on:  # (its clicks count elsewhere)
            return []
        return [
            {
                "key": key,
                "kind": "tag",
                "label": split_key(key)[1],
                "inferred": True,
                "similarity": round(found[1], 4),
                "score": round(categories.WEIGHT * s["score"], 3),
                "likes": s["likes"],
                "dislikes": s["dislikes"],
                **({"common": True} if self._common(key) else {}),
            }
        ]

    def _nearest_liked(self, item_id: int) -> list[dict]:
        """The liked items closest to this one, among those the ranking compared it with."""
        sims = self.liked_sims.get(item_id)
        others = [k for k, i in enumerate(self.liked) if i != item_id]
        if sims is None or not others:
            return []
        # closest first, ties to the lower id (sorted in Python floats: a few dozen likes)
        values = sims.tolist()
        best = sorted((-values[k], self.liked[k]) for k in others)[:NEAREST_LIKED]
        return [
            {"id": int(i), "title": self.liked_titles.get(int(i), ""), "similarity": round(-negated, 4)}
            for negated, i in best
        ]


def _top(p: dict) -> list[dict]:
    """The components that pushed the item up most, with the evidence behind each."""
    pushing = sorted(
        ((c["contribution"], n) for n, c in p["components"].items() if c["active"] and c["contribution"] > 0),
        key=lambda cn: (-cn[0], cn[1]),
    )
    ev = p["evidence"]
    out = []
    for contribution, name in pushing[:TOP]:
        kind = EVIDENCE_OF.get(name)
        behind = (
            {"tags": ev["tags"], "authors": ev["authors"], "sources": ev["sources"]}
            if kind == "keys"
            else ev.get(kind)
            if kind
            else None
        )
        out.append(
            {
                "component": name,
                "contribution": contribution,
                "share": p["components"][name]["share"],
                "evidence": behind,
            }
        )
    return out
