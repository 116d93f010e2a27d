"""Learned sparse retrieval (``search splade``) with a tiny SPLADE-style model, against stock Pyserini.

No trained SPLADE weights can be downloaded here: the model is a randomly initialised one-layer
``BertForMaskedLM`` whose scores mean nothing. What is checked is the plumbing and the arithmetic: the term
weights equal those of Pyserini's own SPLADE encoders (an independent implementation of the formula), every
score equals the dot product of those weights computed here, and stock ``python -m pyserini.search.lucene
--impact`` writes the suite's run byte for byte from the suite's index.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from negplugins.cli import build_parser, main
from negplugins.errors import UserError
from negplugins.evaluation.validation import validate_run
from negplugins.io.sidecars import read_metadata
from negplugins.io.topics import write_topics
from negplugins.runners.common import MANIFEST
from negplugins.runners.model_refs import resolve_model, weights_sha256
from negplugins.runners.sparse import (
    MIN_IDF,
    QUANTIZATION,
    SPLADE_DEFAULTS,
    SparseEncoder,
    encoded_topics,
    quantize,
    splade_index,
    splade_search,
)

pytestmark = pytest.mark.java

DEMO = "negplugins-demo"
_WORDS = ("which what was used except in not country throughout nickel the a of is city capital france paris "
          "query document relevant true false metal and or but").split()
_CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789?.,:'-")


@pytest.fixture(scope="module")
def tiny_splade(tmp_path_factory) -> Path:
    """A randomly initialised 1-layer ``BertForMaskedLM`` with a WordPiece vocabulary of 97 tokens.

    The MLM output bias is set to -2.5 so that each text gets a sparse set of terms (about 30 of the 97), as
    a trained SPLADE model does. The folder name contains ``splade``: stock Pyserini's ``--encoder FOLDER``
    then picks its ``SpladeQueryEncoder``.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-splade")
    # without repeats ("a" is a word and a character): Pyserini's encoders need one token per id
    vocab = list(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS, *_CHARS,
                                *(f"##{c}" for c in _CHARS)]))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=512, initializer_range=0.2)
    model = BertForMaskedLM(config)
    with torch.no_grad():
        model.cls.predictions.bias.fill_(-2.5)
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def demo_run(tiny_splade, tmp_path_factory):
    """The suite's index and run of the demo dataset, with the encoded queries written for stock Pyserini."""
    folder = tmp_path_factory.mktemp("splade-run")
    built = splade_index(DEMO, str(tiny_splade), index=folder / "index", progress=False)
    assert built.built
    info = splade_search(DEMO, folder / "ours.trec", index=folder / "index", encoded_queries=folder / "queries.tsv",
                         run_tag="Anserini", command="test")
    return folder, info


def _stock(stock_commands, *args) -> bytes:
    """Stock ``python -m pyserini.search.lucene ARGS`` (in the module's ``stock_commands`` process): the run's bytes."""
    stock_commands("pyserini.search.lucene", *args)
    return Path(args[args.index("--output") + 1]).read_bytes()


def _run(path):
    hits = {}
    for line in Path(path).read_text().splitlines():
        query_id, _, doc_id, rank, score, _ = line.split()
        hits.setdefault(query_id, []).append((doc_id, float(score)))
    return hits


def test_quantization_is_pyserinis():
    # hand computed: w / 5 * 256; 0.048828125 = 25/512 is exactly 2.5 after scaling, 0.029296875 = 15/512 is 1.5
    # (both exact in float32 and float64), rounded half to even as Python's round in Pyserini
    assert quantize([1.0, 0.048828125, 0.029296875, 0.0, 2.0]).tolist() == [51, 2, 2, 0, 102]
    assert [round(w / 5 * 256) for w in (1.0, 0.048828125, 0.029296875, 0.0, 2.0)] == [51, 2, 2, 0, 102]
    assert quantize([0.123, 1.005], scale=100).tolist() == [12, 100]
    assert QUANTIZATION == 256 / 5


