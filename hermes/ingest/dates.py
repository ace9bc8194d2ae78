"""Dates that feeds write in other languages, and dates hidden in item URLs.

feedparser reads RFC 822 dates with English day and month names only: UOL's
``Seg, 24 Set 2018 18:43:00 -0300`` comes back unparsed, and an item without a date used to
be stamped with the time it was fetched, so years-old news filled every "last 7 days".
:func:`parse_localized` is registered with feedparser (``registerDateHandler``) and reads
Portuguese, Spanish, French, German, Italian and Dutch day and month names, then hands an
English rewrite to the standard library's RFC 822 parser (:mod:`email.utils`). :func:`date_from_url` reads the
``/2018/09/24/`` (or ``2018-09-24``) that many news sites put in their article URLs, and
:func:`text_date` the ``Published:`` line an arXiv-API-to-RSS bridge writes into the text.
"""

from __future__ import annotations

import re
import time
import unicodedata
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

_ENGLISH = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

# Month names and abbreviations (accents removed, lower case) of pt, es, fr, de, it, nl.
# No spelling means different months in two of these languages.
_MONTH_NAMES = {
    1: "jan janeiro ene enero janv janvier januar janner jaenner gen gennaio januari",
    2: "fev fevereiro feb febrero fevr fevrier februar febbraio februari",
    3: "mar marco marzo mars maerz marz mrz maart mrt maa",
    4: "abr abril avr avril apr april aprile",
    5: "mai maio may mayo mag maggio mei",
    6: "jun junho junio juin juni giu giugno",
    7: "jul julho julio juil juillet juli lug luglio",
    8: "ago agosto aout august aug augustus",
    9: "set setembro sep sept septiembre setiembre septembre september settembre",
    10: "out outubro oct octubre octobre okt oktober ott ottobre oktober",
    11: "nov novembro noviembre novembre november",
    12: "dez dezembro dic diciembre dec decembre dezember dicembre december",
}
MONTHS = {name: number for number, names in _MONTH_NAMES.items() for name in names.split()}

# Day names (and their usual abbreviations): dropped, the date does not need them.
DAYS = set(
    """
    seg segunda ter terca qua quarta qui quinta sex sexta sab sabado dom domingo feira
    lun lunes mar martes mie miercoles jue jueves vie viernes
    lundi mardi mer mercredi jeu jeudi ven vendredi sam samedi dim dimanche
    mo montag di dienstag mi mittwoch do donnerstag fr freitag sa samstag so sonntag
    lunedi martedi mercoledi gio giovedi venerdi sabato domenica
    ma maandag dinsdag wo woensdag donderdag vr vrijdag za zaterdag zo zondag
""".split()
)
# Words that join the parts of a long-form date: "24 de setembro de 2018", "le 24 mars".
FILLERS = {"de", "del", "le", "den", "der", "el", "em", "a", "as", "um", "am", "om", "alle", "ore", "h"}

# Zone abbreviations these feeds use that feedparser does not know (it would read them as UTC).
ZONES = {
    "brt": "-0300",
    "brst": "-0200",
    "art": "-0300",
    "clt": "-0400",
    "cot": "-0500",
    "cet": "+0100",
    "cest": "+0200",
    "mez": "+0100",
    "mesz": "+0200",
    "wet": "+0000",
    "west": "+0100",
    "eet": "+0200",
    "eest": "+0300",
    "bst": "+0100",
    "hora": "",
}

_TOKEN = re.compile(r"[^\s,]+")
_TIME = re.compile(r"^\d{1,2}[:h]\d{2}(?::\d{2})?$")


def _fold(token: str) -> str:
    token = unicodedata.normalize("NFKD", token.lower())
    return "".join(c for c in token if not unicodedata.combining(c)).strip(".,;")


