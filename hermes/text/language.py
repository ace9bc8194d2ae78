"""Which texts read as English.

The default model (all-MiniLM-L6-v2) was trained on English and the keyphrase tagger's
candidate rules are English: on a text in another language the tagger would make topics
of function words, and a low similarity to an English interests text is no evidence that
the item is off the persona's topics — only that the model cannot read it. The tagger
leaves such texts untagged; the explanation and bootstrap say or act on what the figure
cannot show (:func:`hermes.embed.english_only` tells whether the model in use reads
English only).

It also lists the English words that cannot name a topic (:func:`names_no_topic`): the
keyphrase tagger never proposes them, and a topic's label leaves them out.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

#: a word: letters, inner apostrophes and hyphens (numbers and underscores are not words)
WORD = re.compile(r"[^\W\d_][\w'\-]*[^\W_]|[^\W\d_]", re.UNICODE)

#: The words of an interests text that name no topic: function words and how people describe
#: their work ("I am interested in", "papers on", "my research"). The lexical query leaves
#: them out (:mod:`hermes.ranking.lexical`: without them the OR query stays selective; BM25's
#: idf would discount them anyway, but matching every row would cost time), and so do the
#: words feed suggestions are matched on (``hermes_feeds.suggest``). Shorter than
#: :func:`english_stop_words`, on purpose: "first", "system", "fire" are query words.
INTEREST_STOP_WORDS = frozenset(
    """
a about above across after again against all almost also although always am among an and
another any are around as at be because been before being below between both but by can
could did do does doing done down during each either else etc even ever every few for from
further get gets got had has have having he her here hers him his how however i if in into
is it its itself just least less like made make many may me might more most much must my
near need neither no nor not now of off often on once one only or other others our ours out
over own per perhaps rather same several she should since so some such than that the their
theirs them then there these they this those though through thus to too toward towards
under until up upon us use used using very via was we well were what when where whether
which while who whom whose why will with within without would yet you your yours
interested interest interests research researcher work working working study studies topic
topics especially including particular particularly mainly mostly things
new recent recently paper papers
""".split()
)

# Function words of the other languages hermes reads dates in (es, pt, fr, de, it, nl) that
# are not English words: a text using more of them than of English stop words is not English.
_FOREIGN = frozenset(
    """
    de la que el en los del las por con una su para es al lo como más pero sus se um uma os
    das dos não na ao em à é com mais foi ele ela le les des du et est une pour dans qui sur
    au avec sont cette il elle der und ist nicht ein eine dem mit sich von zu auf für im auch
    di che è per della sono gli nel alla het een van niet zijn voor op met dat ook naar o e
    da seu sua pelo pela também mas ou y el
""".split()
)
# German function words the list above lacked ("die", "das", "den", "wird", "über" …): short
# German news ("Bundesbank meldet Wachstum von 0,3 Prozent") had nothing to tell it apart,
# and a German teaser with "die" and "das" but not "und" counted "in" and "will" as English.
# None of them is in scikit-learn's English list; "die" alone is an English word, rare in
# feeds beside a German text's dozen.
_FOREIGN = _FOREIGN | frozenset(
    """
    die das den des zum zur bei beim vom nach wird werden wurde wurden worden haben sind
    oder aber dass noch nur über aus wie sie wir einen einem einer eines gegen seit unter
    zwischen ihre ihr sein seine seinen seiner kein keine keinen mehr schon jetzt soll
    sollen kann können muss müssen wegen bis durch ohne
""".split()
)
#: English stop words that are also common function words of those languages (Portuguese
#: "no" / "do" / "a", Spanish "no"): a vote for neither side. "Chuvas fortes causam enchentes
#: no Rio Grande do Sul. A Defesa Civil alertou para …" counted three English words to two.
_SHARED = frozenset({"a", "no", "do", "as"})
#: below this many words (a title alone) a tie between the two sides counts as English
LANGUAGE_MIN_WORDS = 12
#: the language is judged on a text's beginning: some 150 words settle the proportions, and
#: a post's full text (up to 4,000 characters) would cost every explained item 0.2 ms
JUDGED_CHARS = 1000


# Letters the other languages spell their words with and English words do not. A lower-case
# word holding one ("beschließt", "wächst", "não", "política") is a word of another
# language; a capitalised one is more often a name in an English text ("Schrödinger",
# "Poincaré", "Kähler") and is not counted.
_FOREIGN_LETTERS = re.compile(r"[äöüßáàâãçéèêëíìîïñóòôõúùûœ]")


def _votes(text: str, stop_words: frozenset[str] | None) -> tuple[int, int, int]:
    """(words, English votes, votes for another language) of ``text``'s beginning."""
    found = WORD.findall(text[:JUDGED_CHARS])
    stop = english_stop_words() if stop_words is None else stop_words
    ours = theirs = 0
    for surface in found:
        word = surface.lower()
        if word in _FOREIGN or (surface == word and _FOREIGN_LETTERS.search(word)):
            theirs += 1
        elif word in stop and word not in _SHARED:
            ours += 1
    return len(found), ours, theirs


