"""``negplugins search bm25s``: BM25 with the bm25s package, the ComLQ authors' preset, one ranking, sidecar, CLI."""

from __future__ import annotations

import gzip
import inspect
import json
import math
from pathlib import Path

import ir_datasets
import pytest
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import BaseDocs, BaseQueries, GenericDoc, GenericQuery

from negplugins import datasets
from negplugins.cli import build_parser, main
from negplugins.errors import UserError
from negplugins.evaluation.validation import validate_run
from negplugins.io.sidecars import read_metadata
from negplugins.runners.bm25s import (
    BM25S_DEFAULTS,
    BM25S_METHODS,
    PRESETS,
    STOPWORDS,
    TOKEN_PATTERN,
    bm25s_corpus,
    bm25s_search,
    bm25s_settings,
)
from negplugins.runners.common import pyserini_topic_order

DEMO = "negplugins-demo"


class _Docs(BaseDocs):
    def __init__(self, docs):
        self._docs = docs

    def docs_iter(self):
        return iter(self._docs)

    def docs_cls(self):
        return GenericDoc

    def docs_lang(self):
        return "en"


class _Queries(BaseQueries):
    def __init__(self, queries):
        self._queries = queries

    def queries_iter(self):
        return iter(self._queries)

    def queries_cls(self):
        return GenericQuery


def _register(name, docs, queries):
    if name not in ir_datasets.registry._registered:
        ir_datasets.registry.register(name, Dataset(_Docs([GenericDoc(i, t) for i, t in docs]),
                                                    _Queries([GenericQuery(i, t) for i, t in queries])))
    return name


def _read(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.split() for line in f]


# Four documents, no stemming, no stop words: each token below is one term (tokens are words of 2+ characters).
HAND_DOCS = [("d1", "apple banana apple"), ("d2", "banana cherry"), ("d3", "cherry cherry cherry date"),
             ("d4", "date")]
HAND_QUERIES = [("1", "apple cherry"), ("2", "banana date"), ("3", "zebra")]


def _hand_bm25(query, k1, b):
    """BM25 by hand, the Lucene variant (Kamphuis et al., ECIR 2020) with the classic (k1 + 1) factor.

    idf = ln(1 + (N - df + 0.5) / (df + 0.5)); tf part = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)).
    """
    docs = {doc_id: text.split() for doc_id, text in HAND_DOCS}
    n = len(docs)
    avgdl = sum(len(tokens) for tokens in docs.values()) / n  # 10 / 4 = 2.5
    scores = {}
    for doc_id, tokens in docs.items():
        total = 0.0
        for term in query.split():
            df = sum(term in other for other in docs.values())
            tf = tokens.count(term)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(tokens) / avgdl))
        if total:
            scores[doc_id] = total
    return scores


@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.9, 0.4), (1.5, 0.0)])
def test_scores_match_a_hand_computed_bm25(tmp_path, k1, b):
    name = _register("negplugins-test/bm25s-hand", HAND_DOCS, HAND_QUERIES)
    run = tmp_path / "hand.trec"
    info = bm25s_search(name, run, k1=k1, b=b, stemmer="none", stopwords="none", hits=10)
    assert (info["documents"], info["queries"], info["empty_queries"]) == (4, 3, 1)
    lines = _read(run)
    for query_id, query in HAND_QUERIES:
        expected = _hand_bm25(query, k1, b)
        got = {line[2]: float(line[4]) for line in lines if line[0] == query_id}
        assert set(got) == set(expected)  # only documents with a query term; query 3 matches none and gets no line
        # Lucene 8+ and bm25s's "lucene" method leave out the constant (k1 + 1) of the numerator (same ranking)
        for doc_id, score in expected.items():
            assert got[doc_id] == pytest.approx(score / (k1 + 1), abs=1e-5)
        ranked = [line[2] for line in lines if line[0] == query_id]
        assert ranked == sorted(expected, key=lambda d: (round(expected[d], 9), d), reverse=True)
    # a worked value: query 1 on d1 at k1 1.2, b 0.75: idf(apple) = ln(1 + 3.5/1.5) = 1.2039728,
    # tf part 2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2.5)) = 2 / 3.38 = 0.5917160, product 0.7124099 (no cherry in d1)
    if (k1, b) == (1.2, 0.75):
        assert next(float(line[4]) for line in lines if line[:3] == ["1", "Q0", "d1"]) == 0.712410
    assert validate_run(name, run).valid


