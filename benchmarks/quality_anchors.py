"""The anchors of QUALITY.md, implemented here with scikit-learn.

Every system is a factory ``system(persona, seed) -> session`` whose session has
``rank(pool, k) -> list of paper indices`` and ``rate(index, liked)``. Ties break on the
paper index so every run agrees.
"""

from __future__ import annotations

import zlib

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC


def top(scores: np.ndarray, pool: list[int], k: int) -> list[int]:
    pool_arr = np.asarray(pool)
    order = np.lexsort((pool_arr, -np.asarray(scores)[pool_arr]))
    return pool_arr[order[:k]].tolist()


class Corpus:
    """What the anchors share: TF-IDF (arxiv-sanity-lite's settings) and MiniLM vectors."""

    def __init__(self, texts: list[str], vectors: np.ndarray, embed):
        # arxiv-sanity-lite's vectoriser, except min_df (its corpus is much larger).
        self.tfidf = TfidfVectorizer(
            strip_accents="unicode",
            lowercase=True,
            analyzer="word",
            stop_words="english",
            token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b",
            ngram_range=(1, 2),
            norm="l2",
            use_idf=True,
            smooth_idf=True,
            sublinear_tf=True,
            max_df=0.1,
            min_df=2,
        )
        self.X = self.tfidf.fit_transform(texts)
        self.vectors = vectors
        self.embed = embed  # text -> unit vector (the same cached MiniLM)


class Session:
    def __init__(self, corpus: Corpus, persona, seed: int):
        self.c, self.persona, self.seed = corpus, persona, seed
        self.rated: dict[int, bool] = {}

    def rate(self, index: int, liked: bool) -> None:
        self.rated[index] = liked

    def likes(self) -> list[int]:
        return [i for i, liked in self.rated.items() if liked]

    def tfidf_interests(self) -> np.ndarray:
        q = self.c.tfidf.transform([self.persona.interests])
        return (self.c.X @ q.T).toarray().ravel()

    def cosine_interests(self) -> np.ndarray:
        return self.c.vectors @ self.c.embed(self.persona.interests)


class Random(Session):
    def rank(self, pool, k):
        rng = np.random.default_rng([self.seed, len(self.rated), zlib.crc32(self.persona.name.encode())])
        return top(rng.random(len(self.c.vectors)), pool, k)


class TfidfCosine(Session):
    def rank(self, pool, k):
        return top(self.tfidf_interests(), pool, k)


class ArxivSanity(Session):
    """TF-IDF + LinearSVC(C=0.1, balanced): liked items positive, all other items negative."""

    def rank(self, pool, k):
        likes = self.likes()
        if not likes:
            return top(self.tfidf_interests(), pool, k)
        y = np.zeros(self.c.X.shape[0], dtype=int)
        y[likes] = 1
        svm = LinearSVC(C=0.1, class_weight="balanced", max_iter=10000, tol=1e-6)
        svm.fit(self.c.X, y)
        return top(svm.decision_function(self.c.X), pool, k)


class Zotero(Session):
    """zotero-arxiv-daily: the sum of MiniLM cosines to the liked items."""

    def rank(self, pool, k):
        likes = self.likes()
        if not likes:
            return top(self.cosine_interests(), pool, k)
        return top((self.c.vectors @ self.c.vectors[likes].T).sum(axis=1), pool, k)


class ScholarInbox(Session):
    """Logistic regression (C=0.1, balanced) on MiniLM: likes positive, dislikes and 50
    random unrated items negative (weight 0.9)."""

    def rank(self, pool, k):
        likes = self.likes()
        if not likes:
            return top(self.cosine_interests(), pool, k)
        rng = np.random.default_rng([self.seed, len(self.rated), zlib.crc32(self.persona.name.encode())])
        unrated = np.array([i for i in range(len(self.c.vectors)) if i not in self.rated])
        negatives = rng.choice(unrated, size=min(50, len(unrated)), replace=False).tolist()
        idx = list(self.rated) + negatives
        y = [int(self.rated[i]) for i in self.rated] + [0] * len(negatives)
        w = [1.0] * len(self.rated) + [0.9] * len(negatives)
        model = LogisticRegression(C=0.1, class_weight="balanced", max_iter=1000)
        model.fit(self.c.vectors[idx], y, sample_weight=w)
        return top(model.decision_function(self.c.vectors), pool, k)


ANCHORS = {
    "random": Random,
    "tfidf": TfidfCosine,
    "arxiv-sanity": ArxivSanity,
    "zotero": Zotero,
    "scholar-inbox": ScholarInbox,
}
