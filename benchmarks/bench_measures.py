"""Time the negation measures against pytrec_eval's nDCG@10 on a synthetic ExcluIR-shaped evaluation.

Run by hand (not a test)::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_measures.py

The qrels have 3,452 queries with one positive and one negative each, drawn from a 90,406-document id
space; the run scores 1,000 documents per query (the two judged ones among them about half the time)
with random scores. Both evaluations go through ``ir_measures.calc_aggregate`` in this one process and
are timed best of 3. Targets: ours / pytrec_eval nDCG@10 <= 1.5, peak memory < 2 GB.
"""

import random
import resource
import sys
import time
import tracemalloc
import warnings

import ir_measures

from negplugins.measures import LSNC, DeltaMRR, DeltaR, NegRecall, NoPairsWarning, PairedAcc, RightRank

QUERIES = 3_452
CORPUS_SIZE = 90_406
RUN_DEPTH = 1_000
REPEATS = 3
SEED = 20240601
NEGATION_MEASURES = [DeltaMRR@10, DeltaR@1, RightRank@10, PairedAcc, NegRecall@10, LSNC@100]


def synthetic_excluir(seed):
    """Build ExcluIR-shaped qrels and a full-depth run.

    Parameters
    ----------
    seed : int
        Seed of the random generator.

    Returns
    -------
    tuple of dict
        qrels (query_id to doc_id to relevance) and run (query_id to doc_id to score).
    """
    rng = random.Random(seed)
    doc_ids = [f'doc{number}' for number in range(CORPUS_SIZE)]
    qrels, run = {}, {}
    for query_number in range(QUERIES):
        query_id = f'q{query_number}'
        positive, negative = rng.sample(doc_ids, 2)
        qrels[query_id] = {positive: 1, negative: -1}
        retrieved = rng.sample(doc_ids, RUN_DEPTH)
        for slot, judged in enumerate((positive, negative)):
            if rng.random() < 0.5 and judged not in retrieved:
                retrieved[slot] = judged
        run[query_id] = {doc_id: rng.random() for doc_id in retrieved}
    return qrels, run


def best_time(measures, qrels, run):
    """Return the best of ``REPEATS`` wall-clock times of ``calc_aggregate`` and its last result."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = ir_measures.calc_aggregate(measures, qrels, run)
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    """Build the data, time both evaluations and print the figures.

    Memory is traced while the data are built and each evaluation runs once; the timed runs come
    after, untraced, since tracing slows Python code far more than pytrec_eval's C++.
    """
    warnings.simplefilter('ignore', NoPairsWarning)  # ExcluIR has no NevIR pairs: PairedAcc is timed, has no value
    tracemalloc.start()
    qrels, run = synthetic_excluir(SEED)
    ir_measures.calc_aggregate(NEGATION_MEASURES, qrels, run)
    ir_measures.calc_aggregate([ir_measures.nDCG@10], qrels, run)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ours, our_values = best_time(NEGATION_MEASURES, qrels, run)
    reference, reference_values = best_time([ir_measures.nDCG@10], qrels, run)
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == 'darwin' else 1024)
    print(f'queries {QUERIES}, run entries {sum(map(len, run.values()))}, best of {REPEATS}')
    for measure, value in {**our_values, **reference_values}.items():
        print(f'  {measure}: {value}')
    print(f'negation measures (all six): {ours:.3f} s')
    print(f'pytrec_eval nDCG@10:         {reference:.3f} s')
    print(f'ratio ours / nDCG@10:        {ours / reference:.2f} (target <= 1.5)')
    print(f'peak memory: tracemalloc {peak / 2**20:.0f} MiB, ru_maxrss {max_rss / 2**20:.0f} MiB (target < 2048)')


if __name__ == '__main__':
    main()