def test_ties_are_ordered_by_doc_id_descending_whatever_bm25s_returns(tmp_path):
    name = _register("negplugins-test/bm25s-ties", [(doc_id, "the same words in every document")
                                                     for doc_id in ("b", "c", "a", "10", "9")], [("1", "same words")])
    run = tmp_path / "ties.trec"
    bm25s_search(name, run, hits=5)
    lines = _read(run)
    # the suite's one ranking (negplugins.measures.ranking): equal scores by doc id descending, by code point
    assert [line[2] for line in lines] == ["c", "b", "a", "9", "10"]
    assert len({line[4] for line in lines}) == 1
    # cut at the ties: the largest ids are kept
    bm25s_search(name, run, hits=2, force=True)
    assert [line[2] for line in _read(run)] == ["c", "b"]


def test_preset_is_the_authors_llama_index_configuration():
    # llama-index-retrievers-bm25 BM25Retriever: bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer("english")),
    # bm25s.BM25() with its defaults; the authors' evaluate_bm25.py: similarity_top_k=100
    assert PRESETS["comlq-authors"] == {"k1": 1.5, "b": 0.75, "method": "lucene", "stemmer": "english",
                                        "stopwords": "en", "hits": 100}
    assert bm25s_settings(preset="comlq-authors") == {"preset": "comlq-authors", **PRESETS["comlq-authors"]}
    # explicit options override the preset
    assert bm25s_settings(preset="comlq-authors", k1=0.9, b=0.4, stemmer="none") == {
        "preset": "comlq-authors", "k1": 0.9, "b": 0.4, "method": "lucene", "stemmer": "none", "stopwords": "en",
        "hits": 100}
    assert bm25s_settings() == {"preset": None, **BM25S_DEFAULTS}


def test_defaults_are_bm25s_own():
    import bm25s

    model = inspect.signature(bm25s.BM25).parameters
    tokenize = inspect.signature(bm25s.tokenize).parameters
    assert (model["k1"].default, model["b"].default, model["method"].default) == (
        BM25S_DEFAULTS["k1"], BM25S_DEFAULTS["b"], BM25S_DEFAULTS["method"])
    assert tokenize["token_pattern"].default == TOKEN_PATTERN and tokenize["stemmer"].default is None
    assert tokenize["stopwords"].default == "english"
    english = bm25s.tokenize(["the cat is on the mat"], stopwords="english", return_ids=False, show_progress=False)
    assert english == bm25s.tokenize(["the cat is on the mat"], stopwords=BM25S_DEFAULTS["stopwords"],
                                     return_ids=False, show_progress=False) == [["cat", "mat"]]


def test_every_listed_method_and_stop_word_list_is_accepted_by_bm25s(tmp_path):
    import bm25s

    for name in STOPWORDS:
        bm25s.tokenize([], stopwords=name, show_progress=False)  # an unknown name raises ValueError
    with pytest.raises(ValueError):
        bm25s.tokenize([], stopwords="klingon", show_progress=False)
    tokens = bm25s.tokenize(["one two", "two three"], stopwords=None, show_progress=False)
    for method in BM25S_METHODS:
        model = bm25s.BM25(method=method)
        model.index(tokens, show_progress=False)
        assert model.get_scores(["two"]).shape == (2,)
    # the command line repeats the choices (building the parser imports no runner): they must agree
    search = next(a for a in build_parser()._actions if getattr(a, "choices", None) and "search" in a.choices)
    runner = next(a for a in search.choices["search"]._actions
                  if getattr(a, "choices", None) and "bm25s" in a.choices).choices["bm25s"]
    choices = {a.dest: a.choices for a in runner._actions if a.choices}
    assert tuple(choices["method"]) == BM25S_METHODS and tuple(choices["preset"]) == tuple(PRESETS)


