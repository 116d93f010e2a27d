"""BM25 with the ``bm25s`` package (pure Python and NumPy, no Java), with the ComLQ authors' configuration as the
preset ``comlq-authors``; scoring, tokenization and the order of hits: docs/runners.md."""

from __future__ import annotations

import os
from importlib import metadata

from .. import datasets
from ..errors import UserError
from ..io.outputs import check_run_output
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..options import MAX_HITS, check_float, check_int
from .common import pyserini_topic_order

#: bm25s's scoring methods (``bm25s.BM25(method=...)``).
BM25S_METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")

#: Stop-word lists of bm25s 0.3 (``bm25s.tokenize(stopwords=...)``), by name and two-letter code; ``none`` for none.
STOPWORDS = ("en", "english", "en_plus", "english_plus", "de", "german", "nl", "dutch", "fr", "french", "es",
             "spanish", "pt", "portuguese", "it", "italian", "ru", "russian", "sv", "swedish", "no", "norwegian",
             "zh", "chinese", "tr", "turkish", "ko", "korean", "da", "danish")

#: bm25s's (and scikit-learn's) token pattern: words of two or more word characters.
TOKEN_PATTERN = r"(?u)\b\w\w+\b"

#: Without a preset: bm25s's own defaults (``BM25()`` and ``tokenize()``: lucene, k1 1.5, b 0.75, English stop
#: words, no stemmer) and the suite's usual 1000 hits.
BM25S_DEFAULTS = {"k1": 1.5, "b": 0.75, "method": "lucene", "stemmer": "none", "stopwords": "en", "hits": 1000}

#: Named configurations; explicit options override them.
PRESETS = {"comlq-authors": {"k1": 1.5, "b": 0.75, "method": "lucene", "stemmer": "english", "stopwords": "en",
                             "hits": 100}}


def bm25s_settings(*, preset: str | None = None, k1=None, b=None, method: str | None = None,
                   stemmer: str | None = None, stopwords: str | None = None, hits=None) -> dict:
    """The checked parameters: explicit values, else the preset's, else :data:`BM25S_DEFAULTS`."""
    if preset is not None and preset not in PRESETS:
        raise UserError(f"--preset: unknown preset {preset!r}; expected one of: {', '.join(PRESETS)}")
    base = {**BM25S_DEFAULTS, **(PRESETS[preset] if preset else {})}
    given = {"k1": k1, "b": b, "method": method, "stemmer": stemmer, "stopwords": stopwords, "hits": hits}
    values = {name: base[name] if value is None else value for name, value in given.items()}
    values["k1"] = check_float(values["k1"], "--k1", 0)
    values["b"] = check_float(values["b"], "--b", 0, 1)
    values["hits"] = check_int(values["hits"], "--hits", 1, MAX_HITS)
    if values["method"] not in BM25S_METHODS:
        raise UserError(f"--method: unknown bm25s method {values['method']!r}; expected one of: "
                        f"{', '.join(BM25S_METHODS)}")
    import Stemmer

    stemmer, stopwords, algorithms = values["stemmer"], values["stopwords"], Stemmer.algorithms()
    if not isinstance(stemmer, str) or (stemmer != "none" and stemmer not in algorithms):
        raise UserError(f"--stemmer: unknown stemmer language {stemmer!r}; expected none or one of PyStemmer's: "
                        f"{', '.join(algorithms)}")
    if not isinstance(stopwords, str) or (stopwords != "none" and stopwords not in STOPWORDS):
        raise UserError(f"--stopwords: unknown stop-word list {stopwords!r}; expected none or one of bm25s's: "
                        f"{', '.join(STOPWORDS)}")
    return {"preset": preset, **values}


def _tokenize(texts: list[str], settings: dict, *, return_ids: bool):
    """``bm25s.tokenize`` with the run's stop words and stemmer."""
    import bm25s
    import Stemmer

    stemmer = None if settings["stemmer"] == "none" else Stemmer.Stemmer(settings["stemmer"])
    stopwords = None if settings["stopwords"] == "none" else settings["stopwords"]
    return bm25s.tokenize(texts, lower=True, token_pattern=TOKEN_PATTERN, stopwords=stopwords, stemmer=stemmer,
                          return_ids=return_ids, show_progress=False)