def _utc(when: datetime) -> time.struct_time | None:
    """``when`` as the UTC 9-tuple feedparser's date handlers return; a time without a zone
    is UTC (RFC 822's ``-0000``, an ISO date without offset)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return when.astimezone(UTC).utctimetuple()
    except (OverflowError, ValueError):  # year 1 west of Greenwich, 9999 east of it
        return None


_COLON_ZONE = re.compile(r"([+-]\d{2}):(\d{2})$")
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")
_UNPADDED = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")


def _rfc822(value: str) -> time.struct_time | None:
    """An RFC 822 date with English names (``Thu, 26 Nov 2026 10:00:00 GMT``) as a UTC
    9-tuple, else ``None``."""
    value = _COLON_ZONE.sub(r"\1\2", value.strip())  # email.utils reads "+02:00" as UTC
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    written = _YEAR.search(value)
    if written and int(written.group()) != when.year:
        return None  # email.utils makes year 0001 (a generator's zero) 2001
    return _utc(when)


def _iso8601(value: str) -> time.struct_time | None:
    """An ISO 8601 date or time (``2026-11-26``, ``2026-1-5``, ``2026-11-26T10:00:00Z``) as a
    UTC 9-tuple."""
    value = _UNPADDED.sub(lambda m: f"{m[1]}-{int(m[2]):02d}-{int(m[3]):02d}", value)
    try:
        return _utc(datetime.fromisoformat(value))
    except ValueError:
        return None


def parse_localized(value: str):
    """A feedparser date handler: a UTC 9-tuple for an RFC 822-style date written with
    pt / es / fr / de / it / nl day and month names, else ``None`` (other handlers try)."""
    rewrite = _in_english(value)
    return _rfc822(rewrite[0]) if rewrite is not None and rewrite[1] else None


def _in_english(value: str) -> tuple[str, bool] | None:
    """(``value`` rewritten as an English RFC 822 date, whether it used day or month names
    of another language), or ``None`` when it is no date of that shape."""
    if not value or len(value) > 100:
        return None
    tokens = [_fold(t) for t in _TOKEN.findall(value)]
    tokens = [t for t in tokens if t]
    day = month = year = None
    clock, zone = "00:00:00", "+0000"
    foreign = False
    for position, token in enumerate(tokens):
        parts = token.split("-")
        # "mar" is Tuesday (es, fr, it) in front of a date and March inside it.
        if month is None and token in MONTHS and not (position == 0 and token in DAYS):
            month = MONTHS[token]
            foreign = foreign or token[:3] != _ENGLISH[month - 1] or len(token) > 3
            continue
        if token in DAYS or (len(parts) == 2 and parts[0] in DAYS and parts[1] == "feira"):
            foreign = True
            continue
        if token in FILLERS:
            continue
        if token.isdigit():
            if day is None and len(token) <= 2:
                day = int(token)
            elif year is None and len(token) == 4:
                year = int(token)
            else:
                return None
            continue
        if _TIME.match(token):
            clock = token.replace("h", ":")
            continue
        if token[:1] in "+-" and token[1:].replace(":", "").isdigit():
            zone = token
            continue
        if token in ZONES:
            zone = ZONES[token] or zone
            continue
        if token in ("gmt", "utc", "ut", "z"):
            continue
        return None  # a word we do not know: not a date we can vouch for
    if None in (day, month, year):
        return None
    return f"{day} {_ENGLISH[month - 1]} {year} {clock} {zone.replace(':', '')}", foreign


_registered: list[bool] = []


def feedparser_module():
    """feedparser, with :func:`parse_localized` registered as a date handler (once): every
    path that reads a feed gets it from here."""
    # Here, not at the top: feedparser (and through it ssl, http.client, urllib.request)
    # loads only when a feed is read, not in every process that imports the ingest modules.
    import feedparser

    if not _registered:
        feedparser.registerDateHandler(parse_localized)
        _registered.append(True)
    return feedparser


# /2018/09/24/ or /2018-09-24-slug in a URL path (not its host or query). Separators are
# required: eight bare digits are as often an article number as a date.
_URL_DATE = re.compile(r"(?<![0-9])((?:19|20)\d{2})([/_-])(0?[1-9]|1[0-2])\2(0?[1-9]|[12]\d|3[01])(?![0-9])")


#: how far ahead of this machine's clock a date may be and still be believed (time zones,
#: clock skew); a feed dating an item next month would otherwise sit in every recent window
CLOCK_SKEW = timedelta(days=1)


#: no feed item is older than this: a date before it is a generator's zero (the Unix epoch,
#: 1900-01-01, 0001-01-01), which put a post among "the oldest" and out of every window
EARLIEST = datetime(1980, 1, 1, tzinfo=UTC)


def believable(iso: str | None, *, now: datetime | None = None) -> str | None:
    """``iso`` unless it lies further in the future than :data:`CLOCK_SKEW` or before
    :data:`EARLIEST`."""
    if not iso:
        return None
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return iso if EARLIEST <= when <= (now or datetime.now(UTC)) + CLOCK_SKEW else None


def date_from_url(url: str | None, *, now: datetime | None = None) -> str | None:
    """The date an article URL spells out (``.../2018/09/24/...``) as ISO UTC midnight, or
    ``None``. A date in the future (beyond a day of clock skew) is not believed."""
    if not url:
        return None
    path = re.sub(r"^[a-z]+://[^/]+", "", url, flags=re.I).split("?", 1)[0].split("#", 1)[0]
    now = now or datetime.now(UTC)
    for match in _URL_DATE.finditer(path):
        try:
            when = datetime(int(match.group(1)), int(match.group(3)), int(match.group(4)), tzinfo=UTC)
        except ValueError:
            continue
        if believable(iso := when.isoformat(timespec="seconds"), now=now):
            return iso
    return None


# A day, a month and a year: 2026-11-26, 26 Nov 2026, 26. November 2026.
_FULL_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\b\d{1,2}\.?\s+[^\W\d]+\.?\s+\d{4}")


def text_date(value: str | None) -> str | None:
    """A date written in an item's text (an arXiv bridge's ``Published: 2026-11-26T10:00:00Z``
    line) as ISO UTC, read as ISO 8601, as RFC 822, or with the day and month names above
    (English ones too: ``26 Nov 2026``); ``None`` when it is not a full date — "2026-11" or an arXiv id's month is
    no publication date."""
    if not value or len(value) > 100:
        return None
    if not _FULL_DATE.search(value):
        return None  # a year or a month alone: W3DTF would call it the 1st at midnight
    value = value.strip()
    rewrite = _in_english(value)
    return struct_to_iso(_iso8601(value) or _rfc822(value) or (_rfc822(rewrite[0]) if rewrite is not None else None))


def struct_to_iso(parsed) -> str | None:
    """feedparser's UTC ``struct_time`` as ISO 8601, ``None`` when it is unusable."""
    if not parsed:
        return None
    try:
        return datetime(*parsed[:6], tzinfo=UTC).isoformat(timespec="seconds")
    except (TypeError, ValueError, OverflowError):
        return None


__all__ = ["CLOCK_SKEW", "MONTHS", "believable", "date_from_url", "parse_localized", "struct_to_iso", "text_date"]
