"""Late-interaction (ColBERT-style) reranking with tiny models, checked against a direct torch computation.

No trained ColBERT weights can be downloaded here, so three tiny randomly initialised BERTs stand in for the
three layouts the reranker reads: a Stanford ColBERT checkpoint (``HF_ColBERT``, ``bert.*`` weights plus
``linear.weight``, ``artifact.metadata``), a PyLate folder (``[Q] ``/``[D] `` added tokens, a ``1_Dense``
projection, ``config_sentence_transformers.json``) and a plain BERT (no projection, ColBERT's default markers).
The direct computation below follows Stanford ColBERT's own steps (``". " + text`` with the ``.`` overwritten by
the marker, ``[PAD]`` replaced by ``[MASK]`` in queries, the punctuation skiplist) rather than the suite's code.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import dataset_fixtures as fx
import ir_datasets
import pytest

from negplugins.errors import UserError
from negplugins.evaluation.scoring import evaluate
from negplugins.evaluation.validation import validate_run
from negplugins.io.sidecars import read_metadata
from negplugins.runners.late_interaction import ColbertScorer, colbert_settings, maxsim
from negplugins.runners.model_refs import resolve_model
from negplugins.runners.rerank import detect_reranker, rerank

DEMO = "negplugins-demo"
_WORDS = ("which what was used except in not country throughout nickel the a of is city capital france paris "
          "query document relevant true false metal and or but").split()
_CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789?.,:'-")


def _tiny_bert(folder: Path, seed: int, special=("[unused0]", "[unused1]"), added=()):
    """A 1-layer BertModel (hidden size 32) and its tokenizer saved in ``folder``; returns the model."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    vocab = list(dict.fromkeys(["[PAD]", *special, "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS, *_CHARS,
                                *(f"##{c}" for c in _CHARS)]))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(vocab=str(folder / "vocab.txt"))
    if added:
        tokenizer.add_tokens(list(added))
    tokenizer.save_pretrained(folder)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=512)
    return BertModel(config, add_pooling_layer=False)


@pytest.fixture(scope="module")
def stanford_colbert(tmp_path_factory) -> Path:
    """As Stanford ColBERT saves a checkpoint: ``HF_ColBERT``, ``bert.``-prefixed weights, a 32 -> 16 ``linear``."""
    import torch
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("tiny-stanford-colbert")
    model = _tiny_bert(folder, 0)
    state = {f"bert.{name}": tensor.contiguous() for name, tensor in model.state_dict().items()}
    state["linear.weight"] = torch.randn(16, 32) / 4
    save_file(state, str(folder / "model.safetensors"))
    model.config.architectures = ["HF_ColBERT"]
    model.config.save_pretrained(folder)
    (folder / "artifact.metadata").write_text(json.dumps({
        "query_token_id": "[unused0]", "doc_token_id": "[unused1]", "query_maxlen": 32, "doc_maxlen": 180,
        "dim": 16, "mask_punctuation": True, "attend_to_mask_tokens": False, "similarity": "cosine"}))
    return folder


@pytest.fixture(scope="module")
def pylate_colbert(tmp_path_factory) -> Path:
    """As PyLate saves a model: ``[Q] ``/``[D] `` added tokens, a ``1_Dense`` 32 -> 8 projection, other lengths."""
    import torch
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("tiny-pylate-colbert")
    _tiny_bert(folder, 1, special=(), added=("[Q] ", "[D] ")).save_pretrained(folder)
    (folder / "1_Dense").mkdir()
    (folder / "1_Dense" / "config.json").write_text(json.dumps({
        "in_features": 32, "out_features": 8, "bias": False,
        "activation_function": "torch.nn.modules.linear.Identity"}))
    save_file({"linear.weight": torch.randn(8, 32)}, str(folder / "1_Dense" / "model.safetensors"))
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Dense", "type": "pylate.models.Dense.Dense"}]))
    (folder / "config_sentence_transformers.json").write_text(json.dumps({
        "query_prefix": "[Q] ", "document_prefix": "[D] ", "query_length": 24, "document_length": 64,
        "attend_to_expansion_tokens": True}))
    return folder


