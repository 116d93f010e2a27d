"""NevIR query pairs, recovered from the qrels alone (docs/measures.md, PairedAcc).

A candidate judges exactly one positive and one negative; two candidates pair when their documents are mirrored.
"""

import math
from collections import defaultdict
from typing import NamedTuple


class PairMember(NamedTuple):
    """One query of a pair, with its positive and its negative document."""

    query_id: str
    positive: str
    negative: str


class Pairing(NamedTuple):
    """The complete pairs, and the pair-shaped queries whose mirrored partner is missing or not unique (sorted)."""

    pairs: list
    incomplete: list
    ambiguous: list


def find_pairs(qrels) -> Pairing:
    """The complete NevIR pairs of ``{query_id: {doc_id: relevance}}``, and the candidates left without one."""
    candidates = defaultdict(list)
    for query_id, judged in qrels.items():
        if len(judged) != 2:
            continue
        positives = [doc_id for doc_id, relevance in judged.items() if relevance > 0]
        negatives = [doc_id for doc_id, relevance in judged.items() if relevance < 0]
        if len(positives) == 1 and len(negatives) == 1:
            candidates[positives[0], negatives[0]].append(query_id)
    pairs, incomplete, ambiguous = [], [], []
    for (positive, negative), query_ids in candidates.items():
        mirrored = candidates.get((negative, positive), [])
        if not mirrored:
            incomplete.extend(query_ids)
        elif len(query_ids) > 1 or len(mirrored) > 1:
            ambiguous.extend(query_ids)
        elif query_ids[0] < mirrored[0]:
            pairs.append((PairMember(query_ids[0], positive, negative),
                          PairMember(mirrored[0], negative, positive)))
    return Pairing(sorted(pairs), sorted(incomplete), sorted(ambiguous))


def query_correct(member, run):
    """Whether a query scores its positive strictly above its negative (a missing document scores -inf)."""
    scored_docs = run.get(member.query_id, {})
    return scored_docs.get(member.positive, -math.inf) > scored_docs.get(member.negative, -math.inf)
