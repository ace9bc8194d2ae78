"""An explanation in words: the phrases of its evidence, strongest first, and the one-line
reason every face shows (:func:`reason_line`), the rank line and the blend's weight note.

:mod:`hermes.ranking.explain` builds the explanation (the figures, the evidence, the
components); this module only words it, from the explanation alone: nothing here reads the
database or the ranking, so every face that shows the same explanation says the same thing.
A phrase never claims what the figures do not show (see :func:`phrases_of`).
"""

from __future__ import annotations

from hermes.facekit.faces import plural
from hermes.text.clip import clip
from hermes.text.latex import readable

from . import match
from .match import LEVELS, shown

#: phrases in the one-line reason
REASON_PHRASES = 2
#: how the phrases of rated keys that count against an item begin (see :func:`phrases_of`)
DISLIKED = (
    "has tags you disliked",
    "by authors you disliked",
    "from a source or type you disliked",
    "has no tags, but is like items with tags you disliked",
)
#: an item without categories counts the one whose items it is closest to (ranking.categories)
INFERRED = ("has no tags, but is like items with tags you liked", DISLIKED[3])
#: which evidence stands behind each built-in component
EVIDENCE_OF = {"profile": "interest", "affinity": "liked", "classifier": "classifier", "preference": "keys"}
#: how a level reads at the head of a reason
MATCH_WORDS = {"strong": "Strong match", "good": "Good match", "weak": "Weak match", "none": "No match"}
#: what a low match on a text in another language cannot show (an English-only model)
NOT_ENGLISH = "its text is not English and the model reads English only, so the low match says little about its topic"


def _quote(text: str, width: int = 60) -> str:
    """``text`` quoted in a reason, cut to ``width``. A title's LaTeX is made readable first
    (:mod:`hermes.text.latex`): cut as written, "…in $\\mathca…" was neither LaTeX nor text on
    any face, agents' included (the item's own ``title`` field keeps the LaTeX)."""
    return f"“{clip(readable(' '.join((text or '').split())), width)}”"


def liked_set(e: dict) -> str:
    """What the liked figure compared with: "what you liked", or "your 16 latest likes"
    where there are more (``among_latest``: the affinity component's window; a retrial's
    nearest-liked figure named 0.42 while an older like was 0.62 away)."""
    n = e.get("among_latest")
    return f"your {n} latest likes" if n else "what you liked"


def nothing_liked(e: dict) -> str:
    n = e.get("among_latest")
    return f"none of your {n} latest likes" if n else "nothing you liked"


def _author_liked(k: dict) -> str:
    """ "Furtak, whom you liked twice": who liked an author's items, the dislikes said too
    ("liked 10 times" alone hid 8 dislikes of the same author), and bootstrap's likes apart
    (a trial's library import read "by Kovács, whom you liked twice": no click was theirs)."""
    seeded = int(k.get("bootstrap_likes") or 0)
    own = k["likes"] - seeded
    if k.get("dislikes"):
        likes = plural(k["likes"], "like") + (f", {seeded} of them by bootstrap" if seeded else "")
        return f"{k['label']} ({likes}, {plural(k['dislikes'], 'dislike')})"
    if not own:
        return f"{k['label']}, liked for you {_times(seeded)} by bootstrap"
    also = f" (and bootstrap {_times(seeded)})" if seeded else ""
    return f"{k['label']}, whom you liked {_times(own)}{also}"


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _labels(keys: list[dict], liked: bool) -> str:
    """The keys with the clicks behind each, the side named first: "article" alone read as a
    verdict on every article after one dislike ("type article (1 dislike)")."""

    def tally(k: dict) -> str:
        sides = [(k["likes"], "like"), (k["dislikes"], "dislike")]
        return ", ".join(plural(n, word) for n, word in (sides if liked else sides[::-1]) if n)

    return ", ".join(f"{'type ' if k['kind'] == 'type' else ''}{k['label']} ({tally(k)})" for k in keys[:3])


def note_of(e: dict) -> str:
    """Why a figure counted for less than its value suggests, in a few words beside its
    level on every face ("" when nothing held it down)."""
    disliked = e.get("disliked") or {}
    if disliked.get("closer"):
        return (
            f"a disliked item is as near: {_quote(disliked['title'] or 'an item you disliked', 50)} "
            f"(similarity {shown(disliked['similarity'])})"
        )
    if e.get("keeps_below_bar"):
        leaning = (
            "leans to a dislike"
            if e.get("disliked_near")
            else "not confirmed by your clicks yet"
            if _above_typical_probability(e)
            else "less like what you liked than the rest"
        )
        return f"{leaning}: keeps it below your bar"
    if e.get("unconfirmed"):
        return "counted as good, not strong: what you liked does not confirm it"
    if "probability" in e and e.get("usual_here"):
        # over the fixed threshold, but not in the archive's top share (match.RARE)
        return f"not in this archive's top {_top_share(e.get('needed_for', 'good'))}{_needed(e)}"
    if _above_typical(e):
        # not "usual": the figure is above the typical one, only not rare enough here
        return f"counts for less in this archive, where an item is typically {shown(e['typical_here'])}{_needed(e)}"
    return ""