# Kept per text: every feed page explains the same top items again (20 × 85 µs a page).
@lru_cache(maxsize=4096)
def english(text: str, stop_words: frozenset[str] | None = None) -> bool:
    """Whether ``text`` reads as English, however short it is: the one judge the tagger,
    the explanation and bootstrap share.

    A text is English when its English stop words (leaving out the words both lists hold,
    such as "de") outnumber the signs of another language: that language's function words
    and lower-case words spelled with letters English does not use ("beschließt", "não")
    — measured on the bundled feeds, English texts are 20–55 % English stop words, Spanish
    and Portuguese news 3–16 %. A short text (under :data:`LANGUAGE_MIN_WORDS` words: a
    headline, a title without summary) is English unless those signs outnumber its stop
    words: a title with neither ("Quantum error correction") stays English, and so does a
    tie ("Holography in de Sitter space"); counting every short text as English made a
    German headline the topics "meldet" and "prozent" and left its "no match" unexplained.
    ``stop_words`` replaces scikit-learn's English list (the tagger passes its longer one);
    a long text is judged on its first :data:`JUDGED_CHARS` characters."""
    words, ours, theirs = _votes(text, stop_words)
    return ours >= theirs if words < LANGUAGE_MIN_WORDS else ours > theirs


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop-word list (``ENGLISH_STOP_WORDS``), from hermes's copy in
    ``hermes/data/english_stop_words.txt``: importing scikit-learn costs 1–2.5 s (scipy,
    joblib …), which was the largest fixed cost of tagging a fresh ingest run
    (benchmarks/results/onnx.md), and its module file is private. A test checks the copy
    against the installed scikit-learn's list."""
    text = (Path(__file__).parent.parent / "data" / "english_stop_words.txt").read_text(encoding="utf-8")
    return frozenset(word for word in map(str.strip, text.splitlines()) if word and not word.startswith("#"))


#: Words of scikit-learn's English list that name topics in science and news ("system",
#: "thin film", "fire", "interest rate"): neither stop words to the tagger nor filler.
TOPICAL_STOP_WORDS = frozenset(
    {
        "system",
        "thin",
        "thick",
        "fire",
        "interest",
        "bill",
        "top",
        "bottom",
        "front",
        "back",
        "side",
        "full",
        "empty",
        "part",
        "amount",
        "move",
    }
)
# Words that cannot name a topic and that scikit-learn's English list lacks, found as topics
# in a user trial on English arXiv, blog and podcast feeds ("just", "exist", "respect",
# "hand", "note") and completed with their kind. FILLER: adverbs, prepositions, verbs and
# opinion words of any prose: never a topic nor part of one (they end a candidate phrase).
# Words that also start topics ("start" in "cold start", "claim", "recall", "matter",
# "change") are left out on purpose.
FILLER = frozenset(
    """
    just quite maybe instead despite versus vs whilst amid amidst unto albeit regardless
    anyway anymore ago soon okay ok yes oh via using exist exists existed existing look looks
    looked looking seem seems seemed turn turns turned turning involve involves involved
    involving relate relates related relating depend depends depended depending consist
    consists consisted consisting refer refers referred referring notice noticed mention
    mentions mentioned assume assumes assumed assuming suppose supposes supposed believe
    believes believed feel feels felt meant tend tends tended kept held stay stays stayed occur
    occurs occurred occurring brought prove proves proved proven analyze analyzes analyzed
    analyse analyses analysed define defines defined extend extends correspond corresponds
    corresponded corresponding represent represents represented representing play plays
    played hold holds detect detects detected considering overrated underrated gentle brief
    quick easy great nice amazing surprising weird
""".split()
)
#: Nouns that idioms use emptily ("on the other hand", "with respect to", "Notes on …", "for
#: example", "a brief overview"): no topic alone, nor with one another; fine inside a
#: topic's phrase ("robotic hand", "lab notes").
FILLER_NOUNS = frozenset(
    """
    hand hands respect respects regard regards note notes sense fact facts kind kinds sort
    sorts example examples instance instances addition contrast course extent idea ideas
    reason reasons purpose purposes attempt attempts bit bits piece pieces thought thoughts
    question questions issue issues topic topics overview introduction primer guide guides
    tutorial tutorials lesson lessons remark remarks reflection reflections story stories
    update updates day days end presence agreement context possibility nature finding
    findings understanding variety consequence consequences section conclusion conclusions
    assumption assumptions account version versions description comparison difference
    details
""".split()
)
#: Adjectives of any argument ("similar", "previous", "consistent", "additional"): no topic
#: alone, nor with one another or the nouns above; fine inside a topic's phrase ("complete
#: graph", "open cluster").
FILLER_ADJECTIVES = frozenset(
    """
    similar consistent previous expected additional necessary relevant appropriate suitable
    usual underlying detailed specific explicit equivalent alternative individual earlier
    later larger smaller arbitrary complete special future real exact basic generalized
    extended enhanced reduced fixed selected combined dependent independent close open
""".split()
)


@lru_cache(maxsize=1)
def phrase_breakers() -> frozenset[str]:
    """Words no topic's phrase holds: scikit-learn's English stop words (less
    :data:`TOPICAL_STOP_WORDS`) and :data:`FILLER`."""
    return (english_stop_words() - TOPICAL_STOP_WORDS) | FILLER


@lru_cache(maxsize=1)
def non_topic_words() -> frozenset[str]:
    """Words that cannot name a topic: :func:`phrase_breakers`, :data:`FILLER_NOUNS` and
    :data:`FILLER_ADJECTIVES`."""
    return phrase_breakers() | FILLER_NOUNS | FILLER_ADJECTIVES


def names_no_topic(name: str) -> bool:
    """Whether every word of ``name`` is one of :func:`non_topic_words` ("just", "respect",
    "Notes", "on the other hand"); a name without words ("42") is not judged (False)."""
    words = WORD.findall(name)
    if not words:
        return False
    filler = non_topic_words()
    return all(w.lower() in filler for w in words)
