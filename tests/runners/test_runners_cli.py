"""``negplugins search dense`` / ``negplugins search rerank`` on the command line; bad input exits 2 with one line."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from negplugins.cli import build_parser, main
from negplugins.io.sidecars import read_metadata

DEMO = "negplugins-demo"


def _warm_docstore():
    """Build the demo docstore first: ir_datasets shows a (transient) progress bar while building it."""
    import ir_datasets

    ir_datasets.load(DEMO).docs_store().get("d01")


def _first_stage(path):
    path.write_text("".join(f"q01 Q0 d{n:02d} {n} {50 - n}.0 x\n" for n in range(1, 11)))
    return path


def test_dense_and_rerank_commands(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["search", "dense", DEMO, "--output", "runs/dense.trec", "--hits", "5", "--batch-size", "8",
                 "--shard-num", "2", "--shard-id", "1", "--no-progress"]) == 0
    assert "still missing shard(s) 0" in capsys.readouterr().out and not Path("runs/dense.trec").exists()
    assert main(["search", "dense", DEMO, "--output", "runs/dense.trec", "--hits", "5", "--batch-size", "8",
                 "--shard-num", "2", "--shard-id", "0", "--no-progress"]) == 0
    assert "wrote 105 lines for 21 queries" in capsys.readouterr().out
    meta = read_metadata("runs/dense.trec")
    assert meta["runner"] == "dense" and meta["command"]
    assert meta["parameters"]["shard_num"] == 2
    assert main(["search", "rerank", DEMO, "--run", "runs/dense.trec", "--model", "all-MiniLM-L6-v2",
                 "--top-k", "3", "--output", "runs/rerank.trec.gz"]) == 0
    assert "reranked 63 pairs of 21 queries with bi-encoder" in capsys.readouterr().out
    assert read_metadata("runs/rerank.trec.gz")["first_stage"]["run"] == "runs/dense.trec"


@pytest.mark.parametrize("argv, message", [
    (["search", "dense", DEMO, "-o", "out.trec", "--model", "nobody/no-model"],
     "negplugins: error: unknown model 'nobody/no-model': not a local folder and not in the Hugging Face cache"),
    pytest.param(["search", "beir-dense", DEMO, "-o", "out.trec", "--model", "nobody/no-model"],
                 "negplugins: error: unknown model 'nobody/no-model': not a local folder and not in the Hugging Face "
                 "cache", marks=pytest.mark.skipif(importlib.util.find_spec("beir") is None, reason="needs beir")),
    (["search", "dense", DEMO, "-o", "out.trec", "--index", "no-index"],
     "negplugins: error: no-index: dense index folder not found"),
    (["search", "rerank", DEMO, "--run", "bad.trec", "--model", "all-MiniLM-L6-v2", "-o", "out.trec"],
     "negplugins: error: bad.trec: document 'd99' is not in the documents of negplugins-demo"),
    (["search", "rerank", DEMO, "--run", "empty.trec", "--model", "all-MiniLM-L6-v2", "-o", "out.trec"],
     "negplugins: error: empty.trec: the run is empty"),
    (["search", "rerank", DEMO, "--candidates", "--model", "./no-model", "-o", "out.trec"],
     "negplugins: error: negplugins-demo: the dataset has no scoreddocs"),
])
def test_bad_input_in_process(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    Path("bad.trec").write_text("q01 Q0 d01 1 2.0 x\nq01 Q0 d99 2 1.0 x\n")
    Path("empty.trec").write_text("\n")
    _warm_docstore()
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not Path("out.trec").exists() and not Path("indexes").exists()


@pytest.mark.parametrize("argv, message", [
    (["search", "dense", DEMO, "-o", "out.trec", "--model", "nobody/no-model"], "unknown model 'nobody/no-model'"),
    (["search", "rerank", DEMO, "--run", "bad.trec", "--model", "all-MiniLM-L6-v2", "-o", "out.trec"],
     "bad.trec: document 'd99' is not in the documents of negplugins-demo"),
])
def test_bad_input_subprocess(tmp_path, argv, message):
    (tmp_path / "bad.trec").write_text("q01 Q0 d01 1 2.0 x\nq01 Q0 d99 2 1.0 x\n")
    _warm_docstore()
    done = subprocess.run([sys.executable, "-m", "negplugins", *argv], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ), timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines == [f"negplugins: error: {message}" + lines[0].split(message, 1)[1]] and "Traceback" not in done.stderr
    assert not (tmp_path / "out.trec").exists()


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["search", "rerank", DEMO, "--model", "m", "-o", "x.trec"])  # neither --run nor --candidates
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit):
        main(["search", "rerank", DEMO, "--run", "r", "--candidates", "--model", "m", "-o", "x.trec"])
    with pytest.raises(SystemExit):
        main(["search", "rerank", DEMO, "--run", "r", "--model", "m", "--reranker", "splade", "-o", "x.trec"])
    assert "invalid choice: 'splade'" in capsys.readouterr().err


def _help(argv) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return " ".join(out.getvalue().split())  # argparse wraps lines


def test_one_name_and_one_default_per_option():
    """``--model`` in every runner and one ``--hits`` default, Pyserini's 1000, on the command line and in the Python
    API."""
    import inspect

    from negplugins.runners.beir import beir_dense_search
    from negplugins.runners.bm25 import bm25_search
    from negplugins.runners.dense import dense_search
    from negplugins.runners.dense_options import SearchOptions
    from negplugins.runners.sparse import splade_search

    parser = build_parser()
    for runner in ("dense", "splade", "rerank", "beir-dense", "beir-rerank"):
        assert "--model" in _help(["search", runner]) and "--encoder" not in _help(["search", runner])
    assert parser.parse_args(["search", "dense", DEMO, "-o", "x", "--model", "m"]).model == "m"
    for runner, api in (("bm25", bm25_search), ("dense", dense_search), ("splade", splade_search),
                        ("beir-dense", beir_dense_search)):
        assert parser.parse_args(["search", runner, DEMO, "-o", "x"]).hits == 1000
        hits = inspect.signature(api).parameters.get("hits")  # dense_search: a field of its SearchOptions
        assert (hits.default if hits is not None else SearchOptions().hits) == 1000
        assert "default: 1000, as Pyserini" in _help(["search", runner])
