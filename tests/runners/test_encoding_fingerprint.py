"""What the suite stores from a model is reused only while everything that made it matches: the model's weights and
every file of its folder (tokenizer, pooling, configuration), the encoding settings, the text as encoded, the data.

The model is a copy of the packaged MiniLM in a temporary folder (the real sentence-transformers layout), changed
as a user would change it: lowercasing switched off in its tokenizer, its pooling switched from mean to CLS. Every
index and output is under ``tmp_path``. The same file checks the token limits a model honours.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import dataset_fixtures as fx
import pytest

from negplugins.errors import UserError
from negplugins.io.sidecars import read_metadata
from negplugins.runners import encoders
from negplugins.runners.dense import dense_index, dense_search
from negplugins.runners.model_refs import default_model_path, resolve_model, weights_sha256
from negplugins.runners.rerank import rerank

DEMO = "negplugins-demo"


@pytest.fixture
def model(tmp_path):
    """A copy of the packaged MiniLM (sentence-transformers folder: tokenizer, 1_Pooling, modules.json, ...)."""
    return shutil.copytree(default_model_path(), tmp_path / "minilm-copy")


def _edit_json(path, **changes):
    record = json.loads(path.read_text(encoding="utf-8"))
    record.update(changes)
    path.write_text(json.dumps(record, indent=2), encoding="utf-8")


def test_the_model_files_fingerprint_follows_its_documentation(model):
    """The weights' line, then each other file (sorted by path); README and hidden files left out."""
    from negplugins.runners.model_refs import model_files_sha256

    (model / "notes.md").write_text("anything", encoding="utf-8")
    lines = [f"weights {weights_sha256(model)}\n"]
    for name in ("1_Pooling/config.json", "config.json", "config_sentence_transformers.json", "data_config.json",
                 "modules.json", "sentence_bert_config.json", "special_tokens_map.json", "tokenizer.json",
                 "tokenizer_config.json", "vocab.txt"):
        lines.append(f"{name} {hashlib.sha256((model / name).read_bytes()).hexdigest()}\n")
    assert model_files_sha256(model) == hashlib.sha256("".join(lines).encode()).hexdigest()
    assert resolve_model(str(model)).metadata()["files_sha256"] == model_files_sha256(model)
    (model / "README.md").write_text("edited", encoding="utf-8")
    assert model_files_sha256(model) == hashlib.sha256("".join(lines).encode()).hexdigest()
    _edit_json(model / "1_Pooling" / "config.json", pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    assert model_files_sha256(model) != hashlib.sha256("".join(lines).encode()).hexdigest()


def test_a_model_object_is_fingerprinted_with_its_pooling_and_tokenizer():
    """A loaded SentenceTransformer (no folder): its modules' configurations and tokenizer count, as files do."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)
    before = encoders.SentenceEncoder.from_model(model).ref
    model[1].pooling_mode = "cls"
    after = encoders.SentenceEncoder.from_model(model).ref
    assert after.sha256 == before.sha256 and after.files_sha256 != before.files_sha256
    assert after.metadata()["files_sha256"] == after.files_sha256


def test_a_tokenizer_change_rebuilds_the_dense_index_and_refuses_it_given(model, tmp_path):
    """Lowercasing switched off, the weights unchanged: the index of the lowercased texts is encoded again."""
    index = tmp_path / "faiss"
    first = dense_index(DEMO, model=str(model), index=index, progress=False)
    assert first.built and dense_index(DEMO, model=str(model), index=index, progress=False).built is False
    _edit_json(model / "tokenizer_config.json", do_lower_case=False)
    with pytest.raises(UserError, match=r"faiss: the index was encoded with other files of model .* than its folder "
                                        r"holds now .*leave out --index"):
        dense_search(DEMO, tmp_path / "run.trec", model=str(model), index=index, progress=False)
    again = dense_index(DEMO, model=str(model), index=index, progress=False)
    assert again.built and again.manifest["model_sha256"] == first.manifest["model_sha256"]
    assert again.manifest["fingerprint"] != first.manifest["fingerprint"]
    dense_search(DEMO, tmp_path / "searched.trec", model=str(model), index=index, progress=False)
    fresh = dense_index(DEMO, model=str(model), index=tmp_path / "fresh", progress=False).path
    dense_search(DEMO, tmp_path / "rebuilt.trec", model=str(model), index=fresh, progress=False)
    assert (tmp_path / "searched.trec").read_bytes() == (tmp_path / "rebuilt.trec").read_bytes()


def test_a_pooling_change_is_run_again_by_the_report_card(model, tmp_path, monkeypatch):
    """sentence-transformers' 1_Pooling/config.json from mean to CLS: no step of the model is reused."""
    from negplugins.reportcard import run_benchmark

    monkeypatch.chdir(tmp_path)
    options = {"benchmarks": DEMO, "output": tmp_path / "out", "indexes": tmp_path / "indexes", "progress": False,
               "baselines": False}
    run_benchmark(str(model), **options)
    _edit_json(model / "1_Pooling" / "config.json", pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    (outcome,) = run_benchmark(str(model), **options).done
    steps = dict((step, how) for step, how, _ in outcome.steps)
    assert steps["dense retrieval"] == "ran" and steps["dense index"] == "ran" and steps["evaluation"] == "ran"
    meta = read_metadata(outcome.run)
    from negplugins.runners.model_refs import model_files_sha256

    assert meta["parameters"]["pooling"] == "cls" and meta["model"]["files_sha256"] == model_files_sha256(model)


# -- the bi-encoder reranker and a dense index --------------------------------------------------------------

def test_a_dense_index_lying_around_does_not_change_the_rerank(first_stage, tmp_path, monkeypatch):
    """Without --index every document is encoded: the same bytes whether the model's default index exists or not."""
    monkeypatch.chdir(tmp_path)
    first = first_stage(tmp_path / "first.trec", queries=[f"q{n:02d}" for n in range(1, 22)])
    rerank(DEMO, tmp_path / "without.trec", run=first, reranker="bi-encoder", progress=False)
    built = dense_index(DEMO, progress=False)  # the model's default index, indexes/faiss/negplugins-demo/...
    assert built.built and (tmp_path / built.path / "index").is_file()
    rerank(DEMO, tmp_path / "with.trec", run=first, reranker="bi-encoder", progress=False)
    assert (tmp_path / "with.trec").read_bytes() == (tmp_path / "without.trec").read_bytes()
    assert read_metadata(tmp_path / "with.trec")["index"] is None
    rerank(DEMO, tmp_path / "given.trec", run=first, reranker="bi-encoder", index=built.path, progress=False)
    assert read_metadata(tmp_path / "given.trec")["index"]["documents_read"] == 36  # read when asked for


def test_the_bi_encoder_encodes_a_document_as_the_dense_index_does(mirror, tmp_path, monkeypatch):
    """Whitespace as the dataset gives it (a byte-level BPE tokenizer tells a newline from a space)."""
    from negplugins import datasets

    corpus = ["Paris  is the capital\nof France.", "Lyon is a city in France\tknown for its cuisine.",
              *fx.EXCLUIR_CORPUS[2:]]
    fx.write_excluir(mirror, corpus=corpus)
    seen = []
    original = encoders.SentenceEncoder.encode
    monkeypatch.setattr(encoders.SentenceEncoder, "encode",
                        lambda self, texts, batch_size=64, bar=None: seen.extend(texts) or original(self, texts,
                                                                                                 batch_size, bar))
    run = tmp_path / "first.trec"
    run.write_text("".join(f"{q} Q0 {d} {d + 1} {9 - d}.0 x\n" for q in range(3) for d in range(6)), encoding="utf-8")
    rerank("excluir/test", tmp_path / "out.trec", run=run, reranker="bi-encoder", progress=False)
    indexed = dict(datasets.iter_docs_for_indexing(datasets.load("excluir/test")))
    assert set(indexed.values()) <= set(seen) and "Paris  is the capital\nof France." in seen


# -- token limits -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["1", "2", "513"])
def test_a_max_length_the_tokenizer_cannot_honour_is_refused(main_cli, tmp_path, value):
    result = main_cli("search", "dense", DEMO, "--max-length", value, "-o", "run.trec", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (f"negplugins: error: --max-length {value}: model 'all-MiniLM-L6-v2' takes a "
                                     f"token limit of 3 to 512 (2 special tokens and at least one of text; 512 "
                                     f"positions)")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["rerank", "beir-dense", "beir-rerank"])
def test_every_runner_refuses_a_max_length_below_the_special_tokens(main_cli, first_stage, tmp_path, command):
    pytest.importorskip("beir")
    first = first_stage(tmp_path / "first.trec")
    source = [] if command == "beir-dense" else ["--run", str(first)]
    result = main_cli("search", command, DEMO, *source, "--model", "all-MiniLM-L6-v2", "--max-length", "1", "-o",
                      "out.trec", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith("negplugins: error: --max-length 1: model 'all-MiniLM-L6-v2' "
                                                     "takes a token limit of ")
    assert not (tmp_path / "out.trec").exists()


def test_the_token_limits_of_each_kind_of_model(tiny_cross_encoder, first_stage, tmp_path):
    first = first_stage(tmp_path / "first.trec")
    with pytest.raises(UserError, match=r"^--max-length 3: model '.*tiny-cross-encoder.*' takes a token limit of 4 to "
                                        r"512 \(3 special tokens to a pair and at least one of text; 512 positions\)$"):
        rerank(DEMO, tmp_path / "out.trec", run=first, model=str(tiny_cross_encoder), max_length=3)
    with pytest.raises(UserError, match=r"^--max-length 2: .* 3 to 512"):
        rerank(DEMO, tmp_path / "out.trec", run=first, reranker="bi-encoder", max_length=2)
    assert not (tmp_path / "out.trec").exists()
    from negplugins.runners.encoding_settings import encoder_settings, token_limits

    ref = resolve_model(None)
    assert token_limits(ref) == (3, 512) and token_limits(ref, pair=True) == (4, 512)
    assert encoder_settings(ref, max_length=3)["max_length"] == 3
    assert encoder_settings(ref, max_length=512)["max_length"] == 512


# -- the data an index was made from ------------------------------------------------------------------------

def test_indexes_of_a_derived_copy_are_built_again_from_the_release(mirror, monkeypatch, tmp_path):
    """NevIR's derived copy, then its release: the dense and the Lucene index of the copy are not reused."""
    from dataset_checks import pin_derived_copy

    from ir_datasets_ext.datasets import nevir
    from negplugins.runners.lucene_index import lucene_index

    pin_derived_copy(monkeypatch, nevir._FILES["test"], fx.write_nevir_derived(mirror))
    dense = dense_index("nevir/test", index=tmp_path / "faiss", progress=False)
    lucene, _ = lucene_index("nevir/test", index=tmp_path / "lucene")
    assert dense_index("nevir/test", index=dense.path, progress=False).built is False
    assert lucene_index("nevir/test", index=lucene) == (lucene, False)
    fx.write_nevir(mirror)  # the release appears
    again = dense_index("nevir/test", index=dense.path, progress=False)
    assert again.built and lucene_index("nevir/test", index=lucene) == (lucene, True)
    assert dense.manifest["data_origin"] == [nevir._FILES["test"].derived.to_dict()] and again.manifest["data_origin"] == []
