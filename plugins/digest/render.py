"""Terminal rendering of a digest and of the topic communities.

Feed text is third-party data: control characters (terminal escape sequences included) are
removed before anything reaches the terminal. Styling is dropped by click when stdout is
not a terminal. Titles and reasons are shown as a person reads them, LaTeX as Unicode
(:func:`hermes.facekit.terminal.clean` converts it); the digest tool's result keeps it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import typer

from hermes.facekit.faces import date_words, plural, shown_of
from hermes.facekit.terminal import clean, wrapped


def _item_lines(item: dict, number: int) -> list[str]:
    """An item as the ``number``-th shown: a digest groups items by topic, so their feed
    ranks would read out of order (1, 3, 2); the number is the reading order. Its id is the
    one `hermes like` / `hermes explain` take, as `hermes feed` prints it (a trial could act
    on nothing the digest listed)."""
    date = date_words(item)
    meta = ", ".join(clean(x) for x in (item.get("source"), date) if x)
    lines = [f"  {number:>3}. [{item['id']}] {clean(item['title'], 100)}" + (f"  [{meta}]" if meta else "")]
    lines += [typer.style(line, dim=True) for line in wrapped(item.get("reason"), "       ", "why: ")]
    if item.get("url"):
        lines.append(typer.style(f"       {clean(item['url'], 160)}", dim=True))
    return lines


def render_digest(result: dict, user: str, echo: Callable[[str], None] = typer.echo) -> None:
    numbers = itertools.count(1)

    def show(items: list[dict]) -> None:
        for item in items:
            for line in _item_lines(item, next(numbers)):
                echo(line)

    days = result.get("window_days")
    echo(typer.style(f"Digest for {clean(user)}: the last {plural(days, 'day')}", bold=True))
    echo(clean(result.get("message")))
    for topic in result.get("topics", []):
        echo("")
        echo(
            typer.style(f"## {clean(topic['label'])}", bold=True, fg="cyan")
            + f"  ({shown_of(topic['n_total'], len(topic['items']))})"
        )
        community = topic.get("community")
        if community and community != topic["label"]:
            # the heading names the tags this week's items carry, at times a bare category
            # code ("cs.lg"): the topic it belongs to says what that is (as the web page does)
            echo(typer.style(f"     part of the topic {clean(community)}", dim=True))
        show(topic["items"])
        hidden = topic["n_total"] - len(topic["items"])
        if hidden > 0:
            echo(f"       … {hidden} more in this topic (raise --per-topic to see them)")
    if result.get("unclustered"):
        echo("")
        echo(
            typer.style("## Unclustered", bold=True, fg="cyan")
            + f"  ({plural(len(result['unclustered']), 'item')} close to no other item here, or without a subject tag)"
        )
        show(result["unclustered"])
    below = result.get("below_bar") or {}
    if below.get("items"):
        echo("")
        echo(
            typer.style("## Below your bar", bold=True, fg="cyan")
            + f"  ({shown_of(below['n_total'], len(below['items']))}; their match is "
            "weak or none)"
        )
        show(below["items"])
    elif below.get("n_total"):
        echo("")
        n = below["n_total"]
        echo(f"… {plural(n, 'more item')} below your bar (--below-bar lists them)")
    saved = result.get("saved") or {}
    if saved.get("items"):
        echo("")
        echo(
            typer.style("## Saved, not read yet", bold=True, fg="cyan")
            + f"  ({shown_of(saved['n_total'], len(saved['items']))})"
        )
        for item in saved["items"]:
            echo(f"     - {clean(item['title'], 100)}  [saved {clean(item.get('saved_at'))[:10]}]")
        if saved["n_total"] > len(saved["items"]):
            echo(f"       … {saved['n_total'] - len(saved['items'])} more saved")
    quality = result.get("ranking_quality") or {}
    echo("")
    echo(
        f"Ranking: {plural(quality.get('clicks', 0), 'click')} "
        f"({plural(quality.get('likes', 0), 'like')}, "
        f"{plural(quality.get('dislikes', 0), 'dislike')}); classifier "
        f"{'active' if quality.get('classifier_active') else 'inactive'}."
    )
    if quality.get("caveat"):
        echo(typer.style(f"Caveat: {clean(quality['caveat'])}", fg="yellow"))


def render_communities(result: dict, echo: Callable[[str], None] = typer.echo) -> None:
    echo(clean(result.get("message")))
    for c in result.get("communities", []):
        echo(
            typer.style(clean(c["label"]), bold=True)
            + f"  ({plural(c['size'], 'tag')}, {plural(c['n_items'], 'item')}): "
            + ", ".join(clean(t) for t in c["top_tags"])
        )
