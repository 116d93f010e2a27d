"""Reranking a run or a dataset's scoreddocs with a bi-encoder, a (tiny) cross-encoder and a (tiny) monoT5
(ColBERT-style reranking: test_runners_colbert.py)."""

from __future__ import annotations

from pathlib import Path

import dataset_fixtures as fx
import ir_datasets
import pytest

from negplugins.errors import UserError
from negplugins.evaluation.scoring import evaluate
from negplugins.io.sidecars import file_sha256, read_metadata
from negplugins.runners.model_refs import resolve_model
from negplugins.runners.rerank import MONOT5_TEMPLATE, detect_reranker, rerank

DEMO = "negplugins-demo"
DEMO_DOCS = [f"d{n:02d}" for n in range(1, 37)]


def _lines(path):
    return [line.split() for line in Path(path).read_text().splitlines()]


def test_rerank_run_with_bi_encoder(first_stage, tmp_path):
    first = first_stage(tmp_path / "first.trec")
    info = rerank(DEMO, tmp_path / "a.trec", run=first, top_k=10, command="test")
    again = rerank(DEMO, tmp_path / "b.trec", run=first, top_k=10)
    assert info["reranker"] == "bi-encoder" and info["lines"] == again["lines"] == 30
    assert (tmp_path / "a.trec").read_bytes() == (tmp_path / "b.trec").read_bytes()  # deterministic
    lines = _lines(tmp_path / "a.trec")
    by_query = {}
    for q, _, d, _rank, score, tag in lines:
        by_query.setdefault(q, []).append((d, float(score)))
        assert tag == "rerank-bi-encoder-all-MiniLM-L6-v2"
    assert list(by_query) == ["q01", "q02", "q05"]
    for hits in by_query.values():
        assert sorted(d for d, _ in hits) == DEMO_DOCS[:10]  # the top 10 only; the rest are dropped
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True) and all(-1 <= s <= 1 for s in scores)
    # q01 asks for d02 (its positive): MiniLM puts it first, above the first stage's d01
    assert by_query["q01"][0][0] == "d02"
    meta = read_metadata(tmp_path / "a.trec")
    assert meta["runner"] == "rerank" and meta["first_stage"] == {"run": str(first), "sha256": file_sha256(first)}
    assert meta["parameters"]["top_k"] == 10 and meta["parameters"]["reranker"] == "bi-encoder"
    assert meta["model"]["sha256"] and meta["command"] == "test"


def test_rerank_gz_run_in_and_out(first_stage, tmp_path):
    import gzip

    first = first_stage(tmp_path / "first.trec")
    gz_first = tmp_path / "first.trec.gz"
    gz_first.write_bytes(gzip.compress(first.read_bytes()))
    rerank(DEMO, tmp_path / "a.trec", run=first, top_k=3)
    rerank(DEMO, tmp_path / "b.trec.gz", run=gz_first, top_k=3)
    assert gzip.decompress((tmp_path / "b.trec.gz").read_bytes()) == (tmp_path / "a.trec").read_bytes()


@pytest.mark.parametrize("kind", ["bi-encoder", "cross-encoder", "monot5"])
def test_rerank_nevir_candidates_and_paired_accuracy(mirror, tmp_path, tiny_cross_encoder, tiny_monot5, kind):
    fx.write_nevir(mirror)
    model = {"bi-encoder": None, "cross-encoder": str(tiny_cross_encoder), "monot5": str(tiny_monot5)}[kind]
    info = rerank("nevir/test", tmp_path / "run.trec", model=model, candidates=True)  # kind detected from config
    assert info["reranker"] == kind and info["queries"] == 6 and info["lines"] == 12
    lines = _lines(tmp_path / "run.trec")
    pairs = {}
    for q, _, d, _, score, tag in lines:
        pairs.setdefault(q, []).append(d)
        assert tag.startswith(f"rerank-{kind}-")
        if kind == "monot5":
            assert float(score) <= 0  # a log-probability
    assert all(sorted(docs) == [f"{q.rsplit('_', 1)[0]}_doc1", f"{q.rsplit('_', 1)[0]}_doc2"]
               for q, docs in pairs.items())
    meta = read_metadata(tmp_path / "run.trec")
    assert meta["first_stage"] == {"run": "scoreddocs:nevir/test", "sha256": None}
    result = evaluate("nevir/test", tmp_path / "run.trec", measures=["PairedAcc"])
    # three pairs: each is right (both queries rank their own document first) or not
    assert round(result.overall["PairedAcc"] * 3, 9) in (0, 1, 2, 3)


def test_detect_reranker(tiny_cross_encoder, tiny_monot5):
    assert detect_reranker(resolve_model(str(tiny_cross_encoder))) == "cross-encoder"
    assert detect_reranker(resolve_model(str(tiny_monot5))) == "monot5"
    assert detect_reranker(resolve_model(None)) == "bi-encoder"


