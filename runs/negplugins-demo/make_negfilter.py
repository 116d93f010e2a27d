"""Make the hand-made ("external") demo run ``bm25-negfilter.trec`` from ``bm25.trec``.

A deliberately simple negation-aware reranker: words after an exclusion cue in the query ("not",
"other than", "excluding", "except", "without", "never") are taken as excluded; a document's BM25
score is lowered by 5 per excluded word it contains, and the top 100 are re-ranked.

    python runs/negplugins-demo/make_negfilter.py
    negplugins leaderboard sidecar runs/negplugins-demo/bm25-negfilter.trec --dataset negplugins-demo \
        --system "BM25 + exclusion-cue penalty (hand-made)" --tag negfilter \
        --command "python runs/negplugins-demo/make_negfilter.py"
"""

import re
from pathlib import Path

import ir_datasets

import ir_datasets_ext  # noqa: F401  (registers the datasets)
from negplugins.io.trec import read_run, ranked, write_run

CUES = re.compile(r"\b(?:but not|not|other than|excluding|except|without|never)\b(.*)", re.IGNORECASE)
STOP = {"a", "an", "the", "in", "of", "on", "for", "to", "and", "or", "by", "was", "is", "that", "which", "did",
        "it", "its", "as", "any", "one", "at", "with"}
HERE = Path(__file__).parent


def words(text):
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP and len(w) > 2}


def main():
    dataset = ir_datasets.load("negplugins-demo")
    docs = {d.doc_id: words(d.text) for d in dataset.docs_iter()}
    queries = {q.query_id: q.text for q in dataset.queries_iter()}
    run = read_run(HERE / "bm25.trec")
    results = []
    for query_id in sorted(run):
        match = CUES.search(queries.get(query_id, ""))
        excluded = words(match.group(1)) if match else set()
        scores = {d: s - 5 * len(excluded & docs.get(d, set())) for d, s in run[query_id].items()}
        results.append((query_id, ranked(scores)[:100]))
    print(write_run(HERE / "bm25-negfilter.trec", results, "negfilter"), "lines")


if __name__ == "__main__":
    main()
