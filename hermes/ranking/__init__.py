"""Ranking: the one ranking path (:mod:`.rank`) over the in-memory embedding matrix
(:mod:`.matrix`, :mod:`.matrix_store`), with what the built-in scorers compute from —
interests vectors, BM25, logistic regression, per-key preference statistics — and the
explanations of a ranking (:mod:`.explain`)."""