def test_encoded_topics_repeat_each_term_by_its_weight():
    text = encoded_topics(["1", "2", "3"], [{"a": 2, "##b": 1}, {}, {"[CLS]": 3}])
    assert text == "1\ta a ##b\n3\t[CLS] [CLS] [CLS]\n"  # a query without terms has no line


def test_weights_equal_pyserinis_splade_encoders(tiny_splade):
    """Pyserini's ``SpladeDocumentEncoder`` / ``SpladeQueryEncoder`` (its own code, one text at a time) give the
    suite's integer weights (after dropping Pyserini's zero weights)."""
    from pyserini.encode import SpladeDocumentEncoder, SpladeQueryEncoder

    from negplugins import datasets

    dataset = datasets.load(DEMO)
    docs = [text for _, text in datasets.iter_docs_for_indexing(dataset)]
    queries = list(datasets.query_texts(dataset).values())
    encoder = SparseEncoder(resolve_model(str(tiny_splade)))
    ours_docs = encoder.encode(docs, 512, batch_size=7)
    ours_queries = encoder.encode(queries, 256, batch_size=5)
    doc_encoder = SpladeDocumentEncoder(str(tiny_splade), device="cpu")
    query_encoder = SpladeQueryEncoder(str(tiny_splade), device="cpu")
    theirs_docs = [{t: w for t, w in doc_encoder.encode([text])[0].items() if w > 0} for text in docs]
    theirs_queries = [{t: w for t, w in query_encoder.encode(text).items() if w > 0} for text in queries]
    assert ours_docs == theirs_docs and ours_queries == theirs_queries
    assert 10 < sum(map(len, ours_docs)) / len(docs) < 60  # sparse: a fraction of the 97 terms per document


def test_weights_do_not_depend_on_the_batches(tiny_splade):
    """The encoding pipeline's token-budget batches give each text the weights it gets alone (float noise aside)."""
    import numpy as np

    from negplugins import datasets

    docs = [text for _, text in datasets.iter_docs_for_indexing(datasets.load(DEMO))]
    encoder = SparseEncoder(resolve_model(str(tiny_splade)))
    batched = encoder.weights(docs, 64, batch_size=3)  # 192 tokens per batch: several batches
    alone = [encoder.weights([doc], 64, batch_size=1)[0] for doc in docs]
    assert len(batched) == len(docs) and batched[0].shape == (encoder.vocab_size,)
    np.testing.assert_allclose(np.stack(batched), np.stack(alone), atol=1e-5)


def test_stock_pyserini_gives_the_same_run(demo_run, tiny_splade, tmp_path, stock_commands):
    folder, info = demo_run
    ours = (folder / "ours.trec").read_bytes()
    assert info["lines"] == len(ours.splitlines()) > 21
    # the encoded queries, counted back into weights by Pyserini's --impact without an encoder
    stock = _stock(stock_commands, "--index", folder / "index", "--topics", folder / "queries.tsv", "--impact",
                   "--min-idf", MIN_IDF, "--output", tmp_path / "stock.trec")
    assert stock == ours
    # Pyserini's own SPLADE query encoder on the plain topics gives the same query weights, hence the same run
    # (here with 5 hits, and the suite with other batches and threads)
    splade_search(DEMO, tmp_path / "ours5.trec", index=folder / "index", hits=5, batch_size=3, threads=2,
                  run_tag="Anserini")
    topics, _ = write_topics(DEMO, tmp_path / "topics.tsv")
    stock = _stock(stock_commands, "--index", folder / "index", "--topics", topics, "--impact", "--encoder", tiny_splade,
                   "--min-idf", MIN_IDF, "--hits", 5, "--output", tmp_path / "stock-encoder.trec")
    assert stock == (tmp_path / "ours5.trec").read_bytes()
    assert len(stock.splitlines()) == 21 * 5