@pytest.fixture(scope="module")
def plain_bert(tmp_path_factory) -> Path:
    """A plain BertModel checkpoint: no projection, no ColBERT settings; its vocabulary has [unused0]/[unused1]."""
    folder = tmp_path_factory.mktemp("tiny-plain-bert")
    _tiny_bert(folder, 2).save_pretrained(folder)
    return folder


def _direct(folder: Path, query: str, doc: str, *, markers, query_maxlen, doc_maxlen, projection,
            attend_to_mask=False) -> float:
    """MaxSim of one pair, step by step as Stanford ColBERT's QueryTokenizer, DocTokenizer and ColBERT.score."""
    import torch
    from transformers import BertModel, BertTokenizer

    tokenizer = BertTokenizer.from_pretrained(folder)
    model = BertModel.from_pretrained(folder).eval()
    q_marker, d_marker = (tokenizer.convert_tokens_to_ids(m) if m else None for m in markers)

    def tokens(text, marker, length, padding):
        prefix = ". " if marker is not None else ""
        encoded = tokenizer([prefix + text], padding=padding, truncation=True, max_length=length,
                            return_tensors="pt")
        ids, mask = encoded["input_ids"], encoded["attention_mask"]
        if marker is not None:
            ids[:, 1] = marker
        return ids, mask

    def vectors(ids, mask):
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=mask).last_hidden_state[0]
        for weight in projection:
            out = out @ weight.T
        return torch.nn.functional.normalize(out, p=2, dim=-1)

    ids, mask = tokens(query, q_marker, query_maxlen, "max_length")
    ids[ids == tokenizer.pad_token_id] = tokenizer.mask_token_id
    if attend_to_mask:
        mask[:] = 1
    Q = vectors(ids, mask)
    ids, mask = tokens(doc, d_marker, doc_maxlen, "longest")
    D = vectors(ids, mask)
    skip = {tokenizer.encode(symbol, add_special_tokens=False)[0] for symbol in string.punctuation}
    kept = [j for j, token in enumerate(ids[0].tolist()) if token not in skip]
    total = 0.0
    for i in range(Q.shape[0]):
        total += max(float(torch.dot(Q[i], D[j])) for j in kept)
    return total


def _projection(folder: Path, file: str):
    from safetensors import safe_open

    with safe_open(str(folder / file), framework="pt") as f:
        return [f.get_tensor("linear.weight")]


def _lines(path):
    return [line.split() for line in Path(path).read_text().splitlines()]


def test_maxsim_by_hand():
    import torch

    Q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    D = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
    # query token 1: max(0.6, 1.0) = 1.0; query token 2: max(0.8, 0.0) = 0.8
    assert maxsim(Q, D) == pytest.approx(1.8)
    assert maxsim(Q, D[:0]) == 0.0


def test_settings_of_each_layout(stanford_colbert, pylate_colbert, plain_bert, tiny_cross_encoder):
    assert colbert_settings(stanford_colbert) == {
        "query_marker": "[unused0]", "doc_marker": "[unused1]", "query_maxlen": 32, "doc_maxlen": 180,
        "attend_to_mask_tokens": False, "mask_punctuation": True, "source": "stanford"}
    assert colbert_settings(pylate_colbert) == {
        "query_marker": "[Q] ", "doc_marker": "[D] ", "query_maxlen": 24, "doc_maxlen": 64,
        "attend_to_mask_tokens": True, "mask_punctuation": True, "source": "pylate"}
    assert colbert_settings(plain_bert)["source"] == "defaults"
    for folder in (stanford_colbert, pylate_colbert):
        assert detect_reranker(resolve_model(str(folder))) == "colbert"
    assert detect_reranker(resolve_model(str(plain_bert))) == "bi-encoder"  # a plain BERT needs --reranker colbert
    plain = ColbertScorer(resolve_model(str(plain_bert)), 4)
    assert (plain.query_marker, plain.doc_marker, plain.dim) == ("[unused0]", "[unused1]", 32)
    assert plain.projection.startswith("identity")
    # a vocabulary without [unused0]/[unused1] (the cross-encoder fixture's): no markers
    bare = ColbertScorer(resolve_model(str(tiny_cross_encoder)), 4)
    assert (bare.query_marker, bare.doc_marker) == (None, None)


