"""Which words of a text stand where a noun stands, read from the function words around them.

The keyphrase tagger (:mod:`hermes.builtins.default_keyphrases`) makes candidates of every
run of words no stop word interrupts, so a verb or a participle between two stop words
("which *obey* a", "*motivated* by", "masses *ranging* from") became a one-word topic. No
part-of-speech model is at hand offline, but English marks a verb by the closed classes of
words next to it: a subject pronoun, an auxiliary, a modal or the infinitive's "to" before
it, an article or possessive right after it (a noun is not followed by "the"). And a word
of participle form (-ed, -ing) names a thing only as the head of a phrase ("raman
scattering", "the tunneling of"), not before its complement ("ranging from", "aimed at").

These are grammar, not vocabulary: the lists below are closed word classes, so no topic word
is named here and a new field's verbs are caught as well as physics'.
"""

from __future__ import annotations

# Words after which the next word is a verb: subject pronouns, relative pronouns, auxiliaries,
# modals, negation and the infinitive's "to". ("that" is left out: "we show that graphene …"
# puts a noun after it as often as a verb.)
VERB_BEFORE = frozenset(
    """
    i we you they he she it which who to not cannot can could may might must shall should
    will would do does did is are was were be been being has have had
""".split()
)
# Words that begin a verb's object: a noun is not directly followed by one.
OBJECT_AFTER = frozenset("the a an these those its their our his her them us how whether".split())
# Words that begin a noun phrase: a participle form right after one is used as a noun ("the
# scattering", "by doping") when nothing follows it in its phrase.
NOUN_BEFORE = frozenset("the a an this these those its their our his her of in on for with by from and or".split())
# Prepositions that take a participle's complement ("ranging from", "aimed at", "carried
# out", "motivated by", "equipped with", "belonging to").
COMPLEMENT = frozenset("from at out up to with by into".split())


def participle_form(word: str) -> bool:
    """Whether ``word`` (lower-cased) has the shape of a past participle or an -ing form:
    the ending after a stem of a syllable ("aimed", "taking"; not "red", "seed", "string")."""
    for ending in ("ed", "ing"):
        stem = word[: -len(ending)]
        if word.endswith(ending) and not stem.endswith("e" if ending == "ed" else "-"):
            return any(c in "aeiouy" for c in stem.rsplit("-", 1)[-1])
    return False


def noun_positions(surfaces: list[str], breaks: list[bool]) -> list[bool]:
    """For each word of a stretch of text (as written, in order; ``breaks``: whether it ends
    a candidate phrase, i.e. is a stop word), whether it stands where a noun can stand:
    no verb marker next to it, and a participle form only as the head of its
    phrase, after a determiner, a preposition or another word of the phrase, and not
    before its complement."""
    words = [s.lower() for s in surfaces]
    n = len(words)
    out = [False] * n
    for i, word in enumerate(words):
        if breaks[i]:
            continue
        before = words[i - 1] if i else None
        after = words[i + 1] if i + 1 < n else None
        if before in VERB_BEFORE or after in OBJECT_AFTER:
            continue
        elif participle_form(word):
            # a participle after it starts a clause ("calcium imaging decoded with"): the
            # phrase ends before it
            head = after is None or breaks[i + 1] or participle_form(after)
            led = before is not None and (before in NOUN_BEFORE or not breaks[i - 1])
            out[i] = head and led and after not in COMPLEMENT
        else:
            out[i] = True
    return out