def test_scores_are_the_dot_products_of_the_weights(demo_run, tiny_splade):
    """Every document sharing a term with the query is returned, scored sum(query weight x document weight)."""
    from negplugins import datasets

    folder, _ = demo_run
    dataset = datasets.load(DEMO)
    encoder = SparseEncoder(resolve_model(str(tiny_splade)))
    doc_ids, texts = zip(*datasets.iter_docs_for_indexing(dataset))
    docs = dict(zip(doc_ids, encoder.encode(list(texts), 512, batch_size=16)))
    queries = datasets.query_texts(dataset)
    run = _run(folder / "ours.trec")
    assert set(run) == set(queries)
    for query_id, text in queries.items():
        vector = encoder.encode([text], 256, batch_size=1)[0]
        expected = {d: sum(w * weights.get(t, 0) for t, w in vector.items()) for d, weights in docs.items()}
        expected = {d: s for d, s in expected.items() if s > 0}
        got = dict(run[query_id])
        assert got == pytest.approx(expected, abs=0)  # integers, exact
        scores = [score for _, score in run[query_id]]
        assert scores == sorted(scores, reverse=True)
    # Pyserini's default --min-idf 0 would drop the terms found in every document: here that changes the scores
    every = set.intersection(*(set(v) for v in docs.values()))
    assert every


def test_manifest_reuse_sidecar_validation_and_determinism(demo_run, tiny_splade, tmp_path):
    folder, info = demo_run
    manifest = json.loads((folder / "index" / MANIFEST).read_text())
    ref = resolve_model(str(tiny_splade))
    assert {k: manifest[k] for k in ("kind", "corpus", "model_sha256", "quantization", "max_length", "documents",
                                     "min_idf")} == {
        "kind": "impact", "corpus": DEMO, "model_sha256": weights_sha256(tiny_splade), "quantization": 51.2,
        "max_length": 512, "documents": 36, "min_idf": -1}
    assert manifest["model"] == ref.metadata() and manifest["pyserini_search"] == ["--impact", "--min-idf", "-1"]
    again = splade_index(DEMO, str(tiny_splade), index=folder / "index")
    assert not again.built and again.manifest == manifest  # reused, nothing encoded
    splade_search(DEMO, tmp_path / "again.trec", index=folder / "index", run_tag="Anserini")
    assert (tmp_path / "again.trec").read_bytes() == (folder / "ours.trec").read_bytes()  # deterministic

    meta = read_metadata(folder / "ours.trec")
    assert meta["runner"] == "splade" and meta["tag"] == "Anserini" and meta["command"] == "test"
    assert meta["model"] == ref.metadata()  # the one model record of every runner
    assert meta["parameters"]["quantization"] == 51.2 and meta["parameters"]["min_idf"] == -1
    assert meta["parameters"]["query_max_length"] == 256 and meta["parameters"]["max_length"] == 512
    assert meta["index"]["manifest"] == manifest
    report = validate_run(DEMO, folder / "ours.trec")
    assert report.valid and not report.missing_queries, report.summary()


def test_an_index_of_other_tokenizer_files_is_built_again(demo_run, tiny_splade, tmp_path):
    """The same weights with lowercasing switched off in the tokenizer: the index of the lowercased text is stale."""
    import shutil

    model = shutil.copytree(tiny_splade, tmp_path / "splade-copy")
    index = tmp_path / "index"
    assert splade_index(DEMO, str(model), index=index, progress=False).built
    config = json.loads((model / "tokenizer_config.json").read_text())
    (model / "tokenizer_config.json").write_text(json.dumps({**config, "do_lower_case": False}))
    with pytest.raises(UserError, match=r"index: the index was encoded with other files of model .* than its folder "
                                        r"holds now"):
        splade_search(DEMO, tmp_path / "run.trec", model=str(model), index=index)
    again = splade_index(DEMO, str(model), index=index, progress=False)
    assert again.built and again.manifest["model_sha256"] == weights_sha256(model)
    assert again.manifest["model_files_sha256"] == resolve_model(str(model)).files_sha256


