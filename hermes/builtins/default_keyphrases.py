"""The built-in keyphrase tagger: topics for items whose feed has no categories.

Only English text is tagged (:func:`hermes.text.language.english`): the candidate rules
are English, and on other languages they make topics of function words and verbs. Stop lists
of those languages would not keep that true: what ends a phrase here is as much the English
verbs and filler listed below as the stop words, and a German list would not hold "meldet"
("reports"). So a text that shows signs of another language, however short (a headline), is
left untagged: an untagged German item is better than one tagged "meldet".

KeyBERT-style (Grootendorst's KeyBERT; EmbedRank): candidate phrases are the 1–3 word runs
of an item's title and abstract that no stop word (scikit-learn's English list, the filler
words it lacks — just, via, exist … (:data:`hermes.text.language.FILLER`) —, the scaffolding words
of abstracts and the words of feed boilerplate: published, comments, pdf, arxiv …) or
punctuation interrupts, each scored by its cosine to the item's own embedding, and a
diverse best twenty chosen by maximal marginal relevance. The phrase vectors come from
the model pass that embedded the item — the mean of the contextual vectors of the tokens the
phrase covers — so tagging costs no second model run; an embedder without token vectors
gets the phrases embedded directly (slower).

A word alone, or a participle form ending a phrase, is a candidate only if the text puts it
once where a noun stands, read from the function words beside it (:mod:`.word_roles`): "which
obey a", "motivated by", "masses ranging from" gave the topics "obey", "motivated",
"masses ranging".

The core keeps a proposal only once two items carry it and at most six per item
(:mod:`hermes.ingest.tagging`); feed categories stay and win ties. ``hermes tags rebuild``
re-tags the whole archive.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from hermes.text.language import (
    FILLER_ADJECTIVES,
    FILLER_NOUNS,
    english,
    phrase_breakers,
)
from hermes.text.language import WORD as _WORD
from hermes.text.latex import accented_letters

from ..embed import get_embedder
from ..hookspecs import hookimpl
from . import word_roles

#: bump when the candidate rules or the scoring change (benchmark caches key on it)
#: 11: filler words (just, exist, hand, respect, note …) are no topic; short texts in another
#: language are not tagged
#: 12: web addresses and domain names are no text to tag ("ycombinator", "http"); a phrase
#: that repeats a word ("big live live") is no candidate; "url", "permalink" are boilerplate
#: 13: more verbs of argument (deduce, giving, satisfy …) end a phrase and more adjectives
#: (finite, algebraic, constant …) never stand alone
#: 14: "dataset", "detection" never alone (a persona's liked topics read "dataset · detection")
#: 15: a name ending in s is no plural ("Higgs" was tagged "higg", "Higgses" "higgse")
#: 16: LaTeX's accented letters are read as the letters they are ("K\\"ahler manifolds" was
#: tagged "ahler manifold", now "kähler manifold")
#: 17: participles and verbs of argument (having, according, follow, providing, possess) end
#: a phrase; "object", "characterization", "answer" never alone; "leading" only starts one
#: (topic names read "having · answer")
#: 18: (not shipped) every word only ever inside one same two-word phrase dropped: math
#: topics lost their shared words (unclustered 17% -> 26%)
#: 19: black, white, dark only start a phrase, and a word the text only ever puts after
#: them is no proposal alone ("hole" of "black hole", "dwarf" of "white dwarf"); behave,
#: formulate, pay, revisit end a phrase; formalism, arbitrariness, tensor, physics, thermodynamic
#: never alone (a trial's hep-th topics read "hole", "black", "behave", "arbitrariness")
#: 20: a word alone, or a participle form ending a phrase, is a candidate only where the text
#: puts it where a noun stands (:mod:`.word_roles`): "motivated", "obey", "aimed", "masses
#: ranging" were topics
#: 21: Latin and Greek plurals are folded with their singular ("vortices" was tagged "vortice",
#: "spectra" and "nuclei" were topics apart from "spectrum" and "nucleus")
#: 22: journal abbreviations cited in abstracts ("Phys. Rev.", "JETP") are no candidates
#: 23: mathematical writing's own nouns (theorem, lemma, corollary, conjecture, proof …) never
#: alone: a trial's math listing exported "corollary" as a Zotero tag
VERSION = 23
#: proposals per item (the core keeps the recurring best six of them)
PROPOSALS = 20
#: maximal marginal relevance: weight of relevance against novelty
DIVERSITY_LAMBDA = 0.75
#: a proposal's cosine may trail the best one's by at most this much
MAX_BEHIND = 0.2
#: candidates embedded directly when the embedder has no token vectors
FALLBACK_CANDIDATES = 30
MAX_WORDS = 3

# Words an abstract uses for its own scaffolding (verbs, adverbs, filler): like stop words
# they end a candidate phrase.
_SCAFFOLD = set(
    """
    show shows shown showing present presents presented propose proposes proposed using used
    observe observes observed observing use uses based obtain obtained obtains find finds
    found discuss discussed describe described consider considered investigate investigated
    demonstrate demonstrated allow allows allowed provide provides provided given known paper
    papers study studies studied work works result results resulting approach approaches
    technique techniques new novel recent recently different various several certain general
    simple particular important possible respectively including include includes included
    within via thus however although whether first second third one two three also well non
    aim aims goal goals article report reports episode episodes podcast today week weeks year
    years talk talks interview guest guests host does did done doing make makes made making
    get gets got take takes taken give gives gave see seen need needs lead leads led yield
    yields suggest suggests suggested indicate indicates indicated imply implies implied
    predict predicts predicted require requires required remain remains remained appear
    appears appeared become becomes became increase increases increased decrease decreases
    decreased adopt adopted reveal reveals revealed explain explains explained compare
    compares compared apply applies applied measure measured derive derived estimate estimated
    determine determined perform performed calculate calculated compute computed develop
    developed introduce introduced report reported agree agrees agreed argue argues argued
    focus focused focuses examine examined explore explored address addressed exhibit
    exhibits exhibited characterize characterized characterise characterised confirm
    confirmed identify identified produce produced produces generate generates generated
    enable enables enabled improve improves improved achieve achieves achieved corresponding
    associated existing following called named like likely unlike due able good bad better
    best many much more most less least few fewer main major minor finally furthermore
    moreover additionally hence therefore indeed especially well-known long-standing
    come comes came coming goes going went gone let lets say says said think thinks want
    wants know knows try tries tried tell tells told ask asks asked happen happens thing
    things lot lots stuff really actually pretty concerning regarding
    so-called state-of-the-art contain contains contained containing evaluate evaluates
    evaluated evaluating requiring arise arises arising arose achievable applicability
    useful interesting plus minus deduce deduces deduced giving exploit exploits exploiting
    exploited act acts satisfy satisfies satisfied satisfying having according follow
    follows followed providing possess possesses possessed possessing behave behaves
    behaved behaving formulate formulates formulated formulating pay pays paid paying
    revisit revisits revisited revisiting