def bm25s_corpus(dataset) -> tuple[list[str], list[str]]:
    """The documents' ids and texts, as the Lucene runner indexes them."""
    ids, texts = [], []
    for doc_id, text in datasets.iter_docs_for_indexing(dataset):
        ids.append(doc_id)
        texts.append(text)
    return ids, texts


def _ranked_hits(model, tokens: list[str], doc_ids: list[str], hits: int) -> list[tuple[str, float]]:
    """``(doc_id, score)`` of the documents containing a query term, in the one ranking of the written scores."""
    import numpy as np

    token_ids = model.get_tokens_ids(tokens)
    if not token_ids:
        return []
    scores = model.get_scores_from_ids(token_ids)
    index = model.scores
    matched = np.unique(np.concatenate([index["indices"][index["indptr"][t]:index["indptr"][t + 1]]
                                        for t in token_ids]))
    if matched.size == 0:
        return []
    if matched.size > hits:
        # A written score (six decimals) is within 5e-7 of the computed one: a document more than 1e-6 below
        # the hits-th computed score cannot reach the top hits once written.
        threshold = np.partition(scores[matched], matched.size - hits)[matched.size - hits] - 1e-6
        matched = matched[scores[matched] >= threshold]
    written = [(float(f"{scores[i]:.6f}"), doc_ids[i]) for i in matched.tolist()]
    written.sort(reverse=True)  # score descending, equal scores by doc id descending
    return [(doc_id, score) for score, doc_id in written[:hits]]


def bm25s_search(dataset_id: str, output: str | os.PathLike, *, k1: float | None = None, b: float | None = None,
                 method: str | None = None, stemmer: str | None = None, stopwords: str | None = None,
                 hits: int | None = None, preset: str | None = None, run_tag: str | None = None,
                 command: str | None = None, force: bool = False) -> RunResult:
    """Rank the documents of ``dataset_id`` with bm25s (indexed in memory) and write a TREC run and its sidecar; a
    parameter left ``None`` takes the preset's value, else :data:`BM25S_DEFAULTS`'."""
    settings = bm25s_settings(preset=preset, k1=k1, b=b, method=method, stemmer=stemmer, stopwords=stopwords,
                              hits=hits)
    tag = run_tag if run_tag is not None else (f"bm25s-{preset}" if preset else "bm25s")
    check_run_output(output, force=force)
    dataset = datasets.load(dataset_id)
    doc_ids, texts = bm25s_corpus(dataset)
    if not doc_ids:
        raise UserError(f"{dataset_id}: the dataset has no documents to index")
    language = datasets.dataset_language(dataset)
    queries = datasets.query_texts(dataset)
    order = pyserini_topic_order(queries)

    import bm25s

    model = bm25s.BM25(k1=settings["k1"], b=settings["b"], method=settings["method"], dtype="float64")
    model.index(_tokenize(texts, settings, return_ids=True), show_progress=False)
    query_tokens = _tokenize([queries[q] for q in order], settings, return_ids=False) if order else []
    empty = 0

    def results():
        nonlocal empty
        for query_id, tokens in zip(order, query_tokens):
            ranked = _ranked_hits(model, tokens, doc_ids, settings["hits"])
            empty += not ranked
            yield query_id, ranked

    parameters = {**settings, "token_pattern": TOKEN_PATTERN, "lowercase": True, "dtype": "float64",
                  "documents": len(doc_ids), "bm25s": metadata.version("bm25s"),
                  "PyStemmer": metadata.version("PyStemmer")}
    system = (f"BM25 (bm25s {settings['method']}) k1={settings['k1']:g} b={settings['b']:g}, "
              f"stemmer {settings['stemmer']}, stop words {settings['stopwords']}"
              + (f", preset {preset}" if preset else ""))
    sidecar = Sidecar(dataset=dataset_id, runner="bm25s", system=system, tag=tag, parameters=parameters,
                      language=language, command=command)
    result = write_run_and_sidecar(output, results(), sidecar, queries=len(order), details={
        "dataset": dataset_id, "language": language, **settings, "documents": len(doc_ids), "queries": len(order),
        "empty_queries": None, "lines": None, "run_tag": tag})
    result.details["empty_queries"] = empty  # counted while the run was written
    return result
