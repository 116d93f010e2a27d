"""The report card's steps for one benchmark: the model, the files the command owns, what a re-run reuses, and
each protocol (dense retrieval, reranking, NevIR's pairs) with its baselines and evaluation."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ir_datasets_ext.spec import PYSERINI_BM25

from .. import datasets
from ..errors import UserError
from ..io.files import atomic_writer
from ..io.jsonfile import read_json
from ..io.outputs import check_replaceable_file
from ..io.sidecars import file_sha256, metadata_path, read_metadata
from ..measures.ranking import STOCK
from ..rendering.text import json_text
from .card import GENERATOR

SUMMARY_FILE = "summary.json"
RESULTS_FILE = "results.json"
SUMMARY_FORMAT = "negplugins-benchmark-summary"
RESULTS_FORMAT = "negplugins-benchmark-results"
FORMAT_VERSION = 2  # 2: results hold the confidence intervals (ci95), the summary the baselines
MAX_RESULTS_BYTES = 256 * 1024 * 1024
MAX_SUMMARY_BYTES = 64 * 1024 * 1024


# -- the model --------------------------------------------------------------------------------------

@dataclass
class Model:
    ref: object  # ModelRef
    kind: str  # how it scores: "dense" (an embedding model) or a reranker kind
    encoder: object | None = None  # SentenceEncoder, for dense retrieval
    scorer: tuple | None = None  # (scorer, kind, ref) for rerank()
    parameters: int | None = None
    options: dict = field(default_factory=dict)  # the search dense options given (reportcard.encoding)


def _is_model_object(model) -> bool:
    return model is not None and not isinstance(model, (str, os.PathLike))


def model_reference(model, reranker):
    """``(ModelRef, object or None)``, without loading weights from files (a model object is fingerprinted)."""
    from ..runners.encoders import SentenceEncoder
    from ..runners.model_refs import resolve_model

    if _is_model_object(model):
        if reranker not in (None, "bi-encoder"):
            raise UserError(f"--reranker {reranker}: a model object is used as a sentence-transformers embedding "
                            "model; give a cross-encoder or monoT5 reranker by folder or id")
        encoder = SentenceEncoder.from_model(model)
        return encoder.ref, encoder
    return resolve_model(model), None


def load_model(ref, encoder, reranker, batch_size, options: dict | None = None) -> Model:
    from ..runners.encoders import SentenceEncoder
    from ..runners.model_refs import parameter_count
    from ..runners.rerank import RERANK_DEFAULTS, BiEncoderScorer, load_reranker

    options = options or {}
    rerank_batch = batch_size or RERANK_DEFAULTS["batch_size"]
    if reranker is None or reranker == "bi-encoder":
        encoder = encoder or SentenceEncoder(ref)
        scorer = BiEncoderScorer(ref, rerank_batch, max_length=options.get("max_length") if reranker else None,
                                 encoder=encoder)
        return Model(ref, "dense" if reranker is None else "bi-encoder", encoder, (scorer, "bi-encoder", ref),
                      parameter_count(encoder.model), options)
    scorer, kind, _ = load_reranker(ref.path, reranker, batch_size=rerank_batch, max_length=options.get("max_length"))
    return Model(ref, kind, None, (scorer, kind, ref), parameter_count(scorer.model), options)  # the name the user gave


# -- files this command owns ------------------------------------------------------------------------

class Ledger:
    """The files of an output folder this command wrote, with their SHA-256 (kept in ``summary.json``); any other
    file is replaced only when it holds what is about to be written, or with ``force``."""

    def __init__(self, output: Path, force: bool):
        self.output = output
        self.force = force
        self.files: dict[str, str] = {}
        record = our_json(output / SUMMARY_FILE, SUMMARY_FORMAT, MAX_SUMMARY_BYTES)
        if record is not None and isinstance(record.get("files"), dict):
            self.files = {k: v for k, v in record["files"].items() if isinstance(k, str) and isinstance(v, str)}

    def relative(self, path: Path) -> str:
        return path.relative_to(self.output).as_posix()

    def ours(self, path: Path) -> bool:
        relative = self.relative(path)
        if path.name == SUMMARY_FILE and path.parent == self.output:
            return our_json(path, SUMMARY_FORMAT, MAX_SUMMARY_BYTES) is not None
        if relative in self.files:
            return self.files[relative] == file_sha256(path)
        if path.name == RESULTS_FILE:
            return our_json(path, RESULTS_FORMAT, MAX_RESULTS_BYTES) is not None
        try:
            with open(path, "rb") as f:
                return GENERATOR.encode() in f.read(1024)
        except OSError:
            return False

    def check(self, path: Path, content: bytes | None = None) -> None:
        """Refuse (before any work) a file this command may not replace."""
        check_replaceable_file(path, force=self.force, content=content, ours=self.ours, refusal=(
            f"{path}: exists and is not what negplugins benchmark last wrote there (edited, or another program's); "
            f"choose another --output or pass --force to replace it"))

    def write(self, path: Path, text: str) -> bool:
        """Write ``text`` (UTF-8) unless the file already holds it; record its SHA-256. True if written."""
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        written = False
        if not (path.is_file() and file_sha256(path) == digest):
            self.check(path, data)
            with atomic_writer(path, "wb") as f:
                f.write(data)
            written = True
        if path.name != SUMMARY_FILE or path.parent != self.output:
            self.files[self.relative(path)] = digest
        return written


def our_json(path: Path, kind: str, max_bytes: int) -> dict | None:
    """The JSON object at ``path`` when it is this command's file of ``kind`` (its ``format``), else None."""
    if not path.is_file():
        return None
    try:
        record = read_json(path, what=kind.replace("-", " "), max_bytes=max_bytes)
    except UserError:
        return None
    return record if isinstance(record, dict) and record.get("format") == kind else None


