"""What ``hermes feed`` and ``hermes explain`` print: a ranked item's lines and the one
explanation's, for the terminal (feed text cleaned of control characters, reasons whole and
wrapped). Drawing only: the figures and their words come from the tools and
:mod:`hermes.ranking.explain_words`.
"""

from __future__ import annotations

from hermes.facekit.faces import date_words, plural
from hermes.facekit.terminal import clean, style, wrapped
from hermes.ranking.explain_words import interest_named, rank_line, weight_note
from hermes.ranking.match import UNCOUNTED, shown


def item_lines(item: dict, width: int = 110) -> list[str]:
    """An item of a ranked list for the terminal (feed text cleaned of control characters;
    the reason whole, wrapped to the terminal)."""
    head = f"{item['rank']:>3}. [{item['id']}] {clean(item['title'], width)}"
    meta = " · ".join(
        filter(
            None,
            [
                clean(item["source"]) or "removed feed",
                date_words(item),
                item["content_type"],
                f"score {item['score']:+.2f}",
            ],
        )
    )
    lines = [style(head, bold=True), f"     {meta}", *wrapped(item["reason"], "     ", "why: ")]
    if item["url"]:
        lines.append(f"     {clean(item['url'])}")
    return lines


def profile_parts(c: dict) -> str:
    """What the profile's raw score is made of: the interests grouped by subject (the figure
    the match line judges too) plus a share of word match. Without these figures an item at
    similarity 0.47 ranked above one at 0.60 with nothing on the screen to say why."""
    parts = f"ranked on: interests grouped by subject {shown(c['interest_score'])}"
    if c.get("word_match_share"):
        parts += f", word match (BM25) {c['word_match_bm25']:.2f} at {c['word_match_share']:.0%} of the profile"
    return parts + "; the raw score is these, each measured against the other candidates"


def _judged(figure: dict, level: str) -> str:
    """A figure's level, with the explanation's note on what held it down ("strong; counted as
    good, not strong: …": a colon after the level read as the note defining it)."""
    return f"{level}; {figure['note']}" if figure.get("note") else level


def explanation_lines(e: dict, advice: str = "") -> list[str]:
    """The one explanation for the terminal: the reason, where it ranks (and ``advice`` on
    ranking it elsewhere, right under), the evidence."""
    ev = e["evidence"]
    lines = [
        style(f"[{e['item_id']}] {clean(e['title'], 100)}", bold=True),
        *wrapped(e["reason"], "", "why: "),
        f"{rank_line(e)}{'' if e['above_bar'] else ', below the bar'} · score "
        f"{e['score']:+.3f} · {plural(e['n_clicks'], 'click')}, behaviour weighs "
        f"{e['blend_weight']:.0%}{weight_note(e['n_clicks'], e['blend_weight'])}",
        *(wrapped(advice, "") if advice else []),
        f"match: {e['match']}",
    ]
    if ev["interest"]:
        i = ev["interest"]
        lines.append(
            f"  interests: closest {clean(interest_named(i))}, similarity "
            f"{shown(i['similarity'])} ({_judged(i, i['level'])})"
        )
    if ev["liked"]:
        n = ev["liked"]
        if n.get("itself"):  # its closest liked item is itself: say so, not "nearest [its id]"
            who = (
                "bootstrap liked this item itself, from your interests or an imported library"
                if n.get("source") == "bootstrap"
                else "you liked this item itself"
            )
            lines.append(f"  liked: {who} ({n['level']})")
        else:
            among = f" of your {n['among_latest']} latest likes" if n.get("among_latest") else ""
            lines.append(
                f"  liked: nearest{among} [{n['id']}] {clean(n['title'], 80)}, similarity "
                f"{shown(n['similarity'])} ({_judged(n, n['level'])})"
            )
    if ev["classifier"]:
        c = ev["classifier"]
        verdict = c["level"] if c.get("counts", True) else UNCOUNTED
        lines.append(f"  classifier: probability {shown(c['probability'])} ({_judged(c, verdict)})")
    else:
        lines.append(f"  classifier: inactive ({clean(e['classifier_reason'], 120)})")
    # a key whose likes and dislikes cancel out moved nothing: "paper (+0.00)" is noise
    # the rated keys as the explanation ranked them, strongest first, an inferred category
    # last (explain_item says them once, in the evidence: hermes_feeds.tools.said_once)
    rated = sorted(
        [*ev.get("tags", []), *ev.get("authors", []), *ev.get("sources", [])],
        key=lambda t: (bool(t.get("inferred")), -abs(t["score"]), t["key"]),
    )
    counted = [t for t in rated if round(t["score"], 2)]
    topics = ev.get("topics", [])
    if counted:
        lines.append(
            "  rated: "
            + ", ".join(
                f"{clean(t['label'], 40)} ({t['score']:+.2f}"
                # an item without categories counts the one it is closest to: say it is not its own
                + (", inferred: no tags of its own" if t.get("inferred") else "")
                # the same clicks rated another of its keys, which carries them
                + (", counted once with another key the same clicks rated" if t.get("counted_on") else "")
                + ")"
                for t in counted[:8]
            )
        )
    if topics:  # keyphrases: they name topics, the preference component leaves them out
        lines.append(
            "  topics you rated (not counted in the ranking): "
            + ", ".join(f"{clean(t['label'], 40)} ({t['score']:+.2f})" for t in topics[:8])
        )
    # A raw score above zero can contribute below zero (every candidate scored higher):
    # the header says what a contribution is measured against.
    lines.append(
        "components (contribution = weight × how far the raw score lies above the "
        "candidates' average, in their spreads):"
    )
    for name, c in e["components"].items():
        state = "" if c["active"] else "  (inactive)"
        lines.append(f"  {name:<11} {c['contribution']:+.3f}  weight {c['share']:.0%}  raw {c['raw']:+.3f}{state}")
        if name == "profile" and c["active"] and "interest_score" in c:
            lines.append("    " + profile_parts(c))
    if e["nearest_liked"]:
        latest = (ev["liked"] or {}).get("among_latest")
        lines.append(f"closest of your {latest} latest likes:" if latest else "closest liked items:")
        lines.extend(f"  [{n['id']}] {clean(n['title'], 90)} ({shown(n['similarity'])})" for n in e["nearest_liked"])
    return lines
