"""Which language an item is written in, as biblatex's ``langid`` names it.

biblatex hyphenates an entry by its ``langid`` and sentence-cases titles only of English
ones: a German title recased as English loses the capitals of its nouns. The judge is
:func:`hermes.text.language.english` (what the tagger and the explanations use); a text it finds
not English is named by the language whose distinctive function words it uses most, among
those hermes reads dates in.
"""

from __future__ import annotations

from hermes.text.language import WORD, english

#: function words of one language that the others listed here do not use
_WORDS = {
    "german": frozenset(
        """der die das und ist nicht ein eine dem den des mit sich von zu auf
        für im auch zum zur bei beim vom nach wird werden wurde haben sind oder aber dass noch
        nur über aus wie sie wir einen einem einer kein keine mehr schon jetzt kann durch
        ohne""".split()
    ),
    "french": frozenset(
        """le les des du et est une pour dans qui sur au avec sont cette il
        elle aux mais ou nous vous ces leur""".split()
    ),
    "spanish": frozenset(
        """el los las del por con una su para es al lo como más pero sus y
        muy este esta entre""".split()
    ),
    "portuguese": frozenset(
        """um uma os não na ao em à é com mais foi ele ela seu sua pelo
        pela também mas ou dos das nos""".split()
    ),
    "italian": frozenset(
        """il di che è per della sono gli nel alla dei delle anche non
        una""".split()
    ),
    "dutch": frozenset(
        """het een van niet zijn voor op met dat ook naar en bij wordt
        deze""".split()
    ),
}
#: fewer of a language's words than this name no language: a title with one "die" is not
#: German
MIN_VOTES = 2


def langid(text: str) -> str | None:
    """``"german"``, ``"french"`` … for a text that is not English, else None (English, or
    too little to tell)."""
    if not text or english(text):
        return None
    words = [w.lower() for w in WORD.findall(text[:1000])]
    votes = {name: sum(w in vocabulary for w in words) for name, vocabulary in _WORDS.items()}
    best = max(votes, key=votes.get)
    return best if votes[best] >= MIN_VOTES else None