@pytest.mark.parametrize("kwargs, message", [
    ({"preset": "comlq"}, "--preset: unknown preset 'comlq'; expected one of: comlq-authors"),
    ({"stemmer": "klingon"}, "--stemmer: unknown stemmer language 'klingon'; expected none or one of PyStemmer's: "),
    ({"stopwords": "english-ish"}, "--stopwords: unknown stop-word list 'english-ish'; expected none or one of "),
    ({"method": "bm26"}, "--method: unknown bm25s method 'bm26'; expected one of: robertson, lucene, atire, bm25l, "
                         "bm25+"),
    ({"k1": -0.1}, "--k1: expected a finite number >= 0, got -0.1"),
    ({"k1": float("nan")}, "--k1: expected a finite number >= 0, got nan"),
    ({"b": 1.5}, "--b: expected a finite number from 0 to 1, got 1.5"),
    ({"hits": 0}, "--hits: expected an integer from 1 to 100000, got 0"),
    ({"hits": 10.0}, "--hits: expected an integer from 1 to 100000, got 10.0"),
])
def test_bad_parameters_raise_one_line_before_any_work(tmp_path, kwargs, message):
    with pytest.raises(UserError) as caught:
        bm25s_search(DEMO, tmp_path / "out.trec", **kwargs)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (["--preset", "nope"], "negplugins: error: search bm25s: argument --preset: invalid choice: 'nope' "
                           "(choose from 'comlq-authors')"),
    (["--method", "bm26"], "negplugins: error: search bm25s: argument --method: invalid choice: 'bm26'"),
    (["--stemmer", "klingon"], "negplugins: error: --stemmer: unknown stemmer language 'klingon'"),
    (["--stopwords", "xx"], "negplugins: error: --stopwords: unknown stop-word list 'xx'"),
    (["--k1", "inf"], "negplugins: error: search bm25s: argument --k1: expected a finite number >= 0, got 'inf'"),
    (["--b", "-1"], "negplugins: error: search bm25s: argument --b: expected a finite number from 0 to 1, got '-1'"),
    (["--hits", "0"], "negplugins: error: search bm25s: argument --hits: expected an integer from 1 to 100000, "
                      "got '0'"),
    (["--run-tag", "two words"], "negplugins: error: run tag 'two words' must be one word without white space"),
])
def test_command_line_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    try:
        status = main(["search", "bm25s", DEMO, "--output", "out.trec", *argv])
    except SystemExit as exit:  # argparse's own checks (choices, option types)
        status = exit.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not Path("out.trec").exists()


