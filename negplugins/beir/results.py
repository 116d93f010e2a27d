"""BEIR results (``{query_id: {doc_id: score}}``, often saved with ``json.dump``) as a TREC run with its sidecar,
checked against a registered dataset and written in the one ranking (:func:`negplugins.io.trec.ranked`) as they are.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path

from .. import datasets
from ..errors import UserError
from ..io.jsonfile import read_json
from ..io.outputs import check_run_output
from ..io.run_columns import max_run_bytes
from ..io.run_writer import RunResult, Sidecar, write_run_and_sidecar
from ..io.sidecars import file_sha256
from ..io.trec import ranked
from ..options import MAX_HITS, check_int

__all__ = ["BeirResultsError", "load_results", "check_results", "results_to_run"]


class BeirResultsError(UserError):
    """BEIR results that are unreadable, malformed, or do not fit the dataset."""


#: ``{query_id: {doc_id: score}}`` nests two levels; one more leaves room for a clear shape error.
MAX_RESULTS_DEPTH = 3


def _describe(value) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
    return text[:40]


def _examples(ids, limit: int = 3) -> str:
    ids = sorted(ids)
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _check_shape(results, source: str) -> dict[str, dict[str, float]]:
    """``{str: {str: finite number}}``, converted to floats; raises BeirResultsError naming ``source``."""
    if not isinstance(results, Mapping):
        raise BeirResultsError(f"{source}: expected an object {{query_id: {{doc_id: score}}}}, "
                               f"got {type(results).__name__}")
    checked: dict[str, dict[str, float]] = {}
    for query_id, docs in results.items():
        if not isinstance(query_id, str) or not query_id:
            raise BeirResultsError(f"{source}: query id {query_id!r} is not a non-empty string")
        if not isinstance(docs, Mapping):
            raise BeirResultsError(f"{source}: query {query_id!r}: expected an object {{doc_id: score}}, "
                                   f"got {_describe(docs)}")
        scores: dict[str, float] = {}
        for doc_id, score in docs.items():
            if not isinstance(doc_id, str) or not doc_id or any(c.isspace() for c in doc_id):
                raise BeirResultsError(f"{source}: query {query_id!r}: doc id {doc_id!r} is not a string "
                                       f"without white space")
            if isinstance(score, bool) or not isinstance(score, (int, float)) and not hasattr(score, "__float__"):
                raise BeirResultsError(f"{source}: query {query_id!r}, doc {doc_id!r}: score {_describe(score)} "
                                       f"is not a number")
            value = float(score)
            if not math.isfinite(value):
                raise BeirResultsError(f"{source}: query {query_id!r}, doc {doc_id!r}: score {value} is not finite")
            scores[doc_id] = value
        if any(c.isspace() for c in query_id):
            raise BeirResultsError(f"{source}: query id {query_id!r} contains white space; a TREC run cannot hold it")
        checked[query_id] = scores
    if not checked:
        raise BeirResultsError(f"{source}: no results")
    return checked


def load_results(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """Read BEIR results saved as JSON, within the run size bound; a BeirResultsError names file, line and column."""
    path = Path(path)
    results = read_json(path, what="BEIR results file", max_bytes=max_run_bytes(), max_depth=MAX_RESULTS_DEPTH,
                        error=BeirResultsError)
    return _check_shape(results, str(path))


def check_results(results, dataset_id: str, check_docs: bool = True, source: str = "results") -> dict:
    """The results with float scores, checked against the dataset's query ids (and, with ``check_docs``, doc ids);
    a BeirResultsError names ``source`` and up to three of the unknown ids."""
    checked = _check_shape(results, source)
    dataset = datasets.load(dataset_id)
    unknown = checked.keys() - {q.query_id for q in dataset.queries_iter()}
    if unknown:
        raise BeirResultsError(f"{source}: {len(unknown)} query id(s) not in {dataset_id}: {_examples(unknown)} "
                               f"(are the results for another dataset or subset?)")
    if check_docs:
        if not dataset.has_docs():
            raise BeirResultsError(f"{dataset_id} has no documents to check the results against")
        wanted = {doc_id for docs in checked.values() for doc_id in docs}
        try:  # docstore lookups when possible
            found = set(dataset.docs_store().get_many(wanted).keys())
        except (NotImplementedError, AttributeError, TypeError):
            found = {doc.doc_id for doc in dataset.docs_iter() if doc.doc_id in wanted}
        missing = wanted - found
        if missing:
            raise BeirResultsError(f"{source}: {len(missing)} doc id(s) not in the corpus of {dataset_id}: "
                                   f"{_examples(missing)}")
    return checked


def results_to_run(results, dataset_id: str, output: str | os.PathLike, system: str = "beir", *,
                   tag: str | None = None, model: dict | str | None = None, hits: int | None = None,
                   parameters: dict | None = None, first_stage: dict | None = None, check_docs: bool = True,
                   runner: str = "beir", command: str | None = None, force: bool = False) -> RunResult:
    """Write BEIR results (a mapping, or the path of their JSON file) as a TREC run with its metadata sidecar;
    ``tag`` defaults to ``system`` made one word, ``model`` is ``{"id", "revision", "sha256"}`` or an id."""
    if hits is not None:
        try:
            check_int(hits, "--hits", 1, MAX_HITS)
        except UserError as error:
            raise BeirResultsError(str(error)) from None
    source = "results"
    parameters = dict(parameters or {})
    check_run_output(output, inputs=[results] if isinstance(results, (str, os.PathLike)) else [], force=force)
    if isinstance(results, (str, os.PathLike)):
        source = str(results)
        parameters.setdefault("results", source)
        parameters.setdefault("results_sha256", file_sha256(results) if Path(results).is_file() else None)
        results = load_results(results)
    checked = check_results(results, dataset_id, check_docs=check_docs, source=source)
    dataset = datasets.load(dataset_id)
    order = [q.query_id for q in dataset.queries_iter() if q.query_id in checked]
    if tag is None:
        tag = re.sub(r"[^A-Za-z0-9_.:+-]+", "-", system).strip("-")[:60] or "beir"
    if isinstance(model, str):
        model = {"id": model, "revision": None, "sha256": None}
    lines = ((query_id, ranked(checked[query_id])[:hits]) for query_id in order)
    parameters["hits"] = hits
    sidecar = Sidecar(dataset=dataset_id, runner=runner, system=system, tag=tag, parameters=parameters, model=model,
                      first_stage=first_stage, language=datasets.dataset_language(dataset), command=command)
    return write_run_and_sidecar(output, lines, sidecar, queries=len(order), details={
        "dataset": dataset_id, "output": str(output), "metadata": None, "queries": len(order), "lines": None,
        "tag": tag})
