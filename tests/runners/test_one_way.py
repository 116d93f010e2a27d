"""One way to do each thing across the runners: one model resolver and weights fingerprint, one document-text
policy, and Python API calls that leave ``os.environ`` as they found it."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from typing import NamedTuple

import dataset_fixtures as fx
import numpy as np
import pytest
from ir_datasets.formats import GenericDoc

from negplugins import datasets
from negplugins.io.sidecars import read_metadata
from negplugins.runners import rerank as rerank_module
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.model_refs import resolve_model
from negplugins.runners.rerank import rerank

DEMO = "negplugins-demo"
_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"the a of is which what city capital not query".split(),
          *"abcdefghijklmnopqrstuvwxyz0123456789?.,'-"]


@pytest.fixture(scope="module")
def sharded_model(tmp_path_factory):
    """A randomly initialised 2-layer BERT sequence classifier saved in six safetensors shards."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("sharded-model")
    (folder / "vocab.txt").write_text("\n".join(_VOCAB) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(_VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder, max_shard_size="20KB")
    assert len(list(folder.glob("*.safetensors"))) > 1 and not (folder / "model.safetensors").exists()
    return folder


def _documented_fingerprint(folder) -> str:
    """The fingerprint of negplugins/runners/encoders.py's documentation, computed here with hashlib alone:
    SHA-256 of the ``"<file> <sha256 of the file>\\n"`` lines of the weight files, sorted by name."""
    lines = "".join(f"{p.name} {hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                    for p in sorted(folder.glob("*.safetensors"), key=lambda p: p.name))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _documented_files_fingerprint(folder) -> str:
    """The whole model's fingerprint (model_refs.model_files_sha256's documentation), with hashlib alone: the weights'
    line, then a line per other file (tokenizer, configuration)."""
    others = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".safetensors")
    lines = f"weights {_documented_fingerprint(folder)}\n" + "".join(
        f"{p.name} {hashlib.sha256(p.read_bytes()).hexdigest()}\n" for p in others)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def test_every_runner_records_one_fingerprint_for_a_sharded_model(sharded_model, tmp_path, monkeypatch):
    """Dense, rerank, BEIR dense and BEIR rerank resolve a model one way and record the same ``model`` field
    (the BEIR runners recorded ``sha256: null`` for a sharded model before they shared the resolver)."""
    pytest.importorskip("beir")
    from negplugins.runners.beir import beir_dense_search, beir_rerank

    monkeypatch.chdir(tmp_path)  # the dense index goes under ./indexes
    model = str(sharded_model)
    dense_search(DEMO, "dense.trec", model=model, hits=5, progress=False)
    rerank(DEMO, "rerank.trec", model=model, run="dense.trec", top_k=3)
    beir_dense_search(DEMO, "beir-dense.trec", model=model, hits=5, device="cpu")
    beir_rerank(DEMO, "dense.trec", "beir-rerank.trec", model=model, top_k=3, device="cpu")

    expected = {"id": model, "revision": None, "sha256": _documented_fingerprint(sharded_model),
                "files_sha256": _documented_files_fingerprint(sharded_model), "path": str(sharded_model.resolve())}
    records = {run: read_metadata(f"{run}.trec")["model"] for run in ("dense", "rerank", "beir-dense", "beir-rerank")}
    assert records == dict.fromkeys(records, expected)
    assert read_metadata("dense.trec")["index"]["manifest"]["model_sha256"] == expected["sha256"]
    assert resolve_model(model).metadata() == expected


def test_the_default_model_is_one_record_for_every_runner():
    ref = resolve_model(None)
    record = ref.metadata()
    assert set(record) == {"id", "revision", "sha256", "files_sha256", "path", "source"}
    assert record["id"] == "all-MiniLM-L6-v2"
    # a single weight file: its own SHA-256
    assert record["sha256"] == hashlib.sha256((ref.path / "model.safetensors").read_bytes()).hexdigest()
    for name in (None, "default", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", str(ref.path)):
        assert resolve_model(name).metadata() == record and resolve_model(name).path == ref.path


def test_runner_apis_leave_the_environment_alone(tmp_path, monkeypatch, tiny_cross_encoder):
    """The runners load models with ``local_files_only=True`` instead of setting ``HF_HUB_OFFLINE`` and
    friends for the whole process (the test's own set-up sets them; they are removed here, so that a runner
    setting them again shows). The Lucene runner is left out: it sets up Java (JAVA_HOME) on purpose."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    before = dict(os.environ)
    resolve_model(None)
    dense_search(DEMO, "dense.trec", hits=5, progress=False)  # packaged MiniLM
    rerank(DEMO, "bi.trec", run="dense.trec", top_k=3)  # bi-encoder
    rerank(DEMO, "ce.trec", model=str(tiny_cross_encoder), run="dense.trec", top_k=3)  # cross-encoder
    written = ["dense.trec", "bi.trec", "ce.trec"]
    if importlib.util.find_spec("beir") is not None:
        from negplugins.runners.beir import beir_dense_search, beir_rerank

        beir_dense_search(DEMO, "beir.trec", hits=5, device="cpu")
        beir_rerank(DEMO, "dense.trec", "beir-ce.trec", model=str(tiny_cross_encoder), top_k=3, device="cpu")
        written += ["beir.trec", "beir-ce.trec"]
    assert dict(os.environ) == before
    assert all((tmp_path / name).is_file() for name in written)


# -- one document-text policy -------------------------------------------------------------------------------------

class _TitledDoc(NamedTuple):
    """A document whose ``default_text()`` leaves its title out (as some ir_datasets document types do)."""

    doc_id: str
    title: str
    text: str

    def default_text(self):
        return self.text


def _beir_join(title, text):
    """What BEIR's SentenceBERT and Rerank use for a corpus entry (beir.retrieval.models.util)."""
    return (title + " " + text).strip()


def test_document_text_and_fields():
    from ir_datasets_ext.datasets.boolquestions import BoolQuestionsDoc

    plain = GenericDoc("d1", "no  title,\n\ttwo lines ")
    assert datasets.document_text(plain) == "no  title,\n\ttwo lines "  # as the dataset gives it
    assert datasets.document_text(plain, normalise=True) == "no title, two lines"
    assert datasets.document_fields(plain) == ("", "no  title,\n\ttwo lines ")

    titled = _TitledDoc("d2", "Paris", "capital of France")
    assert datasets.document_text(titled) == "Paris\ncapital of France"
    assert datasets.document_text(titled, normalise=True) == "Paris capital of France"
    assert datasets.document_fields(titled) == ("Paris", "capital of France")

    # BoolQuestions NQ, the suite's only titled corpus: default_text() already starts with the title
    nq = BoolQuestionsDoc("101", "nq passage 101", "Title 101")
    assert datasets.document_text(nq) == "Title 101 nq passage 101"
    assert datasets.document_fields(nq) == ("Title 101", "nq passage 101")
    # every runner sees the same words (the BEIR runners through BEIR's own title + " " + text)
    for doc in (plain, titled, nq):
        words = datasets.document_text(doc).split()
        assert datasets.document_text(doc, normalise=True).split() == words
        assert _beir_join(*datasets.document_fields(doc)).split() == words


class _RecordingEncoder:
    """Stands in for DenseEncoder in :func:`dense_index`: records the texts it is asked to encode."""

    def __init__(self):
        self.ref = resolve_model(None)
        self.dimension, self.max_length, self.pooling, self.normalize = 4, 256, "mean", True
        self.settings = {"pooling": "mean", "normalize": True, "max_length": 256, "prefix": "", "backend": "torch",
                         "dtype": "float32"}
        self.device, self.export = "cpu", None
        self.texts = []

    def encode(self, texts, batch_size=64):
        self.texts += texts
        return np.ones((len(texts), self.dimension), dtype=np.float32) / 2


def test_each_runner_gets_the_documented_text(mirror, tmp_path, monkeypatch):
    """BoolQuestions NQ (titled documents) through every consumer of the policy (dataset_fixtures.BQ_NQ_CORPUS)."""
    fx.write_boolquestions(mirror)
    dataset = datasets.load("boolquestions/nq")
    flat = {f"{n}": f"Title {n} nq passage {n}" for n in (101, 102, 103, 104)}
    # Lucene (index, search bm25) and dense (search dense) index iter_docs_for_indexing
    assert dict(datasets.iter_docs_for_indexing(dataset)) == flat
    encoder = _RecordingEncoder()
    dense_index("boolquestions/nq", index=tmp_path / "faiss", encoder=encoder, progress=False)
    assert sorted(encoder.texts) == sorted(flat.values())

    # search rerank: the same text (whitespace collapsed, except for the bi-encoder, which encodes it as search dense)
    seen = []

    class Scorer:
        def score(self, pairs):
            seen.extend(pairs)
            return [0.0] * len(pairs)

    monkeypatch.setattr(rerank_module, "make_scorer", lambda *a, **k: Scorer())
    (tmp_path / "first.trec").write_text("nq1 Q0 101 1 2.0 t\nnq1 Q0 104 2 1.0 t\n")
    rerank("boolquestions/nq", tmp_path / "out.trec", run=tmp_path / "first.trec")
    assert sorted(seen) == [("films by A and B", flat["101"]), ("films by A and B", flat["104"])]

    # BEIR: title and text apart, in the exported corpus.jsonl and in what the BEIR runners hand to BEIR
    from negplugins.beir.export import export_beir
    from negplugins.runners.beir import beir_corpus

    fields = {doc_id: {"title": f"Title {doc_id}", "text": f"nq passage {doc_id}"} for doc_id in flat}
    assert beir_corpus(dataset) == fields
    export_beir("boolquestions/nq", tmp_path / "beir")
    lines = [json.loads(line) for line in (tmp_path / "beir" / "corpus.jsonl").read_text().splitlines()]
    assert {line["_id"]: {"title": line["title"], "text": line["text"]} for line in lines} == fields
    assert {doc_id: _beir_join(**entry) for doc_id, entry in fields.items()} == flat
