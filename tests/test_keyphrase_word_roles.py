"""Verbs and participles are no one-word topics: the keyphrase tagger reads where a word
stands (hermes.builtins.word_roles). A trial's digest read "motivated · obey"."""

from __future__ import annotations

from hermes.builtins.default_keyphrases import candidates, keyphrases
from hermes.builtins.word_roles import noun_positions, participle_form
from hermes.embed import HashEmbedder

TEXT = (
    "Motivated by recent experiments, we find that electrons which obey the exclusion principle "
    "form a superconducting condensate. Masses ranging from 1 to 3 GeV are studied with Raman "
    "scattering and the scattering of neutrons."
)


def test_a_verb_or_a_participle_is_no_candidate_alone():
    found = candidates(TEXT)
    for word in ("motivated", "obey", "ranging", "superconducting"):
        assert word not in found
    assert "mass ranging" not in found  # a phrase ending in a participle before its complement


def test_nouns_and_noun_uses_of_participle_forms_stay():
    found = candidates(TEXT)
    for phrase in ("exclusion principle", "superconducting condensate", "raman scattering", "condensate"):
        assert phrase in found
    assert "scattering" in found  # "the scattering of neutrons": a noun


def test_the_tagger_proposes_the_nouns_not_the_verbs():
    vectors, tokens = HashEmbedder().embed_tokens([TEXT])
    proposed = keyphrases(TEXT, vectors[0], tokens[0])
    assert "superconducting condensate" in proposed and "raman scattering" in proposed
    assert not {"motivated", "obey", "ranging", "superconducting"} & set(proposed)


def test_a_word_between_verb_markers_is_a_verb():
    words = "particles which obey a law".split()
    breaks = [False, True, False, True, False]
    assert noun_positions(words, breaks) == [True, False, False, False, True]
    # a noun is not followed by an article: "we reproduce the data" (the pronoun aside)
    assert noun_positions(["models", "reproduce", "the"], [False, False, True])[1] is False


def test_a_participle_form_is_a_noun_only_as_the_head_of_its_phrase():
    assert noun_positions(["the", "tunneling", "of"], [True, False, True])[1]
    assert noun_positions(["quantum", "tunneling"], [False, False])[1]
    assert not noun_positions(["tunneling", "current"], [False, False])[0]  # a modifier
    assert not noun_positions(["masses", "ranging", "from"], [False, False, True])[1]
    assert not noun_positions(["motivated", "by"], [False, True])[0]  # nothing leads it


def test_the_participle_shape_needs_a_syllable_before_the_ending():
    assert participle_form("aimed") and participle_form("taking") and participle_form("electron-doped")
    assert not participle_form("string") and not participle_form("red") and not participle_form("seed")
    assert not participle_form("galaxy")
