"""The Ray engine: the heavy model work of ``search dense`` and ``search rerank`` on a Ray cluster.

``--engine ray`` runs the model work, encoding a corpus (``search dense``) or scoring candidate pairs
(``search rerank``), as a Ray Data pipeline::

    documents, read in groups        ->   an actor pool of encoders / scorers   ->   this process
    (read tasks on this machine, where     (one per GPU, or per node on CPUs;         (writes each shard
     the dataset is, one per group)         anywhere in the cluster)                   atomically as it completes)

Everything else (the shards' layout and manifests, resuming, merging, the query
encoding, the search and the run) is the single-process code of :mod:`negplugins.runners.dense` and
:mod:`negplugins.runners.rerank`. The output is the same as ``--engine single``: the workers are given
the single process's encoder (the same :class:`~negplugins.runners.encoders.DenseEncoder` settings:
pooling, normalisation, token limit, prefix, backend, dtype) and the same batches of texts (a shard's
texts sorted by length over the whole shard, then cut into groups of ``16 x batch size``, which the
encoder batches by token budget as the single process does, :mod:`negplugins.runners.encoding_pipeline`; a reranker's pairs in its own length order; the
bi-encoder's texts as sentence-transformers batches them), so every forward pass sees the same batch,
with the same padding, and the vectors and scores come out the same (the tests check the index, the
vectors and the runs against ``--engine single``).

Without ``address`` a local Ray is started on this machine (all its CPUs and GPUs, no dashboard, quiet)
and shut down at the end; with ``address`` (``auto``, ``HOST:6379``) the command joins that cluster,
which it leaves running. When this process already runs Ray (``ray.init`` called by the caller), that
session is used and left running. Ray replaces the crash-signal handlers of the process it starts in, which
the JVM that runs Lucene here needs: the engine puts them back around ``ray.init`` and ``ray.shutdown``, and a
caller who starts Ray itself in a process that runs Lucene does the same with :func:`keep_crash_handlers`
(:mod:`negplugins._compat.crash_handlers` says why). On a cluster, every node needs the suite installed and the model
folder at the same path; the documents are read on this machine only.

Ray is an optional dependency (``pip install 'negplugins[ray]'``), imported only when the engine runs. The
session, the actors' resources and the job's errors are :mod:`negplugins.runners.ray_cluster`.
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import datasets
from .._compat.crash_handlers import keep_crash_handlers
from ..errors import UserError, error_line
from ..io.interrupts import end_without_teardown, stop_signal
from .encoders import DenseEncoder, ModelRef, SentenceEncoder, configure_offline, sentence_transformers_batches
from .encoding_pipeline import GROUP_BATCHES, length_groups
from .ray_cluster import (
    ENGINES,
    MAX_RAY_WORKERS,
    RayEngine,
    RayJobError,
    WorkerPlan,
    describe,
    engine_of,
    session,
    user_error_names,
    worker_error,
    worker_plan,
)
from .ray_failures import RayletWatch, ray_failure

__all__ = ["ENGINES", "keep_crash_handlers", "FAIL_ONCE_ENV", "MAX_RAY_WORKERS", "RayEngine", "RayJobError",
           "Corpus", "bi_encoder_scores", "corpus", "describe", "encode_shards", "engine_of", "pair_groups",
           "score_pairs", "sentence_transformers_batches", "shard_groups"]

#: For tests of resuming: a file path; while the file exists and names shard ``N``, the first encoder worker
#: that meets shard ``N`` deletes the file and fails, as a worker killed mid-job would.
FAIL_ONCE_ENV = "NEGPLUGINS_RAY_FAIL_ONCE"
#: Texts per call to a worker, in batch sizes (as the encoders' groups).
CHUNK_BATCHES = GROUP_BATCHES


# -- the workers ---------------------------------------------------------------------------------------------

def _fail_once(part: int) -> None:
    flag = os.environ.get(FAIL_ONCE_ENV)
    if not flag:
        return
    try:
        if Path(flag).read_text(encoding="utf-8").strip() != str(part):
            return
        os.remove(flag)
    except OSError:  # no flag, or another worker took it
        return
    raise RuntimeError(f"simulated worker failure on shard {part} ({FAIL_ONCE_ENV})")


def _threads(num_cpus: int, device: str) -> None:
    if device == "cpu":
        import torch

        torch.set_num_threads(max(1, int(num_cpus)))


class _EncoderWorker:
    """Texts -> vectors; each input row is one group, encoded in one call to the model.

    With ``settings`` (``search dense``) the worker builds the single process's
    :class:`~negplugins.runners.encoders.DenseEncoder` with those settings (pooling, normalisation, token limit,
    prefix, backend, dtype; an ONNX export is taken from ``cache`` when it is there); without them (the
    bi-encoder reranker) the :class:`~negplugins.runners.encoders.SentenceEncoder` that reranker uses.
    """

    def __init__(self, ref: ModelRef, batch_size: int, max_length: int | None, num_cpus: int, device: str,
                 settings: dict | None = None, cache: str | None = None, calibration: list[str] | None = None):
        configure_offline()  # this worker process only
        _threads(num_cpus, device)
        if settings is not None:
            self.encoder = DenseEncoder(ref, role="passage", device=device, cache=cache, calibration=calibration,
                                        **settings)
        else:
            self.encoder = SentenceEncoder(ref, device=device)
            if max_length:
                self.encoder.model.max_seq_length = max_length
        self.batch_size = batch_size

    def __call__(self, batch):
        parts, positions, vectors = [], [], []
        for part, where, texts in zip(batch["part"].to_pylist(), batch["positions"].to_pylist(),
                                      batch["texts"].to_pylist()):
            _fail_once(part)
            vectors.append(self.encoder.encode(texts, batch_size=self.batch_size))
            parts.append(np.full(len(where), part, dtype=np.int64))
            positions.append(np.asarray(where, dtype=np.int64))
        return {"part": np.concatenate(parts), "pos": np.concatenate(positions), "vector": np.concatenate(vectors)}


class _ScorerWorker:
    """(first, second) pairs -> scores; each input row is one group, scored in one call to the scorer."""

    def __init__(self, make_scorer, num_cpus: int):
        configure_offline()
        _threads(num_cpus, "cpu")
        self.scorer = make_scorer()

    def __call__(self, batch):
        positions, scores = [], []
        for where, firsts, seconds in zip(batch["positions"].to_pylist(), batch["firsts"].to_pylist(),
                                          batch["seconds"].to_pylist()):
            scores.append(np.asarray(self.scorer.score(list(zip(firsts, seconds))), dtype=np.float64))
            positions.append(np.asarray(where, dtype=np.int64))
        return {"pos": np.concatenate(positions), "score": np.concatenate(scores)}


# -- reading a corpus's groups on this machine -----------------------------------------------------------------

@dataclass(frozen=True)
class Corpus:
    """A corpus's document ids in ``docs_iter`` order (the order of the index) and their texts' lengths."""

    ids: list[str]
    lengths: list[int]


def corpus(dataset, dataset_id: str) -> Corpus:
    """Read a corpus's ids and text lengths (one pass; the texts are read again by the workers' groups).

    Its docstore is built first: the read tasks look their groups' documents up in it by id.

    Raises
    ------
    UserError
        A document id occurs twice (a lookup by id could not tell the two documents apart).
    """
    store = dataset.docs_store()
    if not store.built():
        store.build()
    ids, lengths = [], []
    for doc in dataset.docs_iter():
        ids.append(doc.doc_id)
        lengths.append(len(datasets.document_text(doc)))
    if len(set(ids)) != len(ids):
        seen = set()
        twice = next(i for i in ids if i in seen or seen.add(i))
        raise UserError(f"{dataset_id}: document id {twice!r} occurs more than once; --engine ray looks documents up "
                        f"by id, so use --engine single")
    return Corpus(ids, lengths)


def shard_groups(lengths: list[int], start: int, end: int, batch_size: int) -> list[list[int]]:
    """A shard's documents (positions in the shard) in the groups ``negplugins.runners.dense`` encodes them in
    (:func:`negplugins.runners.encoding_pipeline.length_groups`)."""
    return length_groups(lengths[start:end], batch_size)


def _ids_sha256(ids) -> str:
    return hashlib.sha256("".join(f"{i}\n" for i in ids).encode("utf-8")).hexdigest()


def _dataset_environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key.startswith("IR_DATASETS")}


def _read_group(dataset_id: str, environment: dict, part: int, positions: list[int], ids: list[str],
                lengths: list[int]):
    """The read task of one group: its documents' texts, looked up in the docstore, as one block of one row."""
    import pyarrow as pa

    for key in [key for key in os.environ if key.startswith("IR_DATASETS") and key not in environment]:
        del os.environ[key]
    os.environ.update(environment)  # this worker reads the dataset as the command's process does
    found = datasets.load(dataset_id).docs_store().get_many(ids)
    texts = [datasets.document_text(found[doc_id]) if doc_id in found else None for doc_id in ids]
    if any(text is None or len(text) != length for text, length in zip(texts, lengths)):
        raise UserError(f"{dataset_id}: its documents changed while they were being encoded; run the command again")
    yield pa.table({"part": pa.array([part], pa.int64()), "positions": pa.array([positions], pa.list_(pa.int64())),
                    "texts": pa.array([texts], pa.list_(pa.string()))})


