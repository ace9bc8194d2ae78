"""What every export format writes alike of a reference record: the persona's notes as
text, the date, an episode's duration and media."""

from __future__ import annotations


def note_text(record: dict) -> str:
    """The persona's notes and highlights as plain text (BibTeX's and CSL-JSON's ``annote``,
    the field for a reader's own annotation, which no standard style prints): a note as
    written (the field already says it is a note), a highlight quoted and marked as one."""
    parts = [n["text"] for n in record["notes"]]
    for h in record["highlights"]:
        parts.append(f'Highlight: "{h["text"]}"' + (f" ({h['comment']})" if h["comment"] else ""))
    return "\n\n".join(parts)


def _date(record: dict) -> str | None:
    """The date a citation gives: the stored one, or only the year where the stored date is
    a later version's (an arXiv paper listed again when replaced: its id names the year of
    its first version, which is the year it is cited by)."""
    published = (record["published"] or "")[:10]
    year = record.get("year")
    if year and not published.startswith(year):
        return year
    return published or None


def duration_text(seconds: int | None) -> str | None:
    """An episode's length as players show it: "41:05", "1:02:03"."""
    if not seconds:
        return None
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02}:{rest % 60:02}" if hours else f"{rest // 60}:{rest % 60:02}"


def media(record: dict) -> dict | None:
    """An episode's audio or video enclosure (``{url, type, duration}``); None for anything
    else (a PDF attached to a post is not what a citation of the post points at)."""
    found = record.get("media")
    return found if found and found["type"].startswith(("audio/", "video/")) else None


def _media_url(record: dict) -> str | None:
    # An episode without a web page has its media URL as its URL already: not twice.
    found = media(record)
    return found["url"] if found and found["url"] != record["url"] else None


def subject_tags(record: dict) -> list[str]:
    """The tags a citation export gives an item (BibTeX ``keywords``, RIS ``KW``, CSL-JSON
    ``keyword``), which Zotero and Mendeley import as the item's tags: its feed's categories
    and its library's own tags (the person's), then the facet. Not the keyphrase tagger's
    (``keyphrases``): they are machine phrases picked from the item's own text ("corollary",
    "functional", "partition" in a trial), at most six an item and mostly on one or two items
    of a corpus, so a reference manager's tag list filled with them; and a library exported
    back to hermes would import them as the person's tags. They name hermes's topics and
    stay in the JSON-lines export and the Markdown notes."""
    machine = {t.casefold() for t in record.get("keyphrases") or []}
    return [*(t for t in record["tags"] if t.casefold() not in machine), f"hermes-{record['facet']}"]
