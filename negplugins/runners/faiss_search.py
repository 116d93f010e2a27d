"""Exact and approximate search of a faiss index folder (one index, or sharded), in the order of the run.

Ranking: documents by decreasing score as written in the run (inner product = cosine similarity,
six decimals), equal scores by document id ascending (as :func:`negplugins.io.trec.ranked` and Anserini);
the search asks faiss for more than ``hits`` documents whenever a tie crosses the cut, so the run does
not depend on faiss's order among equal scores. For a flat index the scores written are computed in
float64 from the stored float32 vectors, the same way for every document (faiss's own float32 scores
differ in the last bit with a document's position in the index, which a sharded index changes): faiss
only proposes the candidates. The same inputs give byte-identical runs.

A sharded index is searched one shard at a time: each shard's top ``hits`` (ties across its cut
resolved) merged into the overall top ``hits``, exactly the ranking of the one merged index.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
from pathlib import Path

import numpy as np

from ..errors import UserError
from .common import read_manifest
from .dense_index_format import OpenDenseIndex, load_dense_index, open_dense_index, shard_folders

#: faiss search parameters that count something (probes, candidates, a factor): 0 or less makes faiss return
#: one hit per query, silently (``efSearch=0`` on HNSW32: 1 hit of the 5 asked).
POSITIVE_SEARCH_PARAMS = frozenset({"nprobe", "efSearch", "quantizer_efSearch", "k_factor", "k_factor_rf"})


def check_search_params(search_params: str | None) -> None:
    """Refuse ``--search-params`` that are not ``name=number`` pairs, a count below 1, or a name set twice.

    Raises
    ------
    UserError
        One line naming the setting and what is expected.
    """
    if not search_params:
        return
    names = set()
    for item in search_params.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not name or number is None or not math.isfinite(number):
            raise UserError(f"--search-params {search_params!r}: {item.strip()!r} is not NAME=NUMBER; e.g. nprobe=64 "
                            f"(IVF) or efSearch=128 (HNSW), several separated by commas")
        if name in names:  # faiss would apply both, the last winning
            raise UserError(f"--search-params {search_params!r}: {name} is set twice; set each parameter once")
        names.add(name)
        if name in POSITIVE_SEARCH_PARAMS and (number < 1 or number != int(number)):
            raise UserError(f"--search-params {search_params!r}: {name} must be a whole number >= 1 (got {value.strip()}; "
                            f"faiss would return one hit per query); e.g. {name}=128")


def set_search_params(index, search_params: str | None, where: Path) -> None:
    if not search_params:
        return
    check_search_params(search_params)
    import faiss

    try:
        faiss.ParameterSpace().set_index_parameters(index, search_params)
    except RuntimeError as error:
        message = str(error).strip().splitlines()
        raise UserError(f"--search-params {search_params!r}: not accepted by the faiss index {where} "
                        f"({message[-1][:200] if message else 'refused'}); e.g. nprobe=64 (IVF) or efSearch=128 "
                        f"(HNSW)") from None


def search_index_folder(path: str | os.PathLike | OpenDenseIndex, queries: np.ndarray, hits: int,
                        search_params: str | None = None) -> list[list[tuple[str, float]]]:
    """Top ``hits`` ``(doc_id, score)`` per query vector from an index folder, one index or sharded.

    ``path`` may be the index already opened (:func:`~negplugins.runners.dense_index_format.open_dense_index`):
    the part it read is searched without being read again. A sharded index is searched one shard at a time
    (only one shard's vectors in memory): each shard's top ``hits`` (:func:`search_vectors`, ties across its
    cut resolved), merged in the order of the run (score at six decimals descending, doc id ascending). A
    document of the overall top ``hits`` is in its shard's top ``hits`` under that same order, so the result is
    the one merged index's.
    """
    opened = path if isinstance(path, OpenDenseIndex) else open_dense_index(path)
    if opened.shards is None:
        index, ids = opened.read(0)
        set_search_params(index, search_params, opened.path)
        return search_vectors(index, ids, queries, hits)
    merged: list[list[tuple[float, str, float]]] = [[] for _ in range(len(queries))]
    for position, shard in enumerate(opened.shards):
        index, ids = opened.read(position)
        set_search_params(index, search_params, shard)
        for row, found in enumerate(search_ranked(index, ids, queries, hits)):
            merged[row] = list(itertools.islice(heapq.merge(merged[row], found), hits))  # doc ids differ: no ties
        del index, ids
    return [[(doc_id, score) for _, doc_id, score in found] for found in merged]



def stored_passage_vectors(path: str | os.PathLike, doc_ids) -> dict[str, np.ndarray]:
    """The vectors a Flat index folder (one index or sharded) stores for ``doc_ids``, by doc id (as stored, float32).

    Ids the index does not hold are left out. Each shard (or the one index) is read once, and only the rows
    asked for are kept.

    Raises
    ------
    UserError
        The folder is not a Flat inner-product index.
    """
    path = Path(path)
    wanted = set(doc_ids)
    shards = shard_folders(path, read_manifest(path)) or [path]
    found: dict[str, np.ndarray] = {}
    for shard in shards:
        index, ids = load_dense_index(shard)
        vectors = flat_vectors(index)
        if vectors is None:
            raise UserError(f"{shard}: not a Flat inner-product faiss index; its vectors cannot be reused")
        for row, doc_id in enumerate(ids):
            if doc_id in wanted:
                found[doc_id] = np.array(vectors[row], dtype=np.float32)
        del index, vectors
    return found


def _key(doc_id: str, score: float):
    return (-float(f"{score:.6f}"), doc_id)


def flat_vectors(index) -> np.ndarray | None:
    """The stored vectors of an exact inner-product index (a view, no copy), or ``None`` for any other index."""
    import faiss

    typed = faiss.downcast_index(index)
    if type(typed) not in (faiss.IndexFlatIP, faiss.IndexFlat) or typed.metric_type != faiss.METRIC_INNER_PRODUCT:
        return None
    if typed.ntotal == 0:
        return np.zeros((0, typed.d), dtype=np.float32)
    return faiss.rev_swig_ptr(typed.get_xb(), typed.ntotal * typed.d).reshape(typed.ntotal, typed.d)


def _exact_scores(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Inner products computed the same way for every (query, document) pair, wherever the document is stored.

    faiss's float32 kernels process documents in blocks, so the last bit of a score depends on the
    document's position in the index (and a sharded index puts documents elsewhere). Here each product
    of two float32 is exact in float64 and each row is summed by numpy's one pairwise order.
    """
    return np.multiply(vectors.astype(np.float64), query.astype(np.float64)).sum(axis=1)


def _candidate_margin(stored: np.ndarray, query: np.ndarray, max_norm: float) -> float:
    """How far below faiss's score at the cut a document of the exact top hits can be scored by faiss.

    A float32 inner product of length ``d`` is off by at most ``d u / (1 - d u)`` times ``|q| |x|`` (``u =
    2**-24``, whatever the order of summation): faiss's score at the cut and a document's score are each
    off by that much, and a document tied at six decimals with the last one kept may be ``1e-6`` lower.
    """
    d = stored.shape[1]
    gamma = d * 2.0 ** -24 / (1 - d * 2.0 ** -24)
    return 2 * gamma * float(np.linalg.norm(query)) * max_norm + 1e-6


def _more_needed(scores: np.ndarray, fetched: int, want: int, total: int, margin: float | None) -> bool:
    """Whether documents beyond the ``fetched`` ones may belong in the top ``want`` (``scores``: faiss's, best first)."""
    if fetched >= total:
        return False
    if margin is not None:  # an exact index: every document near the cut must be a candidate
        return bool(scores[fetched - 1] >= scores[want - 1] - margin)
    # an approximate one: a tie across the cut, fetch until the score below the cut differs
    return f"{scores[fetched - 1]:.6f}" == f"{scores[want - 1]:.6f}"


def search_vectors(index, ids: list[str], queries: np.ndarray, hits: int) -> list[list[tuple[str, float]]]:
    """Top ``hits`` ``(doc_id, score)`` per query vector, ties (at six decimals) by doc id ascending.

    See :func:`search_ranked`.
    """
    return [[(doc_id, score) for _, doc_id, score in found] for found in search_ranked(index, ids, queries, hits)]


def search_ranked(index, ids: list[str], queries: np.ndarray, hits: int) -> list[list[tuple[float, str, float]]]:
    """Top ``hits`` ``(-score at six decimals, doc_id, score)`` per query vector, in the order of the run.

    For an exact (flat inner-product) index, faiss proposes the candidates (every document that faiss scores
    within :func:`_candidate_margin` of its score at the cut) and the scores written are :func:`_exact_scores`:
    a document's score does not depend on where it is stored, so a sharded index gives the same run as one
    index. An approximate index keeps faiss's scores.
    """
    total = index.ntotal
    if total == 0 or len(queries) == 0:
        return [[] for _ in range(len(queries))]
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    stored = flat_vectors(index)
    want = min(hits, total)
    if stored is not None:  # room below the cut, so that a second search is rarely needed
        max_norm = 1.001 * float(np.sqrt(np.einsum("ij,ij->i", stored, stored).max()))  # float32 sum: a hair more
        k = min(2 * want + 64, total)
    else:
        k = min(want + 1, total)
    scores, positions = index.search(queries, k)
    results = []
    for row in range(len(queries)):
        row_scores, row_positions = scores[row], positions[row]
        k_row = k
        margin = _candidate_margin(stored, queries[row], max_norm) if stored is not None else None
        while _more_needed(row_scores, k_row, want, total, margin):
            k_row = min(2 * k_row, total)
            more_scores, more_positions = index.search(queries[row:row + 1], k_row)
            row_scores, row_positions = more_scores[0], more_positions[0]
        keep = row_positions >= 0
        if margin is not None:
            keep &= row_scores >= row_scores[want - 1] - margin
            kept = row_positions[keep]
            row_scores = _exact_scores(stored[kept], queries[row])
        else:
            kept, row_scores = row_positions[keep], row_scores[keep]
        results.append(sorted((*_key(ids[p], float(s)), float(s)) for p, s in zip(kept, row_scores))[:want])
    return results