def _held_down(e: dict) -> bool:
    """Whether a figure sits below the bar only because it is usual in this archive (it
    would clear the bar by the fixed thresholds): the phrase then says so, not "weakly
    similar". A figure the archive lowered from strong to good still reads as good."""
    return _above_typical(e) and e["level"] in ("weak", "none")


def _nameable(key: dict) -> bool:
    """Whether a rated key may be a reason: not one most of the archive carries
    (explain.COMMON_SHARE), nor one whose clicks count on another key (``counted_on``)."""
    return not key.get("common") and not key.get("counted_on")


def _needed(e: dict) -> str:
    """ ", and a match needs 0.63 here": the threshold that decided it, where the archive
    raised it (a trial read "similar (0.56), but an item here is typically 0.37" under a weak
    match, and could not tell what would have counted)."""
    if "needed_here" not in e:
        return ""
    which = "a strong match" if e.get("needed_for") == "strong" else "a match"
    return f", and {which} needs {match.shown_limit(e['needed_here'])} here"


def _above_typical(e: dict) -> bool:
    """Whether the archive held the figure down although it is above this archive's typical
    one: only then is it "similar, but an item here is typically …" (a trial read "similar
    to your interest … (similarity 0.15), but an item here is typically 0.27")."""
    return bool(e.get("usual_here")) and "typical_here" in e and e.get("similarity", -1.0) >= e["typical_here"]


def _classifier_phrase(e: dict) -> str:
    """The classifier's probability in words. It is fit on the likes against the dislikes
    and a sample of the archive's other items, so under 0.5 an item looks less like what was
    liked than the rest does: "what you disliked" is said only where a disliked item is as
    near as the nearest liked one (a trial's on-topic paper, no dislike near it, "leaned
    towards what you disliked"), and 0.40 never reads more neutral than a vetoed 0.47."""
    prob = shown(e["probability"])
    if e["probability"] < match.VETO:
        if e.get("disliked_near"):
            text = f"leans towards what you disliked (probability {prob})"
        elif _above_typical_probability(e):
            text = (
                f"your clicks do not confirm it yet (probability {prob}, under an even "
                f"{shown(match.VETO)}, though above the {shown(e['typical_here'])} typical here)"
            )
        else:
            text = f"looks less like what you liked than the rest of the archive does (probability {prob})"
        return f"{text}, which keeps it below your bar" if e.get("keeps_below_bar") else text
    # from 0.5 up the figure counts only where it is rare here (match.RARE): the words say
    # how rare, not "more like what you liked than what you disliked", which a trial read
    # beside "a disliked item is as near"
    if e["level"] in ("strong", "good"):
        if "above_share" in e:
            share = round(e["above_share"] * 100)
            return f"your clicks point to it more than to {share} % of this archive (probability {prob})"
        return f"your clicks point to it (probability {prob})"
    if e.get("usual_here"):
        return (
            f"your clicks lean to it (probability {prob}), but not as much as to "
            f"this archive's top {_top_share('good')}{_needed(e)}"
        )
    return f"your likes and dislikes do not tell either way (probability {prob})"


def _top_share(level: str) -> str:
    """ "3 %": the top share of the archive a classifier figure needs for ``level`` (match.RARE)."""
    return f"{round((1 - match.RARE['classifier'][match.LEVELS.index(level) - 1]) * 100)} %"


def interest_named(e: dict) -> str:
    """The interest a similarity was measured against: the clause nearest the item, and the
    clauses grouped with it as one interest ("“quantum error correction” and the 4 related to
    it"), so a figure taken against the group is not read as the clause's alone; the clause
    alone where the group is the whole text (``whole``: the phrase then says "your
    interests")."""
    related = int(e.get("related") or 0)
    return _quote(e["clause"]) + (f" and the {related} related to it" if related and not e.get("whole") else "")


def held_by_clicks(n_vetoed: int, n_clicks: int) -> str:
    """The sentence an empty bar adds where the click classifier is why it is empty ("" when
    it held nothing): the person's next step is rating, not a wider window (a trial's
    one-field archive after 3 likes and 2 dislikes: every good match under an even 0.50)."""
    if not n_vetoed:
        return ""
    one = n_vetoed == 1
    return (
        f"{plural(n_vetoed, 'item')} would clear it by your interests or likes, but the "
        f"classifier your {plural(n_clicks, 'click')} trained puts {'it' if one else 'them'} "
        f"under an even {shown(match.VETO)}. "
    )


