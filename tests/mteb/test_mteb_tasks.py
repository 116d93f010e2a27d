"""negplugins.mteb.get_tasks: the benchmarks as MTEB tasks, run by MTEB's own evaluator.

The reference numbers are the suite's own: ``negplugins benchmark`` with the same packaged all-MiniLM-L6-v2 on the
same data (the embedded demo, and the NevIR and BoolQuestions fixtures in their real formats). The demo's are also
the report card's (docs/report-card.md: nDCG@10 0.7908, RR@10 0.7222, RightRank@10 0.5000, PairedAcc 0.2500). MTEB encodes with
sentence-transformers and ranks by its own cosine similarity; the suite encodes with its own encoder and ranks
with faiss: the scores MTEB computes itself (nDCG@10, ...) must agree within 0.001, and the negation measures,
computed by the suite on MTEB's retrieved lists, must equal the suite's on its own run wherever the two rankings
agree (they do on these data).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dataset_fixtures as fx
import pytest

from negplugins import datasets
from negplugins.mteb import get_tasks, naming  # negplugins.mteb.tasks imports MTEB (seconds): in the tests

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    """The suite's benchmark run and MTEB's evaluation of the same model on NevIR, BoolQuestions and the demo."""
    import mteb
    from sentence_transformers import SentenceTransformer

    from negplugins.reportcard import run_benchmark
    from negplugins.runners.model_refs import default_model_path

    root = tmp_path_factory.mktemp("mteb_tasks")
    mirror = root / "mirror"
    mirror.mkdir()
    fx.write_nevir(mirror)
    fx.write_boolquestions(mirror)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_EXT_MIRROR", str(mirror))
        patch.setenv("IR_DATASETS_HOME", str(root / "ir_datasets_home"))
        patch.chdir(root)
        suite = run_benchmark(None, benchmarks="nevir,boolquestions,negplugins-demo", output=root / "out",
                              indexes=root / "indexes", progress=False)
        tasks = get_tasks(["NevIR", "BoolQuestions", "NegpluginsDemo"])
        model = SentenceTransformer(str(default_model_path()))
        results = mteb.evaluate(model, tasks=tasks, cache=None, show_progress_bar=False)
    scores = {(r.task_name, entry["hf_subset"]): entry for r in results.task_results
              for split in r.scores.values() for entry in split}
    return {"suite": {o.dataset: o.evaluation for o in suite.done}, "mteb": scores, "results": results}


def test_default_tasks_are_the_benchmarks_but_the_demo_and_names_are_checked():
    from negplugins.mteb.tasks import UnknownTaskError, task_names

    assert [t.metadata.name for t in get_tasks()] == ["ComLQ", "ExcluIR", "NevIR", "BoolQuestions",
                                                      "DuReader-retrieval", "NegConstraint"]
    assert [t.metadata.name for t in get_tasks(["comlq", "NegpluginsDemo"])] == ["ComLQ", "NegpluginsDemo"]
    assert type(get_tasks(["ComLQ"])[0]) is type(get_tasks(["comlq"])[0])  # one class per benchmark
    with pytest.raises(UnknownTaskError, match="unknown task 'DuRetrieval'; negplugins' MTEB tasks: ComLQ, "):
        get_tasks(["DuRetrieval"])
    with pytest.raises(KeyError):  # as mteb.get_task
        get_tasks(["nope"])
    assert set(task_names().values()) == {spec.name for spec in datasets.benchmarks()}


def test_metadata_is_validated_by_mteb_and_comes_from_the_specs():
    from mteb.abstasks import AbsTaskRetrieval
    from mteb.abstasks.task_metadata import TaskMetadata

    from negplugins.mteb.tasks import task_names

    for task in get_tasks([*task_names()]):
        meta = task.metadata
        spec = datasets.benchmark_of(task.benchmark)
        assert isinstance(task, AbsTaskRetrieval)
        assert TaskMetadata.model_validate(meta.model_dump()) == meta  # MTEB's own validation accepts it
        assert meta.main_score == naming.main_score(spec)
        assert meta.license == naming.license_of(spec) and meta.revision == naming.dataset_revision(spec)
        assert meta.bcp47_codes == naming.language_codes(spec)
        if meta.name != "NevIR":  # NevIR keeps MTEB's own reference and citation (the next test)
            assert meta.reference == (spec.paper.url or None)
            assert meta.bibtex_citation == (spec.citation() or "")
    comlq = get_tasks(["ComLQ"])[0].metadata
    assert (comlq.main_score, comlq.eval_splits, comlq.eval_langs, comlq.type) == \
        ("ndcg_at_10", ["test"], ["eng-Latn"], "Retrieval")
    assert comlq.reference == "https://arxiv.org/abs/2511.12004"
    assert comlq.dataset == {"path": "https://github.com/xgl-git/ComLQR-main",
                             "revision": "93d321997cad1306d64f2587a3ffba832dda87a7"}
    bq = get_tasks(["BoolQuestions"])[0].metadata
    assert bq.eval_langs == {"msmarco": ["eng-Latn"], "nq": ["eng-Latn"]} and bq.license == "cc-by-sa-3.0"


def test_nevir_reuses_mteb_s_class_and_names_the_data_it_reads():
    import mteb

    ours = get_tasks(["NevIR"])[0]
    stock = mteb.get_task("NevIR")
    assert isinstance(ours, type(stock))  # MTEB's paired_accuracy and metadata
    assert ours.metadata.model_dump(exclude={"dataset", "description"}) == \
        stock.metadata.model_dump(exclude={"dataset", "description"})
    assert ours.metadata.dataset == {"path": "https://huggingface.co/datasets/orionweller/NevIR",
                                     "revision": "6263585072ce3b435ed09658613553fbf4e74184"}


def test_mteb_s_own_tasks_are_untouched():
    """Never change the host: MTEB's registry and its NevIR task are as stock."""
    import mteb

    get_tasks()
    stock = mteb.get_task("NevIR")
    assert type(stock).__module__ == "mteb.tasks.reranking.eng.nev_ir"
    assert stock.metadata.dataset == {"path": "orionweller/NevIR-mteb",
                                      "revision": "eab99575c01c6a8e39f8d2adc6e3c3adcfe84413"}
    for name in ("ComLQ", "ExcluIR", "BoolQuestions", "NegpluginsDemo"):
        with pytest.raises(KeyError):
            mteb.get_task(name)


