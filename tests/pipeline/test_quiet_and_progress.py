"""Quiet by default, informative when long: no Lucene or ir_datasets INFO line without ``-v``; progress bars."""

import os
import subprocess
import sys

import pytest

from negplugins.runners.bm25 import bm25_search

DEMO = "negplugins-demo"
LUCENE_INFO = "INFO: Using MemorySegmentIndexInput"


def negplugins(*args, **env):
    return subprocess.run([sys.executable, "-m", "negplugins", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)


@pytest.mark.java
@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_search_bm25_says_nothing_on_stderr_without_v(demo_lucene_index, tmp_path, verbose):
    run = tmp_path / "bm25.trec"
    result = negplugins(*(["-v"] if verbose else []), "search", "bm25", DEMO, "--index", str(demo_lucene_index),
                        "--output", str(run))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote 105 lines for 21 queries to {run}\n"
    if verbose:  # Lucene's line (java.util.logging, printed by the JVM itself) is there with -v
        assert LUCENE_INFO in result.stderr
    else:  # nor a progress bar: stderr is a pipe here
        assert result.stderr == ""


@pytest.mark.java
def test_search_bm25_progress_bar(demo_lucene_index, tmp_path, capsys):
    bm25_search(DEMO, tmp_path / "a.trec", index=demo_lucene_index, batch_size=5, progress=True)
    err = capsys.readouterr().err
    assert "BM25 negplugins-demo" in err and "/21 " in err  # a bar over the 21 queries
    bm25_search(DEMO, tmp_path / "b.trec", index=demo_lucene_index)  # default: stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    assert (tmp_path / "a.trec").read_bytes() == (tmp_path / "b.trec").read_bytes()


@pytest.mark.realdata
def test_reading_comlq_prints_nothing(comlq_mirror, tmp_path):
    """No ``[INFO] opening zip file`` (ir_datasets' ZipExtract) in the suite's commands, with -v or not, nor in a stock
    tool that reads ComLQ through the import hook."""
    quiet = negplugins("topics", "comlq", "-o", str(tmp_path / "q.tsv"))
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    verbose = negplugins("-v", "topics", "comlq", "-o", str(tmp_path / "v.tsv"))
    assert verbose.returncode == 0 and "zip" not in verbose.stderr, verbose.stderr
    assert (tmp_path / "q.tsv").read_bytes() == (tmp_path / "v.tsv").read_bytes()
    run = tmp_path / "run.trec"
    run.write_text("0 Q0 10000 1 1.0 t\n")
    stock = subprocess.run([sys.executable, "-m", "ir_measures", "comlq", str(run), "nDCG@10"], capture_output=True,
                           text=True, timeout=300)
    assert stock.returncode == 0 and stock.stderr == "", stock.stderr
    assert stock.stdout.startswith("nDCG@10\t")


def test_leaderboard_build_progress_bar(tmp_path, capsys):
    from negplugins.io.sidecars import write_metadata
    from negplugins.leaderboard import build

    folder = tmp_path / "runs" / DEMO
    folder.mkdir(parents=True)
    for name, ranking in (("bm25", ["d02", "d01"]), ("other", ["d01", "d02"])):
        run = folder / f"{name}.trec"
        run.write_text("".join(f"q01 Q0 {doc} {rank} {10 - rank} t\n" for rank, doc in enumerate(ranking, 1)))
        write_metadata(run, dataset=DEMO, runner="external", system=name, tag="t", parameters={}, command="x")
    capsys.readouterr()
    build(tmp_path / "runs", tmp_path / "quiet")  # the Python API is silent unless asked
    assert capsys.readouterr().err == ""
    build(tmp_path / "runs", tmp_path / "shown", progress=True)
    err = capsys.readouterr().err
    assert "negplugins-demo: validating other" in err and "/6 " in err  # 2 runs validated, scored, diagnosed
