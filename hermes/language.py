"""Which texts read as English.

The default model (all-MiniLM-L6-v2) was trained on English and the keyphrase tagger's
candidate rules are English: on a text in another language the tagger would make topics
of function words, and a low similarity to an English interests text is no evidence that
the item is off the persona's topics — only that the model cannot read it. The tagger
leaves such texts untagged; the explanation and bootstrap say or act on what the figure
cannot show (:func:`hermes.embed.english_only` tells whether the model in use reads
English only).
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

#: a word: letters, inner apostrophes and hyphens (numbers and underscores are not words)
WORD = re.compile(r"[^\W\d_][\w'\-]*[^\W_]|[^\W\d_]", re.UNICODE)

# Function words of the other languages hermes reads dates in (es, pt, fr, de, it, nl) that
# are not English words: a text using more of them than of English stop words is not English.
_FOREIGN = frozenset("""
    de la que el en los del las por con una su para es al lo como más pero sus se um uma os
    das dos não na ao em à é com mais foi ele ela le les des du et est une pour dans qui sur
    au avec sont cette il elle der und ist nicht ein eine dem mit sich von zu auf für im auch
    di che è per della sono gli nel alla het een van niet zijn voor op met dat ook naar o e
    da seu sua pelo pela também mas ou y el
""".split())
#: English stop words that are also common function words of those languages (Portuguese
#: "no" / "do" / "a", Spanish "no"): a vote for neither side. "Chuvas fortes causam enchentes
#: no Rio Grande do Sul. A Defesa Civil alertou para …" counted three English words to two.
_SHARED = frozenset({"a", "no", "do", "as"})
#: below this many words the language is not judged (a title alone)
LANGUAGE_MIN_WORDS = 12
#: the language is judged on a text's beginning: some 150 words settle the proportions, and
#: a post's full text (up to 4,000 characters) would cost every explained item 0.2 ms
JUDGED_CHARS = 1000


# Kept per text: every feed page explains the same top items again (20 × 85 µs a page).
@lru_cache(maxsize=4096)
def english(text: str, stop_words: frozenset[str] | None = None) -> bool:
    """Whether ``text`` reads as English: more English stop words (leaving out the words
    both lists hold, such as "de") than function words of the other languages feeds come
    in (measured on the bundled feeds: English texts 20–55 % English stop words, Spanish
    and Portuguese news 3–16 %). ``stop_words`` replaces scikit-learn's English list (the
    tagger passes its longer one). A text too short to judge counts as English; a long one
    is judged on its first :data:`JUDGED_CHARS` characters."""
    words = [w.lower() for w in WORD.findall(text[:JUDGED_CHARS])]
    if len(words) < LANGUAGE_MIN_WORDS:
        return True
    stop = english_stop_words() if stop_words is None else stop_words
    foreign = sum(w in _FOREIGN for w in words)
    return sum(w in stop and w not in _FOREIGN and w not in _SHARED for w in words) > foreign


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop-word list, read from its own module file without
    importing the scikit-learn package: the import costs 1–2.5 s (scipy, joblib …), which
    was the largest fixed cost of tagging a fresh ingest run (benchmarks/results/onnx.md).
    The module holds one frozenset literal; the ordinary import is the fallback."""
    spec = importlib.util.find_spec("sklearn")  # a top-level package: found, not imported
    source = Path(next(iter(spec.submodule_search_locations or []), "")) if spec else None
    path = source / "feature_extraction" / "_stop_words.py" if source else None
    if path is not None and path.is_file():
        module_spec = importlib.util.spec_from_file_location("_hermes_sklearn_stop_words", path)
        module = importlib.util.module_from_spec(module_spec)
        try:
            module_spec.loader.exec_module(module)
            return frozenset(module.ENGLISH_STOP_WORDS)
        except Exception:  # noqa: BLE001 — a changed layout: take the ordinary import
            pass
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)