# -- reuse ------------------------------------------------------------------------------------------

def _field(record, dotted: str):
    value = record
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


_MISSING = object()


class _AnyOf(tuple):
    """An expected sidecar field that may hold any of these values (``_MISSING``: absent, the default then)."""


def _matches(value, expected) -> bool:
    return value in expected if isinstance(expected, _AnyOf) else value == expected


def _reusable_run(path: Path, expected: dict) -> dict | None:
    """The sidecar of ``path`` when the run can be reused: it matches the file and every ``expected`` field."""
    if not path.is_file() or not metadata_path(path).is_file():
        return None
    try:
        meta = read_metadata(path)
    except UserError:
        return None
    if meta.get("run") != path.name or meta.get("run_sha256") != file_sha256(path):
        return None
    if not all(_matches(_field(meta, key), value) for key, value in expected.items()):
        return None
    if meta.get("data_origin", []) != datasets.data_origins(datasets.load(meta["dataset"])):
        return None  # made on other files (a derived copy, the release): made again
    return meta


def _qrels_sha256(qrels: dict) -> str:
    digest = hashlib.sha256()
    for query_id in sorted(qrels):
        for doc_id in sorted(qrels[query_id]):
            digest.update(f"{query_id}\t{doc_id}\t{qrels[query_id][doc_id]}\n".encode())
    return digest.hexdigest()


def _reusable_results(path: Path, run: Path, qrels_sha: str, measures: list[str], origins: list[dict]) -> dict | None:
    record = our_json(path, RESULTS_FORMAT, MAX_RESULTS_BYTES)
    if record is None or record.get("version") != FORMAT_VERSION:
        return None
    evaluation = record.get("evaluation")
    if record.get("run") != run.name or record.get("run_sha256") != file_sha256(run) \
            or record.get("qrels_sha256") != qrels_sha or not isinstance(evaluation, dict) \
            or evaluation.get("measures") != measures or evaluation.get("ties") != STOCK \
            or evaluation.get("data_origin", []) != origins:
        return None  # a record without "ties" was scored before standard measures were stock: score again
    return record


# -- the protocols ----------------------------------------------------------------------------------

def run_name(spec, model: Model) -> str:
    name = datasets.slug(model.ref.name)
    if spec.protocol.kind == "pairs":
        kind = "bi-encoder" if model.kind == "dense" else model.kind
        return f"pairs-{kind}-{name}"
    if model.kind == "dense":
        return f"dense-{name}"
    return f"bm25-{model.kind}-{name}"


def _dense_index_path(indexes: Path, dataset_id: str, ref) -> Path:
    corpus = datasets.slug(datasets.docs_root_id(dataset_id))
    name = datasets.slug(ref.name)
    if ref.path is None:  # a model object: its own index, never one built from files of the same name
        name = f"{name}-{ref.sha256[:12]}"
    return indexes / "faiss" / corpus / name


