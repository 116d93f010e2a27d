"""The report card, rendered from a summary alone: baselines, confidence intervals, what "better than" counts.

The summaries here are written by hand in the shape ``run_benchmark`` writes (``tests/reportcard/
test_benchmark_suite.py`` checks that shape on real runs); the ComLQ numbers are docs/report-card.md's (model 0.5855,
Pyserini BM25 0.6557, the authors' pipeline 0.6907; the paper's eight systems from the spec).
"""

from __future__ import annotations

import re

from negplugins.reportcard.report import figure_svg, report_html, report_markdown, standing


def _baseline(name, system, value, interval, diff, p, reproduces=None, authors=False):
    return {"name": name, "system": system, "runner": "bm25" if name == "bm25" else "bm25s", "parameters": {},
            "preset": None, "reproduces": reproduces, "authors_pipeline": authors,
            "run": f"comlq/{name}.trec.gz", "sidecar": f"comlq/{name}.meta.json", "results": f"comlq/{name}.results.json",
            "overall": {"nDCG@10": value, "RR@10": 0.5, "R@100": 0.9}, "counts": {}, "subsets": {},
            "negation_split": None, "ci95": {"overall": {"nDCG@10": interval}, "subsets": {}, "negation_split": {}},
            "vs_model": {"measure": "nDCG@10", "n": 2909, "mean_diff": diff, "ci95": [diff - 0.01, diff + 0.01],
                         "p_randomization_holm": p, "permutations": 10000}}


def _summary(model_value=0.5855, baselines=None):
    entry = {"benchmark": "comlq", "title": "ComLQ", "dataset": "comlq", "protocol": "retrieval", "depth": 100,
             "status": "done", "system": "dense it", "created": "2026-01-01T00:00:00+00:00",
             "run": "comlq/dense-it.trec.gz", "sidecar": "comlq/dense-it.meta.json", "first_stage": None,
             "results": "comlq/results.json", "measures": ["nDCG@10", "RR@10", "R@100"], "primary": "nDCG@10",
             "queries": 2909, "overall": {"nDCG@10": model_value, "RR@10": 0.5285, "R@100": 0.9752}, "counts": {},
             "breakdown_field": None, "subsets": {}, "notes": [],
             "ci95": {"overall": {"nDCG@10": [model_value - 0.0105, model_value + 0.0105], "RR@10": [0.516, 0.541],
                                  "R@100": None}, "subsets": {}, "negation_split": {}},
             "baselines": baselines if baselines is not None else [
                 _baseline("bm25", "BM25 (Pyserini defaults)", 0.6557, [0.6463, 0.6651], -0.0702, 0.0002),
                 _baseline("bm25s-comlq-authors", "BM25, the authors' pipeline & co", 0.6907, [0.6813, 0.7001],
                           -0.1051, 0.0002, reproduces="BM25", authors=True)]}
    return {"format": "negplugins-benchmark-summary", "version": 2,
            "model": {"id": "it", "name": "it", "sha256": "0" * 64, "parameters": 1, "used_as": "embedding model"},
            "protocol": {"retrieval": "dense retrieval with the model", "pairs": "the model scores", "reranker": None},
            "statistics": {"intervals": "95% confidence interval of the mean (t)", "comparison": "paired test"},
            "date": "2026-01-01T00:00:00+00:00", "versions": {"negplugins": "0"}, "benchmarks": [entry]}


def test_better_than_counts_only_the_systems_computed_here():
    info = standing(_summary()["benchmarks"][0])
    # the case: 0.5855 is above all 8 of the paper's numbers (0.456 to 0.557) but below both baselines
    assert [b["name"] for b in info["computed"]] == ["bm25", "bm25s-comlq-authors"]
    assert (info["better_than"], info["significantly_better"], info["significantly_worse"]) == (0, 0, 2)
    assert len(info["reported"]) == 8 and all(r.value < 0.5855 for _, r, _ in info["reported"])
    markdown = report_markdown(_summary())
    assert "better than 0 of 2 computed here" in markdown and "significantly worse than 2" in markdown
    assert "better than 8 of 8" not in markdown and "8 systems reported, 0.456 to 0.557 (context, not counted)" in markdown
    assert "better than 0 of 2 computed here" in figure_svg(_summary())

    better = _summary(model_value=0.70)
    for baseline in better["benchmarks"][0]["baselines"]:
        baseline["vs_model"]["mean_diff"] = abs(baseline["vs_model"]["mean_diff"])
        baseline["vs_model"]["p_randomization_holm"] = 0.2
    info = standing(better["benchmarks"][0])
    assert (info["better_than"], info["significantly_better"], info["significantly_worse"]) == (2, 0, 0)
    assert "better than 2 of 2 computed here" in report_markdown(better) and "no difference significant" in \
        report_markdown(better)
    alone = _summary(baselines=[])
    assert standing(alone["benchmarks"][0])["better_than"] == 0 and "no baseline computed here" in \
        report_markdown(alone)


def test_every_computed_number_has_its_interval_and_the_method_is_stated():
    markdown = report_markdown(_summary())
    assert "| **0.5855 ± 0.0105** |" in markdown  # the model
    assert "| 0.6557 ± 0.0094 |" in markdown and "| 0.6907 ± 0.0094 |" in markdown  # the baselines
    assert "RR@10 (MRR@10) 0.5285 ± 0.0125" in markdown and "R@100 0.9752 ·" not in markdown
    assert "R@100 0.9752 |" in markdown  # no interval recorded: the value alone, never a made-up one
    assert "- Intervals: ± is the half-width of the 95% confidence interval of the mean (t)" in markdown
    assert "the model − it: -0.0702 ± 0.0100, p 0.0002 (2909 queries)" in markdown
    html = report_html(_summary())
    assert "0.5855 <span class=\"ci\">± 0.0105</span>" in html
    assert re.search(r"<line class=\"interval\" [^>]*stroke=\"#cf222e\"", html)  # the model's whisker
    assert html.count("<rect class=\"baseline\"") == 2


def test_unreproduced_paper_numbers_say_so_next_to_the_number():
    markdown = report_markdown(_summary())
    assert "| *0.505 (not reproduced here)* |" in markdown  # ComLQ's BM25 (spec: not_reproduced)
    assert "| *0.557* |" in markdown  # InteR, reproduced or not tried: no mark
    assert "BM25: not reproduced here. The paper gives no BM25 configuration." in markdown  # the spec's facts
    html = report_html(_summary())
    assert "0.505 <span class=\"unreproduced\">not reproduced here</span>" in html
    svg = figure_svg(_summary())
    assert re.search(r"<circle class=\"reported\" [^>]*fill=\"#ffffff\"[^>]*><title>BM25: 0.505 \(reported in the "
                     r"paper, not reproduced here", svg)


def test_the_same_summary_gives_the_same_bytes_and_markdown_reads_as_text():
    assert report_markdown(_summary()) == report_markdown(_summary())
    assert report_html(_summary()) == report_html(_summary()) and figure_svg(_summary()) == figure_svg(_summary())
    markdown = report_markdown(_summary())
    assert "BM25, the authors' pipeline & co" in markdown  # an apostrophe and an ampersand as they are
    assert "&amp;" not in markdown and "&#x27;" not in markdown and "&#39;" not in markdown