""".split()
) | {
    # the second word of a Latin phrase the first of which is a stop word ("in vivo", "de
    # novo", "a priori"): alone it named a topic ("deep learning · vivo")
    "vivo",
    "vitro",
    "silico",
    "situ",
    "novo",
    "initio",
    "priori",
    "posteriori",
    "hoc",
}
# What feeds wrap around a text ("Published: … Comments: … PDF", "arXiv:2401.12345
# Abstract:"): if any reaches the text (a bridge shape hermes.ingest.arxiv_text does not
# know), it is never a topic nor part of one.
_BOILERPLATE = set(
    """
    published updated submitted comment comments pdf abstract abstracts arxiv preprint
    preprints announce url urls permalink
    phys rev lett astrophys astron appl natl acad proc commun jetp
""".split()
)
# (the second line: journals' abbreviations in an abstract's references, "[Phys. Rev. B
# 51, 16599]": "phys" alone was a topic, singularised to "phy", on a trial's cond-mat papers)
# Generic nouns: fine inside a phrase ("ising model", "solar system", "hall effect"), never a
# keyphrase alone.
_NOT_ALONE = (
    set(
        """
    model models system systems data analysis method methods effect effects problem problems
    case cases number order terms type types form value values set sets role aspect aspects
    theory process structure function field state rate time scale level range property
    properties parameter parameters condition conditions behavior behaviour evidence
    observation observations measurement measurements simulation simulations sample samples
    feature features performance quality information application applications way ways
    implication implications approximation approximations quantity quantities learning
    point points dataset datasets detection detections object objects characterization
    characterizations characterisation answer answers formalism formalisms arbitrariness
    tensor tensors physics thermodynamic
    theorem theorems lemma lemmas corollary corollaries proposition propositions conjecture
    conjectures proof proofs definition definitions