def probe(spec, dataset_id: str):
    """``(dataset, qrels)`` once the data the protocol needs is readable; raises what makes it unavailable."""
    from ..evaluation.scoring import Evaluator

    evaluator = Evaluator.load(dataset_id)
    dataset, qrels = evaluator.dataset, evaluator.qrels
    if not qrels:
        raise UserError(f"{dataset_id}: the qrels hold no judged query")
    if not datasets.query_texts(dataset):
        raise UserError(f"{dataset_id}: the dataset has no queries")
    if spec.protocol.kind == "pairs":
        if not dataset.has_scoreddocs() or next(iter(dataset.scoreddocs_iter()), None) is None:
            raise UserError(f"{dataset_id}: the dataset has no candidate documents (scoreddocs) to score")
    if not dataset.has_docs() or next(iter(dataset.docs_iter()), None) is None:
        raise UserError(f"{dataset_id}: the dataset has no documents")
    return dataset, qrels


def unavailable_errors() -> tuple:
    from ir_datasets_ext.download import DownloadError
    from ir_datasets_ext.util import FormatError

    return (DownloadError, FormatError, UserError)


def _reused(run: Path, expected: dict, step: str, what: str, outcome, say) -> bool:
    """Whether ``run`` is reused (:func:`_reusable_run`); if so, the step is recorded and said so."""
    start = time.perf_counter()
    if not _reusable_run(run, expected):
        return False
    say(f"{what}: reused {run}")
    timed(outcome, step, "reused", start)
    return True


def timed(outcome, step: str, how: str, start: float) -> float:
    seconds = time.perf_counter() - start
    outcome.steps.append((step, how, seconds))
    return seconds


def run_protocol(spec, dataset_id: str, folder: Path, model: Model, load, indexes: Path, batch_size, outcome,
                  say, progress: bool, force: bool, command) -> Path:
    """Write (or reuse) the system's run for one dataset; ``load()`` loads the model only when a step cannot be reused."""
    from ..runners.rerank import RERANK_DEFAULTS, rerank
    from .encoding import encoding_record, own_encoder

    run = folder / f"{run_name(spec, model)}.trec.gz"
    tag = run_name(spec, model)
    made_by = {"model.sha256": model.ref.sha256, "model.files_sha256": model.ref.files_sha256}
    options = model.options
    own = model.kind == "dense" and own_encoder(model.ref, options)
    rerank_batch = batch_size or RERANK_DEFAULTS["batch_size"]
    max_length = None if model.kind == "dense" else options.get("max_length")
    engine = options.get("engine", "single")
    if spec.protocol.kind == "pairs":
        expected = {"dataset": dataset_id, "runner": "rerank", "tag": tag, **made_by,
                    "parameters.reranker": model.scorer[1], "parameters.top_k": spec.protocol.depth,
                    "parameters.candidates": "scoreddocs", "parameters.max_length": max_length,
                    "parameters.encoding": encoding_record(model.ref, options) if own else _MISSING}
        if _reused(run, expected, "pairs", "scoring its candidate pairs", outcome, say):
            return run
        start = time.perf_counter()
        say(f"scoring each query's {spec.protocol.depth} candidates with {model.scorer[1]} {model.ref.name}")
        scoring = _pair_scoring(model, load, dataset_id, rerank_batch, own)
        rerank(dataset_id, run, candidates=True, top_k=spec.protocol.depth, batch_size=rerank_batch, run_tag=tag,
               max_length=max_length, force=force, command=command, progress=progress, **scoring)
        say(f"scored the pairs in {timed(outcome, 'pairs', 'ran', start):.1f} s -> {run}")
        return run

    if model.kind == "dense":
        expected = {"dataset": dataset_id, "runner": "dense", "tag": tag, **made_by,
                    "parameters.hits": spec.protocol.depth, **_dense_expected(model, own)}
        if not options.get("rebuild") and _reused(run, expected, "dense retrieval",
                                                  f"dense retrieval (top {spec.protocol.depth})", outcome, say):
            return run
        _dense_run(spec, dataset_id, run, tag, model, load, indexes, batch_size, outcome, say, progress, force,
                   command, own)
        return run

    # BM25, then the reranker
    first = _baseline_run(spec, dataset_id, PYSERINI_BM25, folder, indexes, outcome, say, force, command,
                          what="BM25 first stage")
    outcome.first_stage = first
    expected = {"dataset": dataset_id, "runner": "rerank", "tag": tag, **made_by,
                "parameters.reranker": model.kind, "parameters.top_k": spec.protocol.depth, "parameters.candidates": "run",
                "parameters.max_length": max_length, "first_stage.sha256": file_sha256(first)}
    if _reused(run, expected, "rerank", f"reranking the top {spec.protocol.depth}", outcome, say):
        return run
    start = time.perf_counter()
    say(f"reranking the top {spec.protocol.depth} with {model.kind} {model.ref.name}")
    scoring = {"loaded": load().scorer} if engine == "single" else \
        {"model": model.ref.path, "reranker": model.kind, "engine": engine}
    rerank(dataset_id, run, run=first, top_k=spec.protocol.depth, batch_size=rerank_batch, run_tag=tag,
           max_length=max_length, force=force, command=command, progress=progress, **scoring)
    say(f"reranked in {timed(outcome, 'rerank', 'ran', start):.1f} s -> {run}")
    return run


