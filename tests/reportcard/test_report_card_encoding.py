"""``negplugins benchmark`` with the encoding, index and engine options of ``search dense``: one declaration, the
checks before any work, the record of what was used, reuse only when the options match, a model with prompts and
its own pooling, and an interrupted encoding resumed from its finished shards.

The models are tiny random BERTs in the sentence-transformers layout with the packaged MiniLM's tokenizer.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import dataset_fixtures as fx
import numpy as np
import pytest

from negplugins.reportcard.suite import run_benchmark

TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def _tiny_model(folder: Path, pooling: str, prompts: dict, seed: int) -> Path:
    """A 2-layer BERT with random weights, the packaged MiniLM's tokenizer, a Pooling module of ``pooling`` and the
    ``prompts`` of ``config_sentence_transformers.json``: the files sentence-transformers writes."""
    import torch
    from transformers import BertConfig, BertModel

    from negplugins.runners.model_refs import default_model_path

    folder.mkdir(parents=True)
    for name in TOKENIZER_FILES:
        shutil.copy(default_model_path() / name, folder / name)
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=37, max_position_embeddings=512)).save_pretrained(folder)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128, "do_lower_case": False}),
                                                      encoding="utf-8")
    (folder / "1_Pooling").mkdir()
    modes = {f"pooling_mode_{m}": m == pooling for m in ("cls_token", "mean_tokens", "max_tokens", "lasttoken")}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32, **modes}),
                                                      encoding="utf-8")
    (folder / "2_Normalize").mkdir()
    (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("card-models")
    return {"plain": _tiny_model(root / "plain-cls", "cls_token", {}, seed=5),
            "e5": _tiny_model(root / "e5-cls", "cls_token", {"query": "query: ", "passage": "passage: "}, seed=6)}


def _card(model, out: Path, indexes: Path, **options):
    return run_benchmark(str(model), benchmarks="negplugins-demo", output=out, indexes=indexes, progress=False,
                         baselines=False, options=options or None)


def _run_lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def _steps(result) -> dict:
    return {step: how for step, how, _ in result.outcomes[0].steps}


# -- 1. the options: one declaration, checked before any work, recorded, keys of reuse --------------

def _actions(parser) -> dict:
    return {a.dest: a for a in parser._actions}


def test_benchmark_takes_search_dense_s_options_from_their_declaration():
    import argparse

    from negplugins.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    card = _actions(sub.choices["benchmark"])
    search = next(a for a in sub.choices["search"]._actions if isinstance(a, argparse._SubParsersAction))
    dense = _actions(search.choices["dense"])
    for name in ("backend", "dtype", "pooling", "normalize", "max_length", "query_prefix", "passage_prefix", "device",
                 "shard_num", "index_type", "search_shards", "search_params", "engine", "ray_workers"):
        mine, theirs = card[name], dense[name]
        assert (mine.option_strings, mine.default, mine.choices, mine.help) == \
            (theirs.option_strings, theirs.default, theirs.choices, theirs.help), name
    for fixed in ("hits", "shard_id", "query_encoder", "run_tag"):  # the protocols fix them
        assert fixed not in card


@pytest.mark.parametrize("arguments, message", [
    (["--backend", "onnx", "--dtype", "bfloat16"], "--dtype bfloat16 is not run by --backend onnx"),
    (["--reranker", "cross-encoder", "--passage-prefix", "passage: "],
     "--passage-prefix: --reranker cross-encoder: the model reads each query and passage together, with no prefix"),
    (["--reranker", "monot5", "--dtype", "float16"], "--dtype: --reranker monot5"),
    (["--ray-workers", "2"], "--ray-workers: only with --engine ray"),
    (["--engine", "ray"], "--engine ray needs Ray Data: pip install 'negplugins[ray]'"),
])
def test_bad_options_get_one_line_before_any_work(arguments, message, tmp_path, monkeypatch, capsys):
    import sys

    from negplugins.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # Ray not installed
    monkeypatch.setitem(sys.modules, "ray.data", None)
    out = tmp_path / "card"
    assert main(["benchmark", "--model", "default", "--benchmarks", "negplugins-demo", "-o", str(out),
                 *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"negplugins: error: {message}") and err.count("\n") == 1, err
    assert not out.exists()


def test_options_are_recorded_and_a_rerun_reuses_only_with_the_same(tiny_models, tmp_path):
    out, indexes = tmp_path / "card", tmp_path / "indexes"
    first = _card(tiny_models["plain"], out, indexes)
    assert "encoding" not in first.summary["model"]  # sentence-transformers as the model is: nothing to add
    run = out / "negplugins-demo" / "dense-plain-cls.trec.gz"
    assert json.loads(run.with_name("dense-plain-cls.meta.json").read_text())["parameters"]["pooling"] == "cls"

    second = _card(tiny_models["plain"], out, indexes, pooling="mean", max_length=64)
    assert _steps(second)["dense retrieval"] == "ran"  # other options: made again, not reused
    meta = json.loads(run.with_name("dense-plain-cls.meta.json").read_text())["parameters"]
    assert (meta["pooling"], meta["max_length"], meta["backend"], meta["dtype"]) == ("mean", 64, "torch", "float32")
    encoding = second.summary["model"]["encoding"]
    assert (encoding["pooling"], encoding["max_length"], encoding["encoder"]) == ("mean", 64, "search dense")
    assert json.loads((out / "summary.json").read_text())["model"]["encoding"] == encoding
    assert "- Encoding: encoded by search dense: torch float32, mean pooling" in (out / "report.md").read_text()
    model_meta = json.loads(second.mteb[-1].read_text())
    assert model_meta["loader_kwargs"]["pooling"] == "mean" and model_meta["loader_kwargs"]["max_length"] == 64

    third = _card(tiny_models["plain"], out, indexes, pooling="mean", max_length=64)
    assert _steps(third)["dense retrieval"] == "reused"
    fourth = _card(tiny_models["plain"], out, indexes)  # back to the defaults: made again
    assert _steps(fourth)["dense retrieval"] == "ran" and "encoding" not in fourth.summary["model"]


# -- 3. a model with prompts and its own pooling, as its authors run it ------------------------------

def test_a_model_with_prompts_and_cls_pooling_goes_on_the_card_as_search_dense_runs_it(tiny_models, tmp_path):
    from negplugins.runners.dense import dense_search

    out = tmp_path / "card"
    result = _card(tiny_models["e5"], out, tmp_path / "indexes")
    run = out / "negplugins-demo" / "dense-e5-cls.trec.gz"
    parameters = json.loads(run.with_name("dense-e5-cls.meta.json").read_text())["parameters"]
    assert (parameters["query_prefix"], parameters["passage_prefix"], parameters["pooling"]) == \
        ("query: ", "passage: ", "cls")
    reference = tmp_path / "search-dense.trec"
    dense_search("negplugins-demo", reference, model=tiny_models["e5"], hits=100, run_tag="dense-e5-cls",
                 progress=False)
    assert _run_lines(run) == reference.read_text().splitlines()
    record = result.summary["model"]["encoding"]
    assert (record["query_prefix"], record["passage_prefix"], record["pooling"]) == ("query: ", "passage: ", "cls")
    meta = json.loads(result.mteb[-1].read_text())
    assert result.mteb[-1].name == "model_meta.json"
    assert meta["loader_kwargs"]["model_prompts"] == {"query": "query: ", "document": "passage: "}
    assert meta["loader_kwargs"]["pooling"] == "cls"
    report = (out / "report.md").read_text()
    assert "query prefix 'query: ', passage prefix 'passage: '" in report


def test_nevir_pairs_of_a_model_with_prompts_are_scored_with_its_prefixes(tiny_models, mirror, tmp_path):
    from negplugins.runners.encoders import DenseEncoder
    from negplugins.runners.model_refs import resolve_model

    fx.write_nevir(mirror)
    result = run_benchmark(str(tiny_models["e5"]), benchmarks="nevir", output=tmp_path / "card",
                           indexes=tmp_path / "indexes", progress=False, baselines=False)
    run = result.outcomes[0].run
    sidecar = json.loads(run.with_name(run.name.replace(".trec.gz", ".meta.json")).read_text())
    assert sidecar["parameters"]["encoding"] == result.summary["model"]["encoding"]
    assert sidecar["parameters"]["encoding"]["query_prefix"] == "query: "
    row = fx.NEVIR_ROWS["test.jsonl"][0]
    passage = DenseEncoder(resolve_model(str(tiny_models["e5"])), role="passage", device="cpu")
    query = passage.with_prefix("query: ", "query")
    expected = float(np.dot(query.encode([row["q1"]])[0], passage.encode([row["doc1"]])[0]))
    scores = {(line.split()[0], line.split()[2]): float(line.split()[4]) for line in _run_lines(run)}
    assert scores[(f"{row['id']}_q1", f"{row['id']}_doc1")] == pytest.approx(expected, abs=1e-5)


# -- 4. an interrupted encoding resumes from its finished shards -------------------------------------

def test_an_interrupted_card_resumes_from_its_finished_shards(tiny_models, tmp_path, monkeypatch, capsys):
    import negplugins.runners.dense as dense

    encode_shard = dense._encode_shard
    calls, interrupt = [], [True]

    def interrupted_after_the_first(*args, **kwargs):
        calls.append(args[3])
        if interrupt[0] and len(calls) == 2:
            raise KeyboardInterrupt
        return encode_shard(*args, **kwargs)

    out, indexes = tmp_path / "card", tmp_path / "indexes"
    monkeypatch.setattr(dense, "_encode_shard", interrupted_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(str(tiny_models["plain"]), benchmarks="negplugins-demo", output=out, indexes=indexes,
                      baselines=False, options={"shard_num": 3})
    shards = sorted(p.name for p in (indexes / "faiss" / "negplugins-demo").glob("*.shards/shard-*"))
    assert shards == ["shard-00000-of-00003"]

    calls.clear()
    interrupt[0] = False
    capsys.readouterr()
    resumed = run_benchmark(str(tiny_models["plain"]), benchmarks="negplugins-demo", output=out, indexes=indexes,
                            baselines=False, options={"shard_num": 3})
    assert [c.split(" shard ")[1] for c in calls] == ["2/3", "3/3"]  # the finished shard is not encoded again
    err = capsys.readouterr().err
    assert "encoding the corpus in 3 shards" in err
    for shard in ("shard 2/3", "shard 3/3"):  # the corpus, the shard, the rate and the time left
        line = next(line for line in err.replace("\r", "\n").splitlines() if f"negplugins-demo {shard}" in line)
        assert "passages/s" in line and "<" in line, line

    monkeypatch.setattr(dense, "_encode_shard", encode_shard)
    whole = run_benchmark(str(tiny_models["plain"]), benchmarks="negplugins-demo", output=tmp_path / "whole",
                          indexes=tmp_path / "whole-indexes", progress=False, baselines=False,
                          options={"shard_num": 3})
    assert _run_lines(resumed.outcomes[0].run) == _run_lines(whole.outcomes[0].run)
    assert resumed.summary["model"]["encoding"]["shard_num"] == 3