def test_default_index_path_and_the_command_line(tiny_splade, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["search", "splade", DEMO, "--model", str(tiny_splade), "--hits", "3", "--no-progress",
                 "--output", "run.trec"])
    assert code == 0
    index = tmp_path / "indexes" / "splade" / DEMO / tiny_splade.name
    assert json.loads((index / MANIFEST).read_text())["kind"] == "impact"
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert len(lines) == 21 * 3 and lines[0].endswith(f" splade-{tiny_splade.name}")
    assert "wrote 63 lines for 21 queries" in capsys.readouterr().out
    # the command's defaults are the module's
    args = build_parser().parse_args(["search", "splade", DEMO, "-o", "x.trec"])
    assert (args.batch_size, args.hits, args.threads) == (SPLADE_DEFAULTS["batch_size"], SPLADE_DEFAULTS["hits"],
                                                          SPLADE_DEFAULTS["threads"])
    assert args.quantization is None and args.max_length is None and args.device == "cpu"


def test_bad_input(demo_run, tiny_splade, tiny_monot5, tiny_cross_encoder, tmp_path):
    folder, _ = demo_run
    out = tmp_path / "out.trec"
    with pytest.raises(UserError, match="give the --model to encode with"):
        splade_search(DEMO, out)
    with pytest.raises(UserError, match="--quantization: expected a scale above 0"):
        splade_search(DEMO, out, model=str(tiny_splade), quantization=0)
    for option in ("max_length", "query_max_length"):  # below the tokenizer's special tokens: never truncated
        flag = "--" + option.replace("_", "-")
        with pytest.raises(UserError, match=rf"^{flag} 2: model .* takes at least 3 tokens per text \(2 special tokens "
                                            rf"and one of text\)$"):
            splade_search(DEMO, out, model=str(tiny_splade), **{option: 2})
    assert not out.exists()
    with pytest.raises(UserError, match=r"--encoded-queries .*q.json: expected a file name ending in .tsv or .txt"):
        splade_search(DEMO, out, index=folder / "index", encoded_queries=tmp_path / "q.json")
    with pytest.raises(UserError, match=r"no-index: impact index folder not found"):
        splade_search(DEMO, out, index=tmp_path / "no-index")
    (tmp_path / "faiss").mkdir()
    (tmp_path / "faiss" / MANIFEST).write_text(json.dumps({"kind": "faiss"}))
    with pytest.raises(UserError, match="is a faiss index built by negplugins, not a SPLADE impact index"):
        splade_search(DEMO, out, index=tmp_path / "faiss")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match=r"other: is not a Lucene index \(no segments_N file\)"):
        splade_search(DEMO, out, index=tmp_path / "other", model=str(tiny_splade))
    with pytest.raises(UserError, match="not an index built by negplugins"):
        splade_index(DEMO, str(tiny_splade), index=tmp_path / "other")
    with pytest.raises(UserError, match=r"the index was encoded with model '.*tiny-splade.*', not '.*cross"):
        splade_search(DEMO, out, index=folder / "index", model=str(tiny_cross_encoder))
    with pytest.raises(UserError, match="quantized with scale 51.2, not 100"):
        splade_search(DEMO, out, index=folder / "index", quantization=100)
    # a T5 is no masked language model; a BERT classifier has no MLM head (transformers would make a random one)
    with pytest.raises(UserError, match="cannot be loaded as a SPLADE \\(masked language\\) model"):
        SparseEncoder(resolve_model(str(tiny_monot5)))
    with pytest.raises(UserError, match=r"cannot be loaded as a SPLADE .*lacks \d+ weight\(s\) of one \(cls\."):
        SparseEncoder(resolve_model(str(tiny_cross_encoder)))
    with pytest.raises(UserError, match="--device: 'gpu7' is not a torch device"):
        SparseEncoder(resolve_model(str(tiny_splade)), device="gpu7")
    assert not out.exists()


def test_the_api_leaves_hugging_face_variables_alone(demo_run, tmp_path, monkeypatch):
    folder, _ = demo_run
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.delenv(name, raising=False)
    splade_search(DEMO, tmp_path / "run.trec", index=folder / "index", hits=2)
    assert not {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"} & set(os.environ)