def _pair_scoring(model: Model, load, dataset_id: str, batch_size: int, own: bool) -> dict:
    """The keyword arguments of ``rerank`` that give it the pairs' scorer (Ray's workers load a reranker there)."""
    engine = model.options.get("engine", "single")
    if own:  # queries and passages with their prefixes, in this process: the pairs are few
        from ..runners.dense_index_format import calibration_texts
        from .encoding import PromptedPairScorer, passage_settings

        calibration = calibration_texts(dataset_id, passage_settings(model.ref, model.options))
        return {"loaded": (PromptedPairScorer(model.ref, model.options, batch_size, calibration), "bi-encoder",
                           model.ref)}
    if engine != "single" and model.kind != "dense":
        return {"model": model.ref.path, "reranker": model.kind, "engine": engine}
    return {"loaded": load().scorer}


def _dense_expected(model: Model, own: bool) -> dict:
    """The sidecar fields a reused dense run must have for the options given (the encoding, the index, the search)."""
    from ..runners.dense_index_format import normalise_index_type
    from ..runners.encoding_settings import resolve_device
    from .encoding import passage_settings, query_prefix

    options = model.options
    expected = {"parameters.index_type": normalise_index_type(options.get("index_type")),
                "parameters.search_params": options.get("search_params")}
    if own:
        expected.update({"parameters.passage_encoding": passage_settings(model.ref, options),
                         "parameters.query_prefix": query_prefix(model.ref, options)})
        if options.get("device") is not None:
            expected["parameters.device"] = resolve_device(options["device"], options.get("backend") or "torch")
    else:  # a sidecar without these fields was made with their defaults
        expected.update({"parameters.backend": "torch", "parameters.dtype": "float32",
                         "parameters.passage_prefix": "", "parameters.query_prefix": ""})
        expected = {key: _AnyOf((value, _MISSING)) for key, value in expected.items()}
        if model.ref.path is not None:  # the pooling and token limit sentence-transformers reads from the files
            from ..runners.encoders import SentenceEncoder
            from ..runners.encoding_settings import model_defaults

            defaults = model_defaults(model.ref)
            own_settings = SentenceEncoder.own_settings(defaults.pooling or "mean", defaults.max_length)
            expected.update({"parameters.pooling": own_settings["pooling"],
                             "parameters.max_length": own_settings["max_length"], "parameters.normalized": True})
    return expected