def test_monot5_and_cross_encoder_scores_are_what_they_claim(mirror, tmp_path, tiny_cross_encoder, tiny_monot5):
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoModelForSequenceClassification, AutoTokenizer

    fx.write_nevir(mirror)
    dataset = ir_datasets.load("nevir/test")
    query = next(q for q in dataset.queries_iter() if q.query_id == "1000-2_q1").text
    doc = dataset.docs_store().get("1000-2_doc2").text

    rerank("nevir/test", tmp_path / "t5.trec", model=str(tiny_monot5), reranker="monot5", candidates=True)
    tokenizer = AutoTokenizer.from_pretrained(tiny_monot5)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_monot5).eval()
    true_id, false_id = tokenizer.convert_tokens_to_ids(["\u2581true", "\u2581false"])
    with torch.inference_mode():
        inputs = tokenizer([MONOT5_TEMPLATE.format(query=query, document=doc)], return_tensors="pt")
        logits = model(**inputs, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits[0, 0]
    expected = torch.log_softmax(logits[[true_id, false_id]], dim=-1)[0].item()
    got = {(q, d): float(s) for q, _, d, _, s, _ in _lines(tmp_path / "t5.trec")}
    assert got[("1000-2_q1", "1000-2_doc2")] == pytest.approx(expected, abs=2e-6)

    rerank("nevir/test", tmp_path / "ce.trec", model=str(tiny_cross_encoder), candidates=True, batch_size=1)
    tokenizer = AutoTokenizer.from_pretrained(tiny_cross_encoder)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_cross_encoder).eval()
    with torch.inference_mode():
        expected = model(**tokenizer([query], [doc], return_tensors="pt")).logits[0, 0].item()
    got = {(q, d): float(s) for q, _, d, _, s, _ in _lines(tmp_path / "ce.trec")}
    assert got[("1000-2_q1", "1000-2_doc2")] == pytest.approx(expected, abs=2e-6)


def test_rerank_cross_encoder_from_run_is_deterministic(first_stage, tmp_path, tiny_cross_encoder):
    first = first_stage(tmp_path / "first.trec")
    rerank(DEMO, tmp_path / "a.trec", model=str(tiny_cross_encoder), run=first, top_k=20, batch_size=7)
    rerank(DEMO, tmp_path / "b.trec", model=str(tiny_cross_encoder), run=first, top_k=20, batch_size=7)
    assert (tmp_path / "a.trec").read_bytes() == (tmp_path / "b.trec").read_bytes()
    for q in ("q01", "q02", "q05"):
        hits = [(float(s), d) for qq, _, d, _, s, _ in _lines(tmp_path / "a.trec") if qq == q]
        assert hits == sorted(hits, reverse=True)  # score desc, ties by doc id desc (the one ranking)


# -- bad input ---------------------------------------------------------------------------------------

def test_empty_run(tmp_path):
    (tmp_path / "empty.trec").write_text("")
    with pytest.raises(UserError, match="empty.trec: the run is empty"):
        rerank(DEMO, tmp_path / "out.trec", run=tmp_path / "empty.trec")
    assert not (tmp_path / "out.trec").exists()


def test_run_naming_unknown_documents_or_queries(first_stage, tmp_path):
    run = first_stage(tmp_path / "first.trec", docs=["d01", "nope-7", "nope-9"])
    with pytest.raises(UserError, match=r"first.trec: document 'nope-7' \(and 1 more\) is not in the documents of "
                                        r"negplugins-demo"):
        rerank(DEMO, tmp_path / "out.trec", run=run)
    run = first_stage(tmp_path / "first2.trec", queries=("q01", "zz"))
    with pytest.raises(UserError, match="first2.trec: query 'zz' is not a query of negplugins-demo"):
        rerank(DEMO, tmp_path / "out.trec", run=run)
    assert not (tmp_path / "out.trec").exists()


def test_bad_arguments(first_stage, tmp_path):
    first = first_stage(tmp_path / "first.trec")
    with pytest.raises(UserError, match="exactly one of --run FIRST_STAGE and --candidates"):
        rerank(DEMO, tmp_path / "out.trec")
    with pytest.raises(UserError, match="exactly one of"):
        rerank(DEMO, tmp_path / "out.trec", run=first, candidates=True)
    with pytest.raises(UserError, match="negplugins-demo: the dataset has no scoreddocs"):
        rerank(DEMO, tmp_path / "out.trec", candidates=True)
    with pytest.raises(UserError, match="--top-k: expected an integer from 1 to 100000, got 0"):
        rerank(DEMO, tmp_path / "out.trec", run=first, top_k=0)
    with pytest.raises(UserError, match="unknown reranker 'splade'; choose one of cross-encoder, monot5, bi-encoder, "
                                        "colbert"):
        rerank(DEMO, tmp_path / "out.trec", run=first, reranker="splade")
    with pytest.raises(UserError, match="missing.trec: run file not found"):
        rerank(DEMO, tmp_path / "out.trec", run=tmp_path / "missing.trec")
    with pytest.raises(UserError, match="unknown model 'nobody/cross-encoder-xyz'.*offline"):
        rerank(DEMO, tmp_path / "out.trec", run=first, model="nobody/cross-encoder-xyz")
    assert not (tmp_path / "out.trec").exists()


def test_model_of_the_wrong_kind(first_stage, tmp_path, tiny_cross_encoder):
    first = first_stage(tmp_path / "first.trec")
    with pytest.raises(UserError, match=f"model '{tiny_cross_encoder}' cannot be loaded as a monoT5"):
        rerank(DEMO, tmp_path / "out.trec", run=first, model=str(tiny_cross_encoder), reranker="monot5")
    assert not (tmp_path / "out.trec").exists()
