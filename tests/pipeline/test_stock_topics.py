"""Stock Pyserini's ``--topics`` takes the suite's dataset ids as topic names (``--topics comlq``), and its
``trec_eval`` as qrels names (``python -m pyserini.eval.trec_eval -m ndcg_cut.10 comlq run.trec``)."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from negplugins._compat import pyserini_topics, upstream
from negplugins._compat.upstream import UpstreamChangedWarning
from negplugins.cli import main
from negplugins.io.topics import is_topic_name, write_topics

pytestmark = pytest.mark.java

DEMO = "negplugins-demo"


@pytest.fixture(scope="module")
def pyserini_search():
    """``pyserini.search`` imported in this process: the import hook has wrapped its ``get_topics``."""
    from negplugins._compat import jvm

    jvm.configure()
    import pyserini.search

    pyserini_topics.install()  # what the hook does; a no-op when it already has
    return pyserini.search


def _stock(command, index_dir, output, **env):
    result = subprocess.run([*command, "--index", str(index_dir), "--topics", DEMO, "--bm25", "--output", str(output)],
                            capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    assert result.returncode == 0, result.stderr
    return output.read_bytes()


@pytest.mark.parametrize("command, env", [
    ([sys.executable, "-m", "pyserini.search.lucene"], {}),  # the import hook
    ([str(Path(sys.executable).parent / "negplugins-pyserini"), "search.lucene"], {"NEGPLUGINS_AUTOLOAD": "0"}),
], ids=["python-m-pyserini", "negplugins-pyserini-hook-off"])
def test_stock_pyserini_with_a_topic_name_writes_the_suites_run(demo_lucene_index, tmp_path, command, env):
    if not Path(command[0]).exists():
        pytest.skip(f"{command[0]} is not installed")
    stock = _stock(command, demo_lucene_index, tmp_path / "stock.trec", **env)
    ours = tmp_path / "ours.trec"
    assert main(["search", "bm25", DEMO, "--index", str(demo_lucene_index), "--output", str(ours)]) == 0
    assert ours.read_bytes() == stock
    # 21 demo queries, each with at least one hit; the suite's run is checked against stock Pyserini reading the
    # topic file in test_lucene_bm25.py, so the name and the file give the same bytes
    assert len({line.split()[0] for line in stock.decode().splitlines()}) == 21


def test_a_topic_name_gives_what_pyserini_reads_from_the_topic_file(pyserini_search, tmp_path):
    from pyserini.query_iterator import DefaultQueryIterator

    path, count = write_topics(DEMO, tmp_path / "demo.tsv")
    from_file = DefaultQueryIterator.from_topics(str(path))
    from_name = DefaultQueryIterator.from_topics(DEMO)
    assert from_name.topics == from_file.topics and from_name.order == from_file.order
    assert len(from_name) == count == 21
    assert from_name.topics["q02"] == {"title": "Structures designed by Gustave Eiffel, excluding the Statue of "
                                                "Liberty"}


@pytest.mark.realdata
def test_comlq_names_give_what_pyserini_reads_from_the_topic_files(pyserini_search, comlq_mirror, tmp_path):
    from pyserini.query_iterator import DefaultQueryIterator

    for dataset_id, expected in (("comlq", 2909), ("comlq/negation", 984)):
        path, count = write_topics(dataset_id, tmp_path / "topics.tsv", force=True)
        from_file = DefaultQueryIterator.from_topics(str(path))
        from_name = DefaultQueryIterator.from_topics(dataset_id)
        assert count == expected == len(from_name)
        # Pyserini makes integer ids of ComLQ's "0", "1", ... and orders them numerically
        assert from_name.topics == from_file.topics and from_name.order == from_file.order
        assert all(isinstance(query_id, int) for query_id in from_name.order)


def test_other_names_go_to_pyserini_unchanged(pyserini_search):
    assert is_topic_name("comlq/negation") and is_topic_name(DEMO) and not is_topic_name("msmarco-passage-dev-subset")
    with pytest.raises(ValueError, match="^Topic no-such-topics Not Found$"):  # Pyserini's own message
        pyserini_search.get_topics("no-such-topics")
    assert pyserini_search.get_topics._negplugins_original is pyserini_search._base.get_topics._negplugins_original


def test_a_dataset_without_queries_names_those_with(pyserini_search):
    with pytest.raises(ValueError, match="dataset 'excluir' has no queries: use excluir/test"):
        pyserini_search.get_topics("excluir")


def test_a_moved_get_topics_is_named_and_the_rest_is_wrapped(pyserini_search, monkeypatch):
    import pyserini.query_iterator

    base = pyserini_search._base
    for module in (base, pyserini_search, pyserini.query_iterator):  # put back what install() replaces
        monkeypatch.setattr(module, "get_topics", module.get_topics)
    for module in (base, pyserini_search):
        monkeypatch.setattr(module, "get_qrels_file", module.get_qrels_file)
    monkeypatch.setattr(upstream, "_checked", {})
    monkeypatch.delattr(base, "get_topics")
    monkeypatch.setattr(pyserini_search, "get_topics", pyserini_search.get_topics._negplugins_original)
    with pytest.warns(UpstreamChangedWarning, match=r"pyserini \S+: pyserini\.search\._base\.get_topics is not where "
                                                    r".*--topics does not know the suite's dataset ids"):
        wrapped = pyserini_topics.install()
    assert "pyserini.search._base.get_topics" not in wrapped and "pyserini.search.get_topics" in wrapped
    assert "pyserini.search._base.get_qrels_file" in wrapped  # the other function is wrapped as before
    assert pyserini_search.get_topics(DEMO)["q01"]["title"].startswith("Which programming language")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UpstreamChangedWarning)
        assert pyserini_topics.install() == wrapped  # checked once per process, wrapped once


# -- qrels names: stock pyserini.eval.trec_eval -------------------------------------------------------------------

def _stock_trec_eval(*args, **env):
    result = subprocess.run([sys.executable, "-m", "pyserini.eval.trec_eval", "-c", *args], capture_output=True,
                            text=True, env={**os.environ, **env}, timeout=300)
    assert result.returncode == 0, result.stderr
    values = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "all":
            values[fields[0]] = fields[2]
    return values, result.stderr


def test_stock_trec_eval_takes_a_dataset_id_as_qrels(demo_lucene_index, tmp_path, isolated_ir_datasets_home):
    from negplugins.evaluation.scoring import evaluate

    run = tmp_path / "bm25.trec"
    assert main(["search", "bm25", DEMO, "--index", str(demo_lucene_index), "--output", str(run)]) == 0
    stock, stderr = _stock_trec_eval("-m", "ndcg_cut.10", "-m", "recall.100", DEMO, str(run))
    ours = evaluate(DEMO, run, measures=["nDCG@10", "R@100"]).overall
    assert stock == {"ndcg_cut_10": f"{ours['nDCG@10']:.4f}", "recall_100": f"{ours['R@100']:.4f}"}
    assert "INFO" not in stderr  # nothing of the suite's on the stock tool's stderr
    # the qrels file sits in the ir_datasets cache, with the dataset's judgements as they are (-1 included)
    qrels = isolated_ir_datasets_home / DEMO / "trec-qrels" / f"{DEMO}.qrels"
    from negplugins import datasets

    judged = datasets.qrels_dict(datasets.load(DEMO))
    lines = qrels.read_text().splitlines()
    assert len(lines) == sum(len(docs) for docs in judged.values()) and any(line.endswith(" -1") for line in lines)
    assert all(judged[q][d] == int(r) and zero == "0" for q, zero, d, r in map(str.split, lines))


def test_qrels_file_is_rewritten_only_when_the_judgements_change(pyserini_search, isolated_ir_datasets_home):
    first = Path(pyserini_search.get_qrels_file(DEMO))
    before = first.stat()
    again = Path(pyserini_search.get_qrels_file(DEMO))
    assert again == first and os.path.samestat(before, again.stat())  # left untouched
    first.write_text("stale 0 d01 1\n")
    fixed = Path(pyserini_search.get_qrels_file(DEMO))
    assert fixed == first and not fixed.read_text().startswith("stale")
    assert pyserini_search.get_qrels(DEMO)["q01"]  # Pyserini's reader of the same file
    assert sorted(p.name for p in fixed.parent.iterdir()) == [f"{DEMO}.qrels"]  # no temporary file left


def test_other_qrels_names_go_to_pyserini_unchanged(pyserini_search):
    with pytest.raises(FileNotFoundError, match="^no qrels file for no-such-qrels$"):  # Pyserini's own message
        pyserini_search.get_qrels_file("no-such-qrels")
    with pytest.raises(ValueError, match="dataset 'excluir' has no qrels: use excluir/test"):
        pyserini_search.get_qrels_file("excluir")


@pytest.mark.realdata
def test_stock_trec_eval_on_comlq_gives_the_suites_numbers(comlq_mirror, isolated_ir_datasets_home, tmp_path):
    """The issue's case: nDCG@10 of the committed BM25 run, 0.6557 in negplugins evaluate and in stock trec_eval."""
    # isolated home: stock trec_eval writes the qrels file it reads into the dataset home (comlq/trec-qrels/)
    import gzip

    from negplugins.evaluation.scoring import evaluate

    committed = Path(__file__).resolve().parents[2] / "runs" / "comlq" / "bm25.trec.gz"
    run = tmp_path / "bm25.trec"  # trec_eval reads plain text
    run.write_bytes(gzip.decompress(committed.read_bytes()))
    stock, stderr = _stock_trec_eval("-m", "ndcg_cut.10", "-m", "recall.100", "comlq", str(run))
    ours = evaluate("comlq", committed, measures=["nDCG@10", "R@100"]).overall
    assert stock == {"ndcg_cut_10": "0.6557", "recall_100": "0.9730"}
    assert stock == {"ndcg_cut_10": f"{ours['nDCG@10']:.4f}", "recall_100": f"{ours['R@100']:.4f}"}
    assert stderr == ""  # no "[INFO] opening zip file" through the import hook