def _dense_run(spec, dataset_id: str, run: Path, tag: str, model: Model, load, indexes: Path, batch_size, outcome,
               say, progress: bool, force: bool, command, own: bool) -> None:
    """Build (or reuse) the dense index, then search it: by sentence-transformers as the model is, or by ``search
    dense``'s own encoder with the options given (its index named as ``search dense`` names it)."""
    from ..runners.dense import dense_index, dense_search
    from ..runners.dense_index_format import default_dense_index_path
    from ..runners.dense_options import DENSE_DEFAULTS, EncodingOptions, IndexOptions
    from .encoding import passage_settings

    options = model.options
    index_fields = {f.name for f in dataclasses.fields(IndexOptions)}
    encoding_fields = {f.name for f in dataclasses.fields(EncodingOptions)}
    index_options = {k: v for k, v in options.items() if k in index_fields}
    start = time.perf_counter()
    index = _dense_index_path(indexes, dataset_id, model.ref)
    dense_batch = batch_size or DENSE_DEFAULTS["batch_size"]
    if own:
        index = index.parent / default_dense_index_path(dataset_id, model.ref, passage_settings(model.ref, options)).name
        encoding = {k: v for k, v in options.items() if k in encoding_fields}
        passage = {k: v for k, v in encoding.items() if k != "query_prefix"}
        loaded = {"model": model.ref.path}
    else:
        encoding, passage, loaded = {}, {}, {"encoder": load().encoder}
    shards = options.get("shard_num", 1)
    say(f"dense index {index}: encoding the corpus, or reusing the index if up to date" if shards == 1 else
        f"dense index {index}: encoding the corpus in {shards} shards, or reusing the index or its finished shards "
        f"if up to date")
    built = dense_index(dataset_id, index=index, batch_size=dense_batch, progress=progress, **loaded, **index_options,
                        **passage)
    say(f"dense index {'built' if built.built else 'reused'} in "
        f"{timed(outcome, 'dense index', 'ran' if built.built else 'reused', start):.1f} s")
    start = time.perf_counter()
    dense_search(dataset_id, run, index=index, hits=spec.protocol.depth, batch_size=dense_batch, run_tag=tag,
                 progress=progress, force=force, command=command, search_params=options.get("search_params"),
                 engine=options.get("engine", "single"), **loaded, **encoding)
    say(f"dense retrieval (top {spec.protocol.depth}) in {timed(outcome, 'dense retrieval', 'ran', start):.1f} s "
        f"-> {run}")


def _baseline_run(spec, dataset_id: str, baseline, folder: Path, indexes: Path, outcome, say, force: bool,
                  command, what: str | None = None) -> Path:
    """Write (or reuse) a baseline's run (Lucene BM25 or bm25s with its preset) to the benchmark's depth."""
    run = folder / f"{baseline.name}.trec.gz"
    what = what or f"baseline {baseline.name}"
    parameters = {f"parameters.{k}": v for k, v in baseline.parameters.items()}
    if baseline.runner == "bm25s":
        parameters["parameters.preset"] = baseline.preset
    expected = {"dataset": dataset_id, "runner": baseline.runner, "parameters.hits": spec.protocol.depth, **parameters}
    if _reused(run, expected, baseline.name, f"{what} (top {spec.protocol.depth})", outcome, say):
        return run
    start = time.perf_counter()
    if baseline.runner == "bm25":
        from ..runners.bm25 import bm25_search
        from ..runners.lucene_index import lucene_index

        index = indexes / "lucene" / datasets.slug(datasets.docs_root_id(dataset_id))
        say(f"{what} (top {spec.protocol.depth}): {baseline.system}; Lucene index {index}")
        index, _ = lucene_index(dataset_id, index=index, reuse_slim=True)  # BM25 needs postings only
        bm25_search(dataset_id, run, index=index, hits=spec.protocol.depth, force=force, command=command,
                    **dict(baseline.parameters))
    else:
        from ..runners.bm25s import bm25s_search

        say(f"{what} (top {spec.protocol.depth}): {baseline.system}")
        bm25s_search(dataset_id, run, preset=baseline.preset, hits=spec.protocol.depth, force=force, command=command,
                     **dict(baseline.parameters))
    say(f"{what} in {timed(outcome, baseline.name, 'ran', start):.1f} s -> {run}")
    return run