def _group_source(dataset_id: str, groups: list[tuple[int, list[int], list[str], list[int]]]):
    """A Ray Data source of one read task per group ``(shard, positions in the shard, doc ids, text lengths)``."""
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    environment = _dataset_environment()

    class GroupSource(Datasource):
        def estimate_inmemory_data_size(self):
            return sum(sum(lengths) for _, _, _, lengths in groups)

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            return [ReadTask(lambda group=group: _read_group(dataset_id, environment, *group),
                             BlockMetadata(num_rows=1, size_bytes=sum(group[3]), input_files=None, exec_stats=None))
                    for group in groups]

    return GroupSource()


# -- running a job --------------------------------------------------------------------------------------------

def _iterate(ray, build, step: str, what: str) -> Iterator[dict]:
    """The output batches of the pipeline ``build()`` makes; a failure becomes a one-line :class:`UserError` (or
    :class:`RayJobError`: ``step`` failed, why, and ``what`` was kept).

    Only this frame holds the Ray dataset, and it lets go of it before raising: a dataset that failed keeps its
    workers (and their CPUs and GPUs) for as long as it is referenced, by this frame or by the reference cycles
    of Ray's exception (collected here at once rather than at some later garbage collection), and the next job
    in this process would wait for them. This machine's raylet dying stops the job too
    (:class:`~negplugins.runners.ray_failures.RayletWatch`), before Ray ends the process on its own.
    """
    dataset = build()
    failure = None
    with RayletWatch(ray) as watch:
        try:
            batches = iter(dataset.iter_batches(batch_size=None, batch_format="numpy"))
            while True:
                with watch.inside():
                    batch = next(batches, None)
                if batch is None:
                    break
                yield batch
        except KeyboardInterrupt:
            if not watch.died or stop_signal():  # Ctrl-C
                raise
            end_without_teardown()  # Ray's exit handler would wait for the raylet, and its core worker end the process
            failure = RayJobError(f"{step} failed: the Ray raylet of this machine died (process {watch.pid}); {what}")
        except Exception as error:  # noqa: BLE001 - whatever failed in the cluster, reported as one line
            failure = _job_failure(error, step, what)
    batches = dataset = None
    if failure is not None:
        gc.collect()
        raise failure  # not chained to Ray's exception, whose traceback holds the dataset too