def test_mteb_is_not_imported_by_negplugins_nor_by_the_hook():
    code = ("import sys, negplugins, negplugins.mteb, negplugins.mteb.results, ir_measures, ir_datasets; "
            "import negplugins.reportcard; assert 'mteb' not in sys.modules, 'mteb imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PROJECT_ROOT)


def test_mteb_get_model_cannot_load_a_folder_so_the_docs_pass_a_sentence_transformer():
    """mteb 2.26.24's get_model looks a folder up as a Hub id and has no loader for it (mteb PR #4756 was declined)."""
    import mteb

    from negplugins.runners.model_refs import default_model_path

    with pytest.warns(UserWarning), pytest.raises(NotImplementedError):
        mteb.get_model(str(default_model_path()))


def test_the_demo_with_mteb_s_evaluator_gives_the_suite_s_numbers(fixtures):
    suite = fixtures["suite"]["negplugins-demo"]["overall"]
    mteb_scores = fixtures["mteb"][("NegpluginsDemo", "default")]
    assert mteb_scores["main_score"] == mteb_scores["ndcg_at_10"]
    assert mteb_scores["ndcg_at_10"] == pytest.approx(suite["nDCG@10"], abs=0.001)
    assert round(mteb_scores["ndcg_at_10"], 4) == 0.7908  # the README's
    assert mteb_scores["mrr_at_10"] == pytest.approx(suite["RR@10"], abs=0.001)
    # the negation measures, computed by the suite on MTEB's retrieved lists
    for measure in ("RightRank@10", "DeltaMRR@10", "PairedAcc", "NegRecall@10"):
        assert mteb_scores[naming.score_key(measure)] == pytest.approx(suite[measure], abs=1e-9), measure
    assert (mteb_scores["right_rank_at_10"], mteb_scores["paired_accuracy"]) == (0.5, 0.25)


def test_nevir_pairs_with_mteb_s_evaluator(fixtures):
    """MTEB scores each query's own two candidates (top_ranked); its paired_accuracy is MTEB's own."""
    suite = fixtures["suite"]["nevir/test"]["overall"]
    scores = fixtures["mteb"][("NevIR", "default")]
    assert scores["main_score"] == scores["paired_accuracy"] == pytest.approx(suite["PairedAcc"])
    assert scores["recall_at_1000"] == 1.0  # two candidates per query, both ranked


def test_boolquestions_corpora_are_two_subsets(fixtures):
    for corpus in ("msmarco", "nq"):
        suite = fixtures["suite"][f"boolquestions/{corpus}"]["overall"]
        scores = fixtures["mteb"][("BoolQuestions", corpus)]
        assert scores["main_score"] == scores["pos_rr_at_10"] == pytest.approx(suite["PosRR@10"], abs=1e-9)
        key = naming.score_key("NegRecall(conflict=2)@10")
        assert scores[key] == pytest.approx(suite["NegRecall(conflict=2)@10"], abs=1e-9)
        assert scores["languages"] == ["eng-Latn"]