""".split()
    )
    | FILLER_NOUNS
    | FILLER_ADJECTIVES
)
# Words of idioms and argument ("hand", "respect", "similar"): not even together a topic.
_HOLLOW = FILLER_NOUNS | FILLER_ADJECTIVES
# Modifiers that start a topical phrase ("high redshift", "strong lensing", "low mass") but
# are no topic alone nor at a phrase's end.
_MODIFIERS = set(
    """
    high low large small strong weak higher lower highest lowest long short fast slow early
    late deep wide narrow hot cold dense young old massive single multiple double efficient
    total overall direct indirect significant observational theoretical numerical
    experimental analytical statistical empirical physical cosmological galactic
    extragalactic stellar solar magnetic optical electronic thermal chemical biological
    spectral spatial temporal local global nonlinear linear dynamical classical relativistic
    gravitational electromagnetic atomic molecular nuclear cosmic interstellar intergalactic
    planetary orbital radial angular central internal external initial final typical
    critical effective relative mean average respective standard available current near
    finite infinite algebraic asymptotic constant leading black white dark
""".split()
)
# Modifiers of idioms: what a "black hole", "white dwarf", "dark matter" is, the head alone
# does not say
_IDIOM_STARTS = {"black", "white", "dark"}
# Abbreviations that are topics although short.
# Stretches of text between punctuation, numbers and free-standing dashes: no candidate
# phrase crosses their ends.
_SEGMENT = re.compile(r"(?:[^.,;:!?()\[\]{}\"“”«»/|=<>+*~^0-9\s]|\s(?![-–—]\s))+")
# Catalogue prefixes ("NGC 1068", "HD 209458"): the number is the name, the prefix no topic.
_CATALOGUES = {"ngc", "ugc", "hd", "hip", "tyc", "sdss", "2mass", "psr", "iras", "eso", "pgc"}
_MATH = re.compile(r"\$[^$]{0,200}\$|\\[a-zA-Z]+")
# Web addresses, e-mail addresses and bare domain names ("news.ycombinator.com/item?id=1"):
# link boilerplate names the site, not a subject, so they are blanked like math.
_ADDRESS = re.compile(
    r"(?:https?://|www\.)\S+|\S+@\S+\.\w+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|co|uk|edu|gov|"
    r"de|fr|tv|fm|me|ai|dev|app|info|blog)\b\S*",
    re.IGNORECASE,
)
_EXCEPTIONS = set(
    """
    gas physics dynamics mathematics statistics economics optics electronics mechanics
    kinetics genetics genomics news series species lens mass class process analysis basis
    axis thesis hypothesis synthesis radius virus status bus plus chaos cosmos apparatus
    corpus focus nucleus stimulus consensus census bias alias atlas always perhaps its this
    his has was is as us gps dos los las thus cross less loss boss moss higgs