def _above_typical_probability(e: dict) -> bool:
    """Whether a probability under 0.5 is still above this archive's typical one: a
    classifier fit on a few clicks puts a whole field under 0.5 (a trial's one-field
    archive topped out at 0.498), so the item does not look less like what was liked than
    the rest does; the clicks are only too few to confirm it."""
    return "typical_here" in e and e["probability"] >= e["typical_here"]


def phrases_of(p: dict) -> list[str]:
    """Every piece of evidence in words. Above the bar the strongest comes first (a phrase
    ranks by the level its figure reaches; rated tags and authors and plugins' components
    sit between weak and good, sources and types lower); below the bar the figures the
    match was judged on come first, since they say why it is not higher. Ties keep the
    order the phrases are made in (interest, liked, classifier, tags, authors, sources,
    plugins): nothing here depends on which other items were ranked, so every face that
    ranks the item among other candidates still gives the same reason."""
    ev, comps = p["evidence"], p["components"]
    judged_first = not p.get("above_bar", True)
    found: list[tuple[bool, float, int, str]] = []

    def add(strength: float, kind: str, text: str):
        judged = kind in ("interest", "liked", "classifier")
        found.append((judged_first and not judged, -strength, len(found), text))

    if ev["interest"] is not None:
        e = ev["interest"]
        clause, sim = interest_named(e), shown(e["similarity"])
        # the interest matched, and the figure's parenthesis: "interest “X” (similarity 0.64)",
        # or where every clause reads as one interest "interests (nearest “X”, similarity 0.64)"
        matched, figure = (
            ("interests", f"(nearest {clause}, similarity {sim})")
            if e.get("whole")
            else (f"interest {clause}", f"(similarity {sim})")
        )
        add(
            LEVELS.index(e["level"]),
            "interest",
            {  # the level's phrase only (a page words 20 items; the others were made and dropped)
                "strong": lambda: f"matches your {matched} closely {figure}",
                "good": lambda: f"matches your {matched} {figure}",
                "weak": lambda: f"weakly similar to your interests (nearest {clause}, similarity {sim})",
                "none": lambda: f"not close to any of your interests (nearest {clause}, similarity {sim})",
            }[e["level"]]()
            if not _held_down(e)
            else f"similar to your {matched} {figure}, but an item here is "
            f"typically {shown(e['typical_here'])} from your interests{_needed(e)}",
        )
    if ev["liked"] is not None:
        e = ev["liked"]
        title, sim = _quote(e["title"] or f"item {e['id']}"), shown(e["similarity"])
        who = "bootstrap liked for you" if e.get("source") == "bootstrap" else "you liked"
        phrases = {
            "strong": lambda: f"very close to {title}, which {who} (similarity {sim})",
            "good": lambda: f"close to {title}, which {who} (similarity {sim})",
            "weak": lambda: f"weakly similar to {liked_set(e)} (nearest {title}, similarity {sim})",
            "none": lambda: f"{nothing_liked(e)} is similar (nearest similarity {sim})",
        }
        itself = (
            "liked for you by bootstrap, from your interests or an imported library"
            if e.get("source") == "bootstrap"
            else "you liked it"
        )
        disliked = e.get("disliked") or {}
        if e.get("itself"):
            text = itself
        elif disliked.get("closer"):
            # a liked neighbour lifts nothing when a disliked one is nearer still
            # match.CLOSER: a disliked item within a hair of the liked one counts too
            nearer = "nearer" if disliked["similarity"] >= e["similarity"] else "almost as near"
            text = (
                f"near {title}, which {who} (similarity {sim}), but {nearer} to "
                f"{_quote(disliked['title'] or 'an item you disliked')}, which you disliked "
                f"(similarity {shown(disliked['similarity'])})"
            )
        elif _held_down(e):
            text = (
                f"similar to {title}, which {who} (similarity {sim}), but an item here is "
                f"typically {shown(e['typical_here'])} from what you liked{_needed(e)}"
            )
        else:
            text = phrases[e["level"]]()
        add(LEVELS.index(e["level"]), "liked", text)
    if ev["classifier"] is not None:
        e = ev["classifier"]
        # a veto is why the item is below the bar: it leads the reason, before the figures it
        # overrode (a trial's line gave only those, "closely … very close", under "Weak match")
        add(
            LEVELS.index(e["level"]) if not e.get("keeps_below_bar") else len(LEVELS),
            "classifier",
            _classifier_phrase(e),
        )
    # an author or a source most of the archive carries is no reason either (_nameable)
    authors = [k for k in ev["authors"] if _nameable(k)]
    people = [k for k in authors if k["score"] > 0][:2]
    if people:  # "by Furtak, whom you liked twice"
        # "by A, whom you liked once, and B, whom …": the clause closed before the next name
        add(
            1.5,
            "keys",
            "by " + ", and ".join(_author_liked(k) for k in people),
        )
    for keys, strength, liked_words, disliked_words, but_words in (
        # a category most of the archive carries is no reason for one item (_nameable)
        (
            [k for k in ev["tags"] if not k.get("inferred") and _nameable(k)],
            1.5,
            "has tags you liked",
            DISLIKED[0],
            "tags you disliked",
        ),
        (
            [k for k in ev["tags"] if k.get("inferred") and _nameable(k)],
            1.0,
            INFERRED[0],
            INFERRED[1],
            "like items with tags you disliked",
        ),
        ([k for k in authors if k["score"] <= 0], 1.5, "", DISLIKED[1], ""),
        (
            [k for k in ev["sources"] if _nameable(k)],
            0.5,
            "from a source or type you liked",
            DISLIKED[2],
            "a source or type you disliked",
        ),
    ):
        liked = [k for k in keys if k["score"] > 0]
        disliked = [k for k in keys if k["score"] < 0]
        if liked and disliked and but_words:
            # one phrase: the liked half alone read as a plus where the two cancelled out (a
            # trial: "has tags you liked: cond-mat.str-el", its disliked mes-hall unsaid)
            add(
                strength,
                "keys",
                f"{liked_words}: {_labels(liked, True)}, but {but_words}: {_labels(disliked, False)}",
            )
            continue
        if liked:
            add(strength, "keys", f"{liked_words}: {_labels(liked, True)}")
        if disliked:
            add(strength - 0.25, "keys", f"{disliked_words}: {_labels(disliked, False)}")
    for name, c in sorted(comps.items()):
        if name not in EVIDENCE_OF and c["active"] and c["raw"] > 0:  # its own score, not z
            add(1.5, name, f"{name} favours it")
        elif name not in EVIDENCE_OF and c["active"] and c["contribution"] <= -PUSHED_DOWN:
            # a plugin's boost (z-scored) lowers every item it does not mark: say so, or the
            # item's fall has no reason (a trial's domain boost: -0.47 each, unexplained)
            add(0.5, name, f"{name} favours other items")
    found.sort(key=lambda f: f[:3])
    return [f[3] for f in found]