def _job_failure(error: Exception, step: str, what: str) -> UserError:
    """The one-line error of a Ray job that raised ``error``: bad input met by a worker, Ray's own failure, or any
    other error of the job."""
    if isinstance(error, UserError) and not isinstance(error, RayJobError):
        return error
    happened = ray_failure(error)
    if happened is not None:
        return RayJobError(f"{step} failed: {happened}; {what}", detail=error)
    raised = worker_error(error)
    if raised is not None and raised[0] in user_error_names():  # bad input met by a worker (a model file)
        return UserError(raised[1])
    name, message = raised or (type(error).__name__, error_line(error))
    return RayJobError(f"the Ray job failed ({name}: {message}); {what}", detail=error)


def encode_shards(engine, dataset_id: str, ref: ModelRef, shards: dict[int, tuple[int, int]], corpus: Corpus,
                  dimension: int, batch_size: int, settings: dict, cache: str | os.PathLike | None = None,
                  calibration: list[str] | None = None, progress: bool = True,
                  desc: str = "encoding") -> Iterator[tuple[int, np.ndarray]]:
    """Encode shards of a corpus on Ray; yields ``(shard, vectors)`` as each shard completes (in any order).

    Parameters
    ----------
    engine : RayEngine or "ray"
        Where to run.
    dataset_id : str
        The dataset whose documents are encoded (read on this machine, from its docstore).
    ref : ModelRef
        The sentence encoder (its folder must exist on every node).
    shards : dict
        ``{shard: (start, end)}``: positions of each shard's documents in ``docs_iter`` order.
    corpus : Corpus
        The corpus's ids and text lengths (:func:`corpus`).
    dimension : int
        Of the vectors.
    batch_size : int
        Texts per forward pass; a worker encodes the groups of :func:`shard_groups`, as the single process.
    settings : dict
        The passage encoder's settings (``DenseEncoder.settings``: pooling, normalisation, token limit, prefix,
        backend, dtype); every worker builds that encoder.
    cache : path, optional
        The folder of ONNX exports (``onnx`` and ``openvino`` backends), shared by the workers of one machine.
    calibration : list of str, optional
        OpenVINO int8's calibration texts (``DenseEncoder``'s ``calibration``), the single process's.
    progress : bool
        A tqdm progress bar over the documents.
    desc : str
        Its label.

    Yields
    ------
    tuple
        ``(shard, float32 array of shape (end - start, dimension))``, rows in document order.
    """
    engine = engine_of(engine)
    vectors = {part: np.zeros((end - start, dimension), dtype=np.float32) for part, (start, end) in shards.items()}
    filled = {part: np.zeros(end - start, dtype=bool) for part, (start, end) in shards.items()}
    for part in [part for part, (start, end) in shards.items() if end == start]:
        vectors.pop(part), filled.pop(part)
        yield part, np.zeros((0, dimension), dtype=np.float32)
    if not vectors:
        return
    from ..options import progress_bar

    groups = []
    for part in sorted(vectors):
        start, end = shards[part]
        for positions in shard_groups(corpus.lengths, start, end, batch_size):
            groups.append((part, positions, [corpus.ids[start + i] for i in positions],
                           [corpus.lengths[start + i] for i in positions]))
    with session(engine) as ray:
        plan = worker_plan(ray, engine, groups=len(groups))
        node = ray.get_runtime_context().get_node_id()
        source = _group_source(dataset_id, groups)
        constructor = {"ref": ref, "batch_size": batch_size, "max_length": None,  # the settings hold it
                       "device": plan.device, "settings": dict(settings),
                       "cache": None if cache is None else str(Path(cache).resolve()), "calibration": calibration}

        def build():
            # the read tasks run here, where the dataset is, take no CPU from the workers, and run a few at a time
            data = ray.data.read_datasource(source, override_num_blocks=len(groups), num_cpus=0,
                                            concurrency=min(len(groups), 2 * plan.workers),
                                            label_selector={"ray.io/node-id": node})
            return _map(ray, plan, data, _EncoderWorker, constructor)

        total = sum(len(done) for done in filled.values())
        with progress_bar(total, f"{desc} on Ray ({plan.workers} worker{'s' if plan.workers > 1 else ''})",
                          progress) as bar:
            for batch in _iterate(ray, build, f"encoding {dataset_id} on Ray",
                                  "the shards finished so far are kept: run the same command again to resume"):
                for part in np.unique(batch["part"]):
                    part = int(part)
                    rows = batch["part"] == part
                    where = batch["pos"][rows]
                    new = ~filled[part][where]
                    vectors[part][where] = batch["vector"][rows]
                    filled[part][where] = True
                    bar.update(int(new.sum()))
                    if filled[part].all():
                        filled.pop(part)
                        yield part, vectors.pop(part)
    if vectors:
        raise RayJobError(f"the Ray job ended without encoding shard(s) {', '.join(map(str, sorted(vectors)))}; "
                          f"run the same command again to resume")