""".split()
)


# Latin and Greek plurals of scientific English by their ending, with the singular's ending
# (:func:`singular`). An ending of :data:`_CLASSICAL_INSIDE` letters or more also ends a
# longer word ("submatrices", "supernovae", "polyhedra", "analyses"); a shorter one only
# stands alone ("taxes" ends in "axes"). Not here: "data" and "media", singulars in today's
# English ("social media"); "bases" (of base or of basis); and the star names in the
# genitive ("alpha centauri", "eta carinae").
_CLASSICAL = {
    # -ices of -ex, -ix
    "vortices": "vortex",
    "vertices": "vertex",
    "cortices": "cortex",
    "indices": "index",
    "simplices": "simplex",
    "apices": "apex",
    "matrices": "matrix",
    "helices": "helix",
    "appendices": "appendix",
    # -a of -um, -on, -us
    "spectra": "spectrum",
    "quanta": "quantum",
    "maxima": "maximum",
    "minima": "minimum",
    "optima": "optimum",
    "extrema": "extremum",
    "momenta": "momentum",
    "continua": "continuum",
    "vacua": "vacuum",
    "strata": "stratum",
    "bacteria": "bacterium",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "hedra": "hedron",
    "automata": "automaton",
    "genera": "genus",
    "corpora": "corpus",
    # -i of -us
    "nuclei": "nucleus",
    "radii": "radius",
    "moduli": "modulus",
    "annuli": "annulus",
    "stimuli": "stimulus",
    "fungi": "fungus",
    "foci": "focus",
    "loci": "locus",
    "tori": "torus",
    # -ae of -a
    "formulae": "formula",
    "nebulae": "nebula",
    "novae": "nova",
    "antennae": "antenna",
    "algae": "alga",
    # -es of -is
    "theses": "thesis",
    "lyses": "lysis",
    "gnoses": "gnosis",
    "crises": "crisis",
    "axes": "axis",
}
_CLASSICAL_INSIDE = 5
_CLASSICAL_LONGEST = max(map(len, _CLASSICAL))


def _stop_words() -> frozenset[str]:
    # Read when a tagger first runs: `hermes serve` registers this plugin without tagging.
    return phrase_breakers() | frozenset(_SCAFFOLD) | frozenset(_BOILERPLATE)


_STOP: frozenset[str] | None = None


def _stops() -> frozenset[str]:
    """The stop words, read once, at the first tagging (see :func:`_stop_words`)."""
    global _STOP
    if _STOP is None:
        _STOP = _stop_words()
    return _STOP


@lru_cache(maxsize=1 << 16)
def singular(word: str) -> str:
    """The singular of an English plural noun, conservatively ("galaxies" → "galaxy",
    "processes" → "process", "physics" stays): a phrase and its plural are one tag.

    Latin and Greek plurals of scientific English go by their endings (:data:`_CLASSICAL`):
    "vortices" → "vortex", "matrices" → "matrix", "spectra" → "spectrum", "nuclei" →
    "nucleus", "hypotheses" → "hypothesis" (taking the s off made "vortice", and the others
    were topics apart from their singular). Written here, not taken from the ``inflect``
    package: on the words of the 2,000 arXiv abstracts inflect 7.6 also makes "vortice",
    "matrice", "indice", "vertice", leaves "spectra", "radii", "minima" as they are, and
    cuts the s of singulars and adjectives ("analysi", "radiu", "nucleu", "bia", "ga",
    "physic", "dynamic", "continuou"): its exceptions would outnumber these rules."""
    if len(word) < 4 or word in _EXCEPTIONS or not word.isalpha():
        return word
    for n in range(min(len(word), _CLASSICAL_LONGEST), 3, -1):
        if word[-n:] in _CLASSICAL and (n == len(word) or n >= _CLASSICAL_INSIDE):
            return word[:-n] + _CLASSICAL[word[-n:]]
    if word.endswith("es") and word[:-2] in _EXCEPTIONS:  # "lenses", "biases", "higgses"
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "ics", "ous")):
        return word[:-1]
    return word


def _read(text: str) -> tuple[str, list[int] | None]:
    """``text`` with LaTeX's accented letters as Unicode, as :func:`hermes.text.latex.readable`
    shows them ("K\\"ahler" is "Kähler": read as written, the accent command parted the
    word, and "ahler manifold" was a topic), and where each of its characters starts in
    ``text`` (one more entry: ``len(text)``), so that spans index ``text``; ``None`` for a
    text without such a letter, read as it is."""
    if "\\" not in text:
        return text, None
    letters = accented_letters(text)
    if not letters:
        return text, None
    out, origin, done = [], [], 0
    for start, end, letter in letters:
        out += [text[done:start], letter]
        origin += [*range(done, start), *[start] * len(letter)]
        done = end
    out.append(text[done:])
    origin += range(done, len(text) + 1)
    return "".join(out), origin


def _masked(text: str) -> str:
    """``text`` with LaTeX math and commands, web addresses and domain names blanked (same
    length: spans stay valid)."""
    blank = lambda m: "." * len(m.group())  # noqa: E731
    return _ADDRESS.sub(blank, _MATH.sub(blank, text))


@lru_cache(maxsize=1 << 16)
def _word(surface: str) -> tuple[bool, str, bool, str, bool, bool, bool]:
    """(ends a phrase, lower-cased, strong, singular, a modifier, alone not a topic, hollow:
    a word of idioms or argument) for a word as written; strong: four letters or more, or an
    all-capitals acronym."""
    stop = _stops()
    word = surface.lower()
    single = singular(word)
    breaks = (
        word in stop
        or single in stop
        or len(word) < 2
        or "'" in word
        or "_" in word
        or word[-1] == "-"
        or (len(word) > 4 and word.endswith("ly"))
        or any(c.isdigit() for c in word)
        or word in _CATALOGUES
    )
    return (
        breaks,
        word,
        len(word) >= 4 or surface.isupper(),
        single,
        single in _MODIFIERS,
        single in _NOT_ALONE or word in _NOT_ALONE,
        single in _HOLLOW or word in _HOLLOW,
    )


def candidates(text: str) -> dict[str, list[tuple[int, int]]]:
    """Candidate phrases of ``text`` and the character spans where each occurs: runs of up
    to three words that no stop word (scikit-learn's English list plus the scaffolding of
    abstracts and feed boilerplate), number or punctuation interrupts; the last word
    singular, at least one word of four letters or more (or an all-capitals acronym), no
    generic noun alone ("model"), no modifier ("high", "stellar") alone or last, not only
    words of idioms and argument ("hand", "respect", "notes", "similar":
    :data:`hermes.text.language.FILLER_NOUNS`, :data:`~hermes.text.language.FILLER_ADJECTIVES`)."""
    found: dict[str, list[tuple[int, int]]] = {}
    runs: list[list[tuple]] = []
    text, origin = _read(text)
    masked = _masked(text)
    nounlike: set[str] = set()  # words the text puts where a noun stands, at least once
    for segment in _SEGMENT.finditer(masked):
        run: list[tuple] = []
        runs.append(run)
        words = [(match, _word(match.group())) for match in _WORD.finditer(masked, *segment.span())]
        roles = word_roles.noun_positions([m.group() for m, _ in words], [f[0] for _, f in words])
        for (match, facts), noun in zip(words, roles, strict=True):
            if facts[0]:
                run = []
                runs.append(run)
            else:
                run.append((*match.span(), *facts[1:]))
                if noun:
                    nounlike.add(facts[3])
    # run entries: (start, end, word, strong, singular, modifier, not alone, hollow)
    for run in runs:
        n = len(run)
        for i in range(n):
            start, strong, topical, prefix = run[i][0], False, False, ""
            for j in range(i, i + MAX_WORDS if i + MAX_WORDS < n else n):
                last = run[j]
                strong = strong or last[3]
                topical = topical or not last[7]
                if not (
                    last[5] or (i == j and last[6]) or not strong or not topical or _verbal(i == j, last, nounlike)
                ):
                    phrase = prefix + last[4]
                    # a repeated word ("big live live") is a fragment of a title, no topic
                    if len(phrase) <= 60 and (i == j or _distinct(phrase)):
                        found.setdefault(phrase, []).append((start, last[1]))
                prefix += last[2] + " "
    found = _without_fragments(found)
    if origin is not None:  # spans of the text as written
        return {phrase: [(origin[a], origin[b]) for a, b in spans] for phrase, spans in found.items()}
    return found


def _without_fragments(found: dict[str, list[tuple[int, int]]]) -> dict[str, list[tuple[int, int]]]:
    """``found`` without the single words the text only ever puts after a word of
    :data:`_IDIOM_STARTS`: "hole" of a text that only says "black hole" is a piece of its
    topic, not a topic (a trial's hep-th topics read "hole"). The rule is kept to those
    words: dropping every head that only follows one same word ("space" of "hilbert space")
    left a field's topics without their shared words (math: 17% of items unclustered -> 23%)."""
    # where a two-word idiom ("black hole") ends: a head noun there ends inside it
    idiom_ends = {
        b
        for phrase, spans in found.items()
        if phrase.count(" ") == 1 and phrase.split(" ")[0] in _IDIOM_STARTS
        for _, b in spans
    }
    fragments = {
        phrase for phrase, spans in found.items() if " " not in phrase and all(b in idiom_ends for _, b in spans)
    }
    return {phrase: spans for phrase, spans in found.items() if phrase not in fragments}


def _verbal(alone: bool, last: tuple, nounlike: set[str]) -> bool:
    """Whether a candidate ending in the run entry ``last`` is a verb's or a participle's
    ("motivated", "obey", "masses ranging"): a word alone, or a participle form ending a
    phrase, that the text never puts where a noun stands (:mod:`.word_roles`)."""
    return last[4] not in nounlike and (alone or word_roles.participle_form(last[2]))


def _distinct(phrase: str) -> bool:
    words = phrase.split()
    return len(set(words)) == len(words)


def _phrase_vectors(text, phrases, spans, tokens) -> tuple[list[str], np.ndarray]:
    """Each phrase's direction: the sum of the contextual vectors of the word tokens its
    occurrences cover (a hyphen's token would pull every hyphenated phrase towards the
    text's mean; phrases beyond the model's input length have no tokens and are dropped).
    The caller normalises rows, so a sum is as good as the mean.

    Vectorised as one gather and one ``reduceat``: every (occurrence, token) pair is
    listed phrase by phrase, so each phrase's pairs are one contiguous run. (A Python loop
    over occurrences, and prefix sums over all tokens, cost twice as much.)"""
    token_spans = tokens.spans
    size = len(text)
    wordlike = np.fromiter(
        (a < size and text[a].isalnum() for a in token_spans[:, 0].tolist()), dtype=bool, count=len(token_spans)
    )
    per_phrase = np.fromiter((len(spans[p]) for p in phrases), dtype=np.int64, count=len(phrases))
    bounds = np.array([ab for p in phrases for ab in spans[p]], dtype=np.int64).reshape(-1, 2)
    # tokens i with token_start < b and token_end > a: a contiguous range (spans are sorted)
    lo = np.searchsorted(token_spans[:, 1], bounds[:, 0], side="right")
    hi = np.maximum(np.searchsorted(token_spans[:, 0], bounds[:, 1], side="left"), lo)
    width = hi - lo
    occurrence = np.repeat(np.arange(len(lo)), width)
    token = lo[occurrence] + np.arange(len(occurrence)) - np.repeat(np.cumsum(width) - width, width)
    keep = wordlike[token]
    owner = np.repeat(np.arange(len(phrases)), per_phrase)[occurrence[keep]]
    token = token[keep]
    if not len(token):
        return [], np.zeros((0, tokens.vectors.shape[1]), dtype=np.float32)
    covered, starts = np.unique(owner, return_index=True)
    vectors = np.add.reduceat(tokens.vectors[token], starts, axis=0)
    return [phrases[k] for k in covered.tolist()], vectors


def mmr(doc: np.ndarray, vectors: np.ndarray, k: int, lam: float = DIVERSITY_LAMBDA) -> list[int]:
    """Maximal marginal relevance: indices of ``k`` rows close to ``doc`` and not to each
    other. Rows and ``doc`` are unit vectors."""
    relevance = vectors @ doc
    if not len(relevance):
        return []
    chosen = [int(np.argmax(relevance))]
    redundancy = vectors @ vectors[chosen[0]]
    while len(chosen) < min(k, len(relevance)):
        gain = lam * relevance - (1 - lam) * redundancy
        gain[chosen] = -np.inf
        best = int(np.argmax(gain))
        chosen.append(best)
        np.maximum(redundancy, vectors @ vectors[best], out=redundancy)
    return chosen


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def keyphrases(text: str, vector, tokens, *, k: int = PROPOSALS, embed=None) -> dict[str, float]:
    """The ``k`` best diverse candidates of ``text`` with their cosine to ``vector``."""
    if vector is None or not english(text, _stops()):
        return {}
    spans = candidates(text)
    phrases = list(spans)
    if not phrases:
        return {}
    if tokens is not None and len(tokens.vectors):
        phrases, vectors = _phrase_vectors(text, phrases, spans, tokens)
    else:
        if embed is None:
            return {}
        # No token vectors: embed the most frequent candidates themselves (KeyBERT proper).
        phrases = sorted(phrases, key=lambda p: -len(spans[p]))[:FALLBACK_CANDIDATES]
        vectors = np.asarray(embed(phrases), dtype=np.float32)
    if not phrases:
        return {}
    vectors = _unit(np.asarray(vectors, dtype=np.float32))
    doc = np.asarray(vector, dtype=np.float32)
    doc = doc / (np.linalg.norm(doc) or 1.0)
    relevance = vectors @ doc
    close = np.flatnonzero(relevance >= relevance.max() - MAX_BEHIND)
    chosen = mmr(doc, vectors[close], k)
    return {phrases[close[i]]: round(float(relevance[close[i]]), 4) for i in chosen}


@hookimpl
def hermes_item_tags(item, vector, tokens):
    # Here, not at the top: the ingest text stack (nh3) loads when an item is tagged, not
    # when the plugins are registered (issue 36).
    from ..ingest.text import embedding_text

    text = embedding_text(item.get("title") or "", item.get("summary") or "")
    embed = None if tokens is not None else (lambda phrases: get_embedder().embed(phrases))
    return keyphrases(text, vector, tokens, embed=embed) or None
