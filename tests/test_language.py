"""Texts in other languages under an English-only model: a low match there means the model
cannot read the text, not that it is off the persona's topics. The explanation says so and
bootstrap does not dislike such items (a trial's German quantum-computing news was
disliked on the persona's behalf)."""

from __future__ import annotations

import pytest
from hermes_persona.bootstrap import bootstrap_persona

from hermes.embed import HashEmbedder, english_only
from hermes.ranking.explain import explain
from hermes.ranking.explain_words import NOT_ENGLISH
from hermes.storage.records import create_user, require_user
from hermes.text.language import english

GERMAN = (
    "Die Forscher zeigen, dass sich die Verschränkung von Quantenbits in einem Bauteil mit "
    "der neuen Methode viel länger halten lässt, und sie wollen das Verfahren nun auf "
    "größere Prozessoren übertragen"
)
ENGLISH_OFF_TOPIC = (
    "The bakers show that the sourdough starter keeps its flavour for much "
    "longer with the new method, and they want to try it on larger loaves"
)


@pytest.fixture
def mixed(db, add_items, split_bar):
    ids = add_items(
        [
            {"title": "quantum entanglement of qubits on a chip"},
            {"title": "Quanten-Verschränkung auf dem Chip", "summary": GERMAN},
            {"title": "Sourdough at home", "summary": ENGLISH_OFF_TOPIC},
        ]
    )
    create_user(db, "ann", "quantum entanglement of qubits")
    return ids


@pytest.fixture
def english_model(monkeypatch):
    """The test embedder claims what the default model is: English only."""
    monkeypatch.setattr(HashEmbedder, "english_only", True, raising=False)


def test_the_default_model_is_english_only_and_the_test_embedder_claims_nothing():
    from hermes.embed import MiniLMEmbedder
    from hermes.onnx_embed.choice import DefaultEmbedder
    from hermes.onnx_embed.runtime import OnnxMiniLMEmbedder

    assert english_only(MiniLMEmbedder) and english_only(OnnxMiniLMEmbedder)
    assert english_only(DefaultEmbedder)
    assert not english_only(HashEmbedder())


def test_english_is_judged_on_enough_words():
    assert not english(GERMAN)
    assert english(ENGLISH_OFF_TOPIC)
    # short, but its function words and lower-case "ä" say German; a short English title is
    # English, as is one with neither sign
    assert not english("Quanten-Verschränkung auf dem Chip")
    assert english("Quantum error correction") and english("Holography in de Sitter space")


def test_a_low_match_on_a_text_in_another_language_says_what_it_cannot_show(db, mixed, english_model):
    user = require_user(db, "ann")
    german = explain(db, user, mixed[1], since_days=None)
    assert german["match"] == "none" and german["evidence"]["english"] is False
    assert german["reason"].endswith(NOT_ENGLISH + ".")
    bread = explain(db, user, mixed[2], since_days=None)
    assert bread["match"] == "none" and bread["evidence"]["english"] is True
    assert NOT_ENGLISH not in bread["reason"]
    on_topic = explain(db, user, mixed[0], since_days=None)
    assert on_topic["match"] == "strong" and NOT_ENGLISH not in on_topic["reason"]


def test_a_short_headline_in_another_language_gets_the_caveat_too(db, add_items, english_model, split_bar):
    """A trial: "Eilmeldung: …" (a headline, no summary) read "No match" with no word that
    the model cannot read German; a short English title is not given the caveat."""
    german, english_title = add_items(
        [{"title": "Eilmeldung: Bundesbank senkt Prognose für das Wachstum"}, {"title": "Sourdough at home"}]
    )
    user = create_user(db, "ann", "quantum entanglement of qubits")
    headline = explain(db, user, german, since_days=None)
    assert headline["match"] == "none" and headline["reason"].endswith(NOT_ENGLISH + ".")
    assert NOT_ENGLISH not in explain(db, user, english_title, since_days=None)["reason"]


def test_a_model_that_claims_no_language_is_not_second_guessed(db, mixed):
    user = require_user(db, "ann")
    german = explain(db, user, mixed[1], since_days=None)
    assert german["evidence"]["english"] is None and NOT_ENGLISH not in german["reason"]


def test_bootstrap_does_not_dislike_what_the_model_cannot_read(db, mixed, english_model):
    done = bootstrap_persona(db, "ann", n_like=1, n_dislike=5)
    assert [i["id"] for i in done["liked"]] == [mixed[0]]
    assert [i["id"] for i in done["disliked"]] == [mixed[2]]  # the bread, not the German news


def test_bootstrap_with_a_model_that_reads_any_language_dislikes_as_before(db, mixed):
    done = bootstrap_persona(db, "ann", n_like=1, n_dislike=5)
    assert sorted(i["id"] for i in done["disliked"]) == sorted(mixed[1:])


def test_a_long_text_is_judged_on_its_beginning():
    from hermes.text.language import JUDGED_CHARS

    opening = (ENGLISH_OFF_TOPIC + " ") * (JUDGED_CHARS // len(ENGLISH_OFF_TOPIC) + 1)
    assert english(opening + (GERMAN + " ") * 40)  # the German tail is not read
    assert not english((GERMAN + " ") * 10 + opening)


def test_words_both_languages_use_vote_for_neither():
    """A trial's Portuguese news item read as English: "no", "do" and "a" are English stop
    words and Portuguese contractions / articles."""
    text = (
        "Chuvas fortes causam enchentes no Rio Grande do Sul. A Defesa Civil alertou para "
        "novas enchentes em Porto Alegre nesta terça-feira."
    )
    assert not english(text)
    assert english("No, we do not think a model this small can do as well as a larger one.")