@pytest.mark.parametrize("layout", ["stanford", "pylate", "plain"])
def test_nevir_pairs_reranked_by_maxsim_equal_to_a_direct_computation(
        mirror, tmp_path, stanford_colbert, pylate_colbert, plain_bert, layout):
    fx.write_nevir(mirror)
    folder = {"stanford": stanford_colbert, "pylate": pylate_colbert, "plain": plain_bert}[layout]
    reranker = "colbert" if layout == "plain" else None  # the other two are detected
    max_length = 12 if layout == "plain" else None  # --max-length sets the document length
    info = rerank("nevir/test", tmp_path / "run.trec", model=str(folder), candidates=True, reranker=reranker,
                  batch_size=2, max_length=max_length, command="test")
    assert info["reranker"] == "colbert" and info["queries"] == 6 and info["lines"] == 12
    report = validate_run("nevir/test", tmp_path / "run.trec")
    assert report.valid and not report.missing_queries, report.summary()

    settings = {
        "stanford": dict(markers=("[unused0]", "[unused1]"), query_maxlen=32, doc_maxlen=180,
                         projection=_projection(stanford_colbert, "model.safetensors")),
        "pylate": dict(markers=("[Q] ", "[D] "), query_maxlen=24, doc_maxlen=64, attend_to_mask=True,
                       projection=_projection(pylate_colbert, "1_Dense/model.safetensors")),
        "plain": dict(markers=("[unused0]", "[unused1]"), query_maxlen=32, doc_maxlen=12, projection=[]),
    }[layout]
    dataset = ir_datasets.load("nevir/test")
    queries = {q.query_id: q.text for q in dataset.queries_iter()}
    store = dataset.docs_store()
    lines = _lines(tmp_path / "run.trec")
    pairs = {}
    for query_id, _, doc_id, _rank, score, tag in lines:
        assert tag == f"rerank-colbert-{folder.name}"
        pairs.setdefault(query_id, []).append(doc_id)
        expected = _direct(folder, queries[query_id], store.get(doc_id).text, **settings)
        assert float(score) == pytest.approx(expected, abs=1e-4)  # float32 sums of 24 to 32 cosines
        assert 0 < float(score) <= settings["query_maxlen"]
    assert all(sorted(docs) == [f"{q.rsplit('_', 1)[0]}_doc1", f"{q.rsplit('_', 1)[0]}_doc2"]
               for q, docs in pairs.items())
    result = evaluate("nevir/test", tmp_path / "run.trec", measures=["PairedAcc"])
    assert round(result.overall["PairedAcc"] * 3, 9) in (0, 1, 2, 3)

    meta = read_metadata(tmp_path / "run.trec")
    assert meta["runner"] == "rerank" and meta["model"] == resolve_model(str(folder)).metadata()
    parameters = meta["parameters"]
    assert parameters["reranker"] == "colbert" and parameters["settings_from"] == {
        "stanford": "stanford", "pylate": "pylate", "plain": "defaults"}[layout]
    assert (parameters["query_maxlen"], parameters["doc_maxlen"]) == (settings["query_maxlen"], settings["doc_maxlen"])
    assert parameters["dim"] == {"stanford": 16, "pylate": 8, "plain": 32}[layout]


