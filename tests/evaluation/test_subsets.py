"""A subset scored or reranked on a run of its whole benchmark (ComLQ structures, real release)."""

import gzip
from pathlib import Path

import pytest

from negplugins.errors import UserError
from negplugins.evaluation.scoring import evaluate

FULL_RUN = Path(__file__).resolve().parents[2] / "runs" / "comlq" / "bm25.trec.gz"


@pytest.mark.realdata
def test_subset_scores_its_queries_of_a_full_run(comlq_mirror):
    result = evaluate("comlq/pni", FULL_RUN)
    assert result.queries == 122 and result.counts["nDCG@10"] == 122
    assert any("2787 of the run's 2909 queries are queries of comlq outside comlq/pni" in n for n in result.notes)
    # the subset's value is the structure's row of the whole benchmark's evaluation
    whole = evaluate("comlq", FULL_RUN)
    assert result.overall["nDCG@10"] == pytest.approx(whole.subsets["pni"]["nDCG@10"], abs=1e-12)


@pytest.mark.realdata
def test_query_unknown_to_the_whole_benchmark_is_still_an_error(comlq_mirror, tmp_path):
    lines = gzip.open(FULL_RUN, "rt", encoding="utf-8").read().splitlines()[:200]
    run = tmp_path / "run.trec"
    run.write_text("\n".join(lines + ["no-such-query Q0 10000 1 1.0 t"]) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="query id 'no-such-query' is not a query of comlq/pni"):
        evaluate("comlq/pni", run)


@pytest.mark.realdata
def test_rerank_a_subset_of_a_full_run(comlq_mirror, tmp_path, tiny_cross_encoder):
    """The subject is the subset, not the model: the tiny cross-encoder stands in for one (the rerankers' scores
    are the runner tests' subject)."""
    from negplugins.runners.rerank import rerank

    info = rerank("comlq/pni", tmp_path / "pni.trec", run=FULL_RUN, model=str(tiny_cross_encoder),
                  reranker="cross-encoder", top_k=2)
    assert info["queries"] == 122 and info["outside_subset"] == 2787 and info["lines"] == 244
    assert "only the 122 queries of comlq/pni are reranked" in info["notes"][0]
    assert evaluate("comlq/pni", tmp_path / "pni.trec").counts["nDCG@10"] == 122