def _map(ray, plan: WorkerPlan, data, worker, constructor: dict):
    """``data`` through an actor pool of ``worker``s, one group (input row) per call."""
    # Ray Data's defaults: a lost worker is restarted and its groups retried; an error raised by the model code
    # fails the job (and the command resumes from the finished shards)
    return data.map_batches(worker, batch_size=1, batch_format="pyarrow",
                            fn_constructor_kwargs=dict(constructor, num_cpus=plan.num_cpus),
                            compute=ray.data.ActorPoolStrategy(size=plan.workers), num_cpus=plan.num_cpus,
                            num_gpus=plan.num_gpus)


def _run_groups(engine, rows: list[dict], worker, constructor: dict, gpus: bool, step: str,
                what: str) -> Iterator[dict]:
    with session(engine) as ray:
        plan = worker_plan(ray, engine, gpus=gpus, groups=len(rows))
        if worker is _EncoderWorker:
            constructor = dict(constructor, device=plan.device)

        def build():
            data = ray.data.from_items(rows, override_num_blocks=max(1, len(rows)))
            return _map(ray, plan, data, worker, constructor)

        yield from _iterate(ray, build, step, what)


def pair_groups(pairs: list[tuple[str, str]], batch_size: int) -> list[list[int]]:
    """Pair positions in the scoring order of :mod:`negplugins.runners.rerank`'s cross-encoder and monoT5 scorers
    (longest pair first, then input order), cut into groups of ``16 x batch_size`` (whole batches)."""
    order = sorted(range(len(pairs)), key=lambda i: (-(len(pairs[i][0]) + len(pairs[i][1])), i))
    chunk = max(1, batch_size * CHUNK_BATCHES)
    return [order[start:start + chunk] for start in range(0, len(order), chunk)]