def test_rerank_a_first_stage_run_deterministically(tmp_path, stanford_colbert):
    with open(tmp_path / "first.trec", "w") as f:
        for q in ("q01", "q02"):
            for rank, n in enumerate(range(1, 13), start=1):
                f.write(f"{q} Q0 d{n:02d} {rank} {100 - rank}.0 first\n")
    rerank(DEMO, tmp_path / "a.trec", model=str(stanford_colbert), run=tmp_path / "first.trec", top_k=8, batch_size=3)
    rerank(DEMO, tmp_path / "b.trec", model=str(stanford_colbert), run=tmp_path / "first.trec", top_k=8, batch_size=5)
    a, b = (tmp_path / "a.trec").read_text(), (tmp_path / "b.trec").read_text()
    assert len(a.splitlines()) == 16 and {line.split()[2] for line in a.splitlines()} == {f"d{n:02d}" for n in range(1, 9)}
    for q in ("q01", "q02"):
        hits = [(float(s), d) for qq, _, d, _, s, _ in _lines(tmp_path / "a.trec") if qq == q]
        assert hits == sorted(hits, reverse=True)  # score desc, ties by doc id desc (the one ranking)
    # other batches: the same scores to the written precision (float32 noise below 1e-6 aside)
    assert [line.split()[:3] for line in a.splitlines()] == [line.split()[:3] for line in b.splitlines()]
    again = tmp_path / "c.trec"
    rerank(DEMO, again, model=str(stanford_colbert), run=tmp_path / "first.trec", top_k=8, batch_size=3)
    assert again.read_text() == a


@pytest.mark.parametrize("layout", ["stanford", "pylate", "plain"])
def test_documents_through_the_encoding_pipeline_equal_one_at_a_time(stanford_colbert, pylate_colbert, plain_bert,
                                                                     layout):
    """The documents' token vectors from the encoding pipeline (token-budget batches, the Rust tokenizer, the
    marker inserted into its ids) equal each document encoded alone by the transformers call and no padding."""
    import torch

    folder = {"stanford": stanford_colbert, "pylate": pylate_colbert, "plain": plain_bert}[layout]
    scorer = ColbertScorer(resolve_model(str(folder)), batch_size=2, max_length=12 if layout == "plain" else None)
    texts = ["Which country used nickel?", "", "the capital of france is paris, not lyon. " * 20, "a", "x-y: z",
             "Nickel was used throughout the country except in the north.", "q"]
    batched = scorer.encode_documents(texts)
    assert len(batched) == len(texts)
    with torch.inference_mode():
        for text, vectors in zip(texts, batched):
            [ids] = scorer._ids([text], scorer.doc_maxlen, scorer.doc_marker_id)
            alone, input_ids, attention = scorer._encode([ids], len(ids), scorer.tokenizer.pad_token_id, False)
            keep = attention.bool() & ~torch.isin(input_ids, torch.tensor(sorted(scorer.skiplist) or [-1]))
            assert vectors.shape == alone[0][keep[0]].shape
            assert torch.allclose(vectors, alone[0][keep[0]], atol=1e-6)


def test_bad_colbert_models(tmp_path, stanford_colbert, tiny_monot5):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(stanford_colbert, broken)
    metadata = json.loads((broken / "artifact.metadata").read_text())
    (broken / "artifact.metadata").write_text(json.dumps(dict(metadata, query_token_id="[nope]")))
    with pytest.raises(UserError, match=r"its ColBERT marker '\[nope\]' is not a token of its tokenizer"):
        ColbertScorer(resolve_model(str(broken)), 4)
    (broken / "artifact.metadata").write_text(json.dumps(dict(metadata, query_maxlen=3)))
    with pytest.raises(UserError, match="query_maxlen 3 leaves no room for text"):
        ColbertScorer(resolve_model(str(broken)), 4)
    with pytest.raises(UserError, match="cannot be loaded as a ColBERT-style encoder"):
        ColbertScorer(resolve_model(str(tiny_monot5)), 4)


def test_the_api_leaves_hugging_face_variables_alone(mirror, tmp_path, monkeypatch, stanford_colbert):
    fx.write_nevir(mirror)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.delenv(name, raising=False)
    before = dict(os.environ)
    rerank("nevir/test", tmp_path / "run.trec", model=str(stanford_colbert), candidates=True)
    assert dict(os.environ) == before
