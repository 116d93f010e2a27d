"""Exact and approximate search of a faiss index folder (one index, or sharded): documents by decreasing score at six
decimals, ties by document id ascending; a flat index's scores are computed in float64 from its stored vectors, so a
sharded index gives the run of the one merged index (docs/runners.md, "Large corpora")."""

from __future__ import annotations

import heapq
import itertools
import os
from pathlib import Path

import numpy as np

from ..errors import UserError
from .common import read_manifest
from .dense_index_format import OpenDenseIndex, faiss_error, load_dense_index, open_dense_index, shard_folders


def set_search_params(index, search_params: str | None, where: Path) -> None:
    if not search_params:
        return
    import faiss

    try:
        faiss.ParameterSpace().set_index_parameters(index, search_params)
    except RuntimeError as error:
        raise UserError(f"--search-params {search_params!r}: not accepted by the faiss index {where} "
                        f"({faiss_error(error, 'refused')}); e.g. nprobe=64 (IVF) or efSearch=128 (HNSW)") from None


def search_index_folder(path: str | os.PathLike | OpenDenseIndex, queries: np.ndarray, hits: int,
                        search_params: str | None = None) -> list[list[tuple[str, float]]]:
    """Top ``hits`` ``(doc_id, score)`` per query vector from an index folder (or one already opened), one index or
    one shard at a time: a document of the overall top ``hits`` is in its shard's top ``hits`` in the run's order."""
    opened = path if isinstance(path, OpenDenseIndex) else open_dense_index(path)
    merged: list[list[tuple[float, str, float]]] = [[] for _ in range(len(queries))]
    for position, part in enumerate(opened.shards or [opened.path]):
        index, ids = opened.read(position)
        set_search_params(index, search_params, part)
        for row, found in enumerate(search_ranked(index, ids, queries, hits)):
            merged[row] = list(itertools.islice(heapq.merge(merged[row], found), hits))  # doc ids differ: no ties
        del index, ids
    return [[(doc_id, score) for _, doc_id, score in found] for found in merged]


def stored_passage_vectors(path: str | os.PathLike, doc_ids) -> dict[str, np.ndarray]:
    """The float32 vectors a Flat index folder (one index or sharded) stores for those of ``doc_ids`` it holds."""
    path = Path(path)
    wanted = set(doc_ids)
    found: dict[str, np.ndarray] = {}
    for shard in shard_folders(path, read_manifest(path)) or [path]:
        index, ids = load_dense_index(shard)
        vectors = flat_vectors(index)
        if vectors is None:
            raise UserError(f"{shard}: not a Flat inner-product faiss index; its vectors cannot be reused")
        for row, doc_id in enumerate(ids):
            if doc_id in wanted:
                found[doc_id] = np.array(vectors[row], dtype=np.float32)
        del index, vectors
    return found


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
    """Inner products that do not depend on where a document is stored (faiss's float32 blocks do, in the last bit):
    each product of two float32 is exact in float64, each row summed in numpy's one pairwise order."""
    return np.multiply(vectors.astype(np.float64), query.astype(np.float64)).sum(axis=1)


def _candidate_margin(stored: np.ndarray, query: np.ndarray, max_norm: float) -> float:
    """How far below faiss's score at the cut a document of the exact top hits can be scored by faiss: a float32
    inner product of length ``d`` is off by at most ``d u / (1 - d u) |q| |x|`` (``u = 2**-24``) either way, and a
    document tied at six decimals with the last one kept may be ``1e-6`` lower."""
    d = stored.shape[1]
    gamma = d * 2.0 ** -24 / (1 - d * 2.0 ** -24)
    return 2 * gamma * float(np.linalg.norm(query)) * max_norm + 1e-6


def _more_needed(scores: np.ndarray, fetched: int, want: int, total: int, margin: float | None) -> bool:
    """Whether documents beyond the ``fetched`` may belong in the top ``want`` (``scores``: faiss's, best first)."""
    if fetched >= total:
        return False
    if margin is not None:  # an exact index: every document near the cut must be a candidate
        return bool(scores[fetched - 1] >= scores[want - 1] - margin)
    # an approximate one: a tie across the cut, fetch until the score below the cut differs
    return f"{scores[fetched - 1]:.6f}" == f"{scores[want - 1]:.6f}"


def search_vectors(index, ids: list[str], queries: np.ndarray, hits: int) -> list[list[tuple[str, float]]]:
    """Top ``hits`` ``(doc_id, score)`` per query vector, ties (at six decimals) by doc id ascending."""
    return [[(doc_id, score) for _, doc_id, score in found] for found in search_ranked(index, ids, queries, hits)]


def search_ranked(index, ids: list[str], queries: np.ndarray, hits: int) -> list[list[tuple[float, str, float]]]:
    """Top ``hits`` ``(-score at six decimals, doc_id, score)`` per query vector, in the order of the run: of a flat
    index, faiss proposes the candidates (within :func:`_candidate_margin` of the cut) scored by :func:`_exact_scores`;
    an approximate index keeps faiss's scores."""
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
        results.append(sorted((-float(f"{s:.6f}"), ids[p], s) for p, s in zip(kept, map(float, row_scores)))[:want])
    return results