def score_pairs(engine, make_scorer, pairs: list[tuple[str, str]], batch_size: int) -> list[float]:
    """Score ``(query, document)`` pairs with scorers built by ``make_scorer()`` on Ray workers (CPU).

    ``make_scorer`` is a picklable callable returning an object with ``score(pairs) -> floats`` (a reranker of
    :mod:`negplugins.runners.rerank`). Each worker scores whole groups of :func:`pair_groups`, so its batches are
    those of the single-process scorer.
    """
    engine = engine_of(engine)
    if not pairs:
        return []
    rows = [{"positions": group, "firsts": [pairs[i][0] for i in group], "seconds": [pairs[i][1] for i in group]}
            for group in pair_groups(pairs, batch_size)]
    scores = np.full(len(pairs), np.nan)
    for batch in _run_groups(engine, rows, _ScorerWorker, {"make_scorer": make_scorer}, gpus=False,
                             step="scoring the pairs on Ray",
                             what="nothing was written"):
        scores[batch["pos"]] = batch["score"]
    if np.isnan(scores).any():
        raise RayJobError("the Ray job ended without scoring every pair; nothing was written")
    return [float(score) for score in scores]


def bi_encoder_scores(engine, ref: ModelRef, pairs: list[tuple[str, str]], batch_size: int,
                      max_length: int | None = None, known: dict | None = None) -> list[float]:
    """The bi-encoder reranker's scores (:class:`negplugins.runners.rerank.BiEncoderScorer`) with the encoding on Ray.

    As the single-process scorer: each distinct query and document text is encoded once (the queries in one
    call, the documents in another, each in sorted order), and a pair's score is the inner product of its
    two unit vectors; ``known`` maps document texts to vectors already computed (read from a dense index), which
    are not encoded. The workers encode the very batches those two calls make.
    """
    engine = engine_of(engine)
    if not pairs:
        return []
    known = known or {}
    queries = sorted({q for q, _ in pairs})
    docs = sorted({d for _, d in pairs if d not in known})
    texts = queries + docs
    groups = sentence_transformers_batches(queries, batch_size) + \
        [[len(queries) + i for i in group] for group in sentence_transformers_batches(docs, batch_size)]
    rows = [{"part": 0, "positions": group, "texts": [texts[i] for i in group]} for group in groups]
    vectors: np.ndarray | None = None
    done = np.zeros(len(texts), dtype=bool)
    constructor = {"ref": ref, "batch_size": batch_size, "max_length": max_length}
    for batch in _run_groups(engine, rows, _EncoderWorker, constructor, gpus=True,
                             step="encoding the bi-encoder's texts on Ray", what="nothing was written"):
        if vectors is None:
            vectors = np.zeros((len(texts), batch["vector"].shape[1]), dtype=np.float32)
        vectors[batch["pos"]] = batch["vector"]
        done[batch["pos"]] = True
    if vectors is None or not done.all():
        raise RayJobError("the Ray job ended without encoding every text; nothing was written")
    q_vectors = dict(zip(queries, vectors[:len(queries)]))
    d_vectors = {**known, **dict(zip(docs, vectors[len(queries):]))}
    return [float(np.dot(q_vectors[q], d_vectors[d])) for q, d in pairs]