def test_command_writes_a_valid_deterministic_run_with_its_sidecar(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("a", "b"):
        assert main(["search", "bm25s", DEMO, "--preset", "comlq-authors", "--output", f"{name}.trec.gz"]) == 0
    out = capsys.readouterr().out
    assert "wrote 105 lines for 21 queries to a.trec.gz (bm25s lucene k1=1.5 b=0.75, stemmer english, " \
           "stop words en, 36 documents)" in out
    assert Path("a.trec.gz").read_bytes() == Path("b.trec.gz").read_bytes()
    report = validate_run(DEMO, "a.trec.gz")
    assert report.valid, report.summary()
    lines = _read("a.trec.gz")
    assert {line[5] for line in lines} == {"bm25s-comlq-authors"}
    for query_id in {line[0] for line in lines}:  # ranks follow the written scores, ties by doc id descending
        ranked = [(float(line[4]), line[2]) for line in lines if line[0] == query_id]
        assert ranked == sorted(ranked, reverse=True)
        assert [int(line[3]) for line in lines if line[0] == query_id] == list(range(1, len(ranked) + 1))
    meta = read_metadata("a.trec.gz")
    assert (meta["runner"], meta["dataset"], meta["tag"], meta["index"], meta["language"]) == (
        "bm25s", DEMO, "bm25s-comlq-authors", None, "en")
    import bm25s

    assert meta["parameters"] == {"preset": "comlq-authors", "k1": 1.5, "b": 0.75, "method": "lucene",
                                  "stemmer": "english", "stopwords": "en", "hits": 100, "token_pattern": TOKEN_PATTERN,
                                  "lowercase": True, "dtype": "float64", "documents": 36,
                                  "bm25s": bm25s.__version__, "PyStemmer": meta["parameters"]["PyStemmer"]}
    assert meta["parameters"]["PyStemmer"] and meta["command"]


def test_output_safety(tmp_path):
    mine = tmp_path / "mine.trec"
    mine.write_text("q01 Q0 d01 1 1.0 x\n")
    with pytest.raises(UserError, match="was not written by negplugins"):
        bm25s_search(DEMO, mine)
    assert mine.read_text() == "q01 Q0 d01 1 1.0 x\n"
    bm25s_search(DEMO, mine, force=True, hits=3)
    assert read_metadata(mine)["runner"] == "bm25s" and max(int(line[3]) for line in _read(mine)) == 3


@pytest.mark.java
def test_reads_the_same_documents_and_queries_as_the_lucene_runner(tmp_path):
    """The Lucene index stores each document as indexed (``-storeRaw``); bm25s reads the same ids and texts."""
    from negplugins._compat import jvm
    from negplugins.runners.bm25 import bm25_search
    from negplugins.runners.lucene_index import lucene_index

    index, _ = lucene_index(DEMO, tmp_path / "idx")
    jvm.configure()
    from pyserini.search.lucene import LuceneSearcher

    searcher = LuceneSearcher(str(index))
    stored = {}
    for number in range(searcher.num_docs):
        raw = json.loads(searcher.doc(number).raw())
        stored[raw["id"]] = raw["contents"]
    ids, texts = bm25s_corpus(datasets.load(DEMO))
    assert len(stored) == 36 and dict(zip(ids, texts)) == stored
    bm25_search(DEMO, tmp_path / "lucene.trec", index=index)
    bm25s_search(DEMO, tmp_path / "bm25s.trec")
    order = list(dict.fromkeys(line[0] for line in _read(tmp_path / "lucene.trec")))
    assert list(dict.fromkeys(line[0] for line in _read(tmp_path / "bm25s.trec"))) == order
    assert order == pyserini_topic_order(datasets.query_texts(datasets.load(DEMO)))


@pytest.mark.realdata
def test_comlq_authors_preset_on_the_real_release(comlq_mirror, tmp_path):
    """The authors' configuration over ComLQ: nDCG@10 0.690653 (docs/reproductions.md, "ComLQ: the authors' BM25").

    Corroborated independently: the llama-index BM25Retriever calls (bm25s.tokenize / BM25().index / retrieve(k=100),
    float32) over the release's files, scored with pytrec_eval as the authors' evaluate.py, give 0.690653135559058
    with bm25s 0.3.16 and PyStemmer 3.1.0; the paper's Table 3 reports 0.505.
    """
    from negplugins.evaluation.scoring import evaluate

    run = tmp_path / "bm25s.trec.gz"
    info = bm25s_search("comlq", run, preset="comlq-authors")
    assert (info["documents"], info["queries"], info["lines"], info["empty_queries"]) == (11251, 2909, 290900, 0)
    result = evaluate("comlq", run, measures=["nDCG@10", "R@100"])
    assert result.overall["nDCG@10"] == pytest.approx(0.690653, abs=5e-7)
    assert round(result.overall["R@100"], 4) == 0.9756