def evaluate_run(spec, dataset_id, run: Path, qrels, results: Path, ledger: Ledger, outcome, say,
              name: str | None = None, step: str = "evaluation") -> dict:
    """Evaluate (or reuse the results of) ``run``: the results record, with its confidence intervals."""
    from ..evaluation.scoring import Evaluator
    from ..evaluation.significance import evaluation_intervals

    measures, _ = spec.default_measures(dataset_id, qrels)
    qrels_sha = _qrels_sha256(qrels)
    start = time.perf_counter()
    dataset = datasets.load(dataset_id)
    record = _reusable_results(results, run, qrels_sha, measures, datasets.data_origins(dataset))
    if record is not None:
        timed(outcome, step, "reused", start)
        say(f"{step}: reused {results}")
        ledger.files[ledger.relative(results)] = file_sha256(results)
        return record
    evaluator = Evaluator.load(dataset_id, dataset=dataset, qrels=qrels)
    evaluation = evaluator.score(evaluator.read_run(str(run)), str(run), name or outcome.system, per_query=True)
    record = {"format": RESULTS_FORMAT, "version": FORMAT_VERSION, "benchmark": spec.name, "dataset": dataset_id,
              "protocol": spec.protocol.kind, "depth": spec.protocol.depth, "run": run.name, "run_sha256": file_sha256(run),
              "qrels_sha256": qrels_sha, "primary": spec.measures.main, "evaluation": evaluation.to_dict(),
              "ci95": evaluation_intervals(evaluation)}
    record["evaluation"]["run"] = run.name  # the file name only: the results do not depend on where they are
    ledger.write(results, json_text(record))
    seconds = timed(outcome, step, "ran", start)
    primary = evaluation.overall.get(spec.measures.main)
    shown = "no value" if primary is None or primary != primary else f"{primary:.4f}"
    say(f"{step} in {seconds:.1f} s: {spec.measures.main} {shown} -> {results}")
    return record


def run_baselines(spec, dataset_id: str, folder: Path, qrels, indexes: Path, ledger: Ledger, outcome, say,
               force: bool, command, model_record: dict) -> list[dict]:
    """Run and evaluate every baseline on one dataset and compare each with the model's run (``vs_model``: model
    minus baseline on the primary measure, Holm-corrected across the baselines)."""
    from ..evaluation.results import clean_float
    from ..evaluation.scoring import shared_units
    from ..evaluation.significance import PERMUTATIONS, compare

    entries, per_query = [], []
    for baseline in spec.computed_baselines():
        run = _baseline_run(spec, dataset_id, baseline, folder, indexes, outcome, say, force, command)
        results = folder / f"{baseline.name}.results.json"
        entry = {"name": baseline.name, "system": baseline.system, "runner": baseline.runner,
                 "parameters": dict(baseline.parameters), "preset": baseline.preset, "reproduces": baseline.reproduces,
                 "authors_pipeline": baseline.authors_pipeline, "run": run, "results": None, "overall": {},
                 "counts": {}, "subsets": {}, "negation_split": None, "ci95": {}}
        entries.append(entry)
        if _empty_run(run):  # BM25 found no query term in the corpus: a result with nothing to score
            entry["reason"] = "its run holds no line: no query shares a term with any document"
            say(f"baseline {baseline.name}: not evaluated, {entry['reason']}")
            continue
        record = evaluate_run(spec, dataset_id, run, qrels, results, ledger, outcome, say, name=baseline.system,
                           step=f"{baseline.name} evaluation")
        evaluation = record["evaluation"]
        per_query.append((entry, evaluation.get("per_query") or {}))
        entry.update(results=results, overall=evaluation["overall"], counts=evaluation["counts"],
                     subsets=evaluation["subsets"], negation_split=evaluation.get("negation_split"), ci95=record["ci95"])
    if per_query:
        primary = model_record["primary"]
        model = {m: {q: v for q, v in values.items() if v is not None}
                 for m, values in (model_record["evaluation"].get("per_query") or {}).items()}
        others = [{m: {q: v for q, v in values.items() if v is not None} for m, values in pq.items()}
                  for _, pq in per_query]
        tests = compare([model, *others], [primary], baseline=0, units=shared_units([primary], qrels))
        for (entry, _), test in zip(per_query, tests[1:]):
            t = test[primary]
            low, high = t["ci95"]
            entry["vs_model"] = {"measure": primary, "n": t["n"], "mean_diff": clean_float(-t["mean_diff"]),
                                 "ci95": [clean_float(-high), clean_float(-low)],
                                 "p_randomization_holm": clean_float(t["p_randomization_holm"]),
                                 "permutations": PERMUTATIONS}
    return entries


def _empty_run(run: Path) -> bool:
    """Whether a run file (``.gz`` or plain) holds no line."""
    import gzip

    opener = gzip.open if run.suffix == ".gz" else open
    with opener(run, "rb") as f:
        return not f.read(1)