#: a plugin component lowering an item's score by this much is named in its reason
PUSHED_DOWN = 0.25


def reason_line(p: dict) -> str:
    """The one-line reason every face shows: the match, then the strongest evidence, and
    for an item above the bar that rated keys pushed down, the dislike that did it (a strong
    match whose score halved after a dislike of its blog said only why it was strong)."""
    head = MATCH_WORDS[p["match"]]
    if not p["phrases"]:
        return (
            f"{head}: nothing to judge it by yet (no interests text, no likes); write "
            "interests for this persona or like a few items."
        )
    shown = p["phrases"][:REASON_PHRASES]
    held_down = [t for t in p["phrases"][REASON_PHRASES:] if t.startswith(DISLIKED)]
    preference = p["components"].get("preference") or {}
    if held_down and p.get("above_bar", True) and preference.get("active") and preference.get("contribution", 0) < 0:
        # "but" turns from what lifted the item to what held it down; after a dislike
        # already shown it would join two of a kind ("…you disliked; but …you disliked")
        joint = "and " if any(t.startswith(DISLIKED) for t in shown) else "but "
        shown = [*shown, joint + held_down[0]]
    if p["evidence"].get("english") is False and p["match"] in ("none", "weak"):
        shown = [*shown, NOT_ENGLISH]
    return f"{head}: " + "; ".join(shown) + "."


def weight_note(n_clicks: int, blend_weight: float) -> str:
    """Why behaviour weighs nothing although there are clicks (``""`` otherwise): the blend
    gives a component no share when its scores are equal over the items ranked — one item,
    or items the clicks cannot tell apart — and a figure of 0 % beside "6 clicks" reads as a
    bug unless it says so."""
    if n_clicks and not blend_weight:
        return " (what you rated does not tell these items apart: too few of them, or too alike)"
    return ""


def rank_line(p: dict) -> str:
    """Where the item ranks and among what: "Ranks 3 of 120 unread items of the last 7 days";
    for an item the feed leaves out, why, and where it would come."""
    if p.get("in_pool", True):
        return f"Ranks {p['rank']} of {p['out_of']} {p['pool']}"
    return (
        f"Not among the {p['pool']} ({p['not_in_pool']}); ranked with them it would come {p['rank']} of {p['out_of']}"
    )
